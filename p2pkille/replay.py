"""Replay a scripted game in the full-information view (the ``p2pkille replay`` format).

:func:`run_replay` takes the parsed JSON input and returns the output document;
any bad input raises :class:`ReplayError` and nothing else.

The formats are defined in ``docs/rules.md``, "The replay tool" (input, output, events);
``tests/test_replay_cases.py`` checks that the definition names every key, move and
event. In short:

Input: ``ruleset`` (default ``wikipedia``), ``options`` (single rule
options overridden by name, see :func:`p2pkille.engine.options.options_from_json`),
``seats`` (names, clockwise), ``stake``, ``chips``, ``dealer`` and ``hands``; each
hand has ``cards`` (seat -> rank id for every player in the hand), ``stock`` (rank
ids, top first, after any cut; only as many as the draws need), ``moves``
(``[seat, verb, ...]`` in the order the game asks: ``keep``, ``swap`` with an
optional pick 1-4, ``redeal``, ``agree``, ``refuse``, ``depends``,
``sell`` buyer price, ``accept``, ``reject``) and ``after`` (``[seat, "buyin"]`` or
``[seat, "decline"]``; unnamed seats with a choice decline). Targets' answers,
kille disclosures, stock cards and the showdown come from the cards; förhand's cut
is 0 because the stock is given as it lies after any cut.

Output: ``{"hands": [...], "winner": name or null}``; each hand has ``dealer``,
``died`` (seat order), ``held`` (the card of each seat dealt in, at the end),
``pot``, ``chips`` and ``in_game`` (after the ``after`` decisions), ``events``, and
``"redealt": true`` for a hand ended by an accepted redeal.

Events (JSON objects, in order; ``call`` is the traditional call where there is one):

- ``{"type": "deal", "seat": dealer, "forhand": seat, "hand": n}``
- ``{"type": "keep", "seat", "call": "Jag är nöjd!"}``
- ``{"type": "offer", "seat": requester, "target": seat}``
- ``{"type": "exchange", "seat": requester, "target": seat}`` (face down)
- ``{"type": "kille_moves", "seat": giver, "to": receiver, "card": "kille"}`` (face up)
- ``{"type": "pass", "seat": target or absent for the stock, "card": "kavall"|"vardshus",
  "call": "Kavall förbi!"|"Värdshus förbi!"}``
- ``{"type": "kuku", "seat": target (absent for the stock), "requester": seat, "card": "kuku",
  "call": "Kuku står, ingen byta får!" (wikipedia, enkortskille) | "Kuku behåll" (bytes-kille)}``
- ``{"type": "husar", "seat"?, "requester", "card": "husar", "call": "Husar hugger!"}``
- ``{"type": "svinhugg", "seat"?, "requester", "card": "husu", "call": "Svinhugg går igen!"}``
- ``{"type": "revert", "swaps": n}``: n swaps undone (svinhugg chain, enkortskille kuku)
- ``{"type": "died", "seat", "cause": "husar"|"husu"|"svinhugg"|"kille"|"showdown"}``
- ``{"type": "spared", "seat", "cause"}``: a death that would have left nobody alive
- ``{"type": "draw", "seat", "call": "Jag går i lek!"}``; ``{"type": "cut", "seat", "at": k}``
- ``{"type": "stock_card", "seat": drawer, "card", "position": 1-based}``;
  ``{"type": "take", "seat", "card"}``; ``{"type": "stock_empty", "seat"}``
- ``{"type": "redeal_asked", "seat", "call": "Bättre kort!"}``;
  ``{"type": "redeal_vote", "seat", "asker", "cause": "agree"|"refuse"|"depends"}``
  (``"call": "Det beror på."`` for depends); ``{"type": "redeal_refused", "seat"}``;
  ``{"type": "redeal", "seat": dealer}``
- ``{"type": "sell", "seat", "buyer", "price"}``; ``{"type": "sale_accepted", ...}``;
  ``{"type": "sale_rejected", "seat", "buyer"}``
- ``{"type": "showdown", "cards": {seat: card}, "call": "På rygg!" | "Upp till bevis!"}``
- ``{"type": "buyin", "seat", "price"}``; ``{"type": "decline", "seat"}``
- ``{"type": "winner", "seat", "pot"}``
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from p2pkille.engine.cards import COPIES, DECK_SIZE, RANKS, Rank
from p2pkille.engine.errors import EngineError, InvalidCardError
from p2pkille.engine.facts import (
    AskRedeal,
    BuyIn,
    Cut,
    Deal,
    Decline,
    Fact,
    Keep,
    SaleAnswer,
    Sell,
    Swap,
    Vote,
    VoteChoice,
)
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import options_from_json
from p2pkille.engine.referee import UNKNOWN, FaceUnknown, oracle_fact

_TOP_KEYS: Final = {"ruleset", "options", "seats", "stake", "chips", "dealer", "hands"}
_HAND_KEYS: Final = {"cards", "stock", "moves", "after"}
_ORACLE: Final = {int(Phase.ANSWER), int(Phase.DISCLOSE), int(Phase.STOCK), int(Phase.SHOWDOWN)}
_DECIDING: Final = {
    int(Phase.TURN): "keep, swap, redeal or sell",
    int(Phase.VOTE): "answer the redeal request (agree, refuse or depends)",
    int(Phase.SALE): "accept or reject the card sale",
}
_VOTES: Final = {"agree": VoteChoice.AGREE, "refuse": VoteChoice.REFUSE,
                 "depends": VoteChoice.DEPENDS}


class ReplayError(Exception):
    """Bad replay input. ``hand`` and ``move`` are 1-based, ``None`` where they do not apply;
    ``str(err)`` is ``"hand 2, move 3: <message>"``, ``"hand 2: <message>"`` or the message."""

    hand: int | None
    move: int | None
    message: str

    def __init__(self, message: str, *, hand: int | None = None, move: int | None = None) -> None:
        self.hand = hand
        self.move = move
        self.message = message
        if hand is None:
            text = message
        elif move is None:
            text = f"hand {hand}: {message}"
        else:
            text = f"hand {hand}, move {move}: {message}"
        super().__init__(text)


def _is_int(value: object) -> bool:
    return type(value) is int


def _fail(message: str, hand: int | None = None, move: int | None = None) -> ReplayError:
    return ReplayError(message, hand=hand, move=move)


def _setup(doc: object) -> Game:
    if not isinstance(doc, dict):
        raise _fail(f"the input must be a JSON object, got {type(doc).__name__}")
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise _fail(f"unknown key(s) {unknown}: expected {sorted(_TOP_KEYS)}")
    for key in ("seats", "stake", "chips", "dealer", "hands"):
        if key not in doc:
            raise _fail(f"missing {key!r}")
    try:
        options = options_from_json(doc.get("ruleset", "wikipedia"), doc.get("options"))
    except EngineError as exc:
        raise _fail(str(exc)) from None
    seats = doc["seats"]
    if not isinstance(seats, list) or not all(isinstance(s, str) and s for s in seats):
        raise _fail("seats must be a list of non-empty seat names")
    if len(set(seats)) != len(seats):
        raise _fail(f"seat names must be distinct: {seats}")
    stake, chips, dealer = doc["stake"], doc["chips"], doc["dealer"]
    if not _is_int(stake) or stake < 1:
        raise _fail(f"stake must be a whole number >= 1, got {stake!r}")
    if not _is_int(chips) or chips < stake:
        raise _fail(f"chips must be a whole number >= the stake ({stake}), got {chips!r}")
    if not isinstance(dealer, str) or dealer not in seats:
        raise _fail(f"dealer {dealer!r} is not one of the seats")
    if not isinstance(doc["hands"], list):
        raise _fail("hands must be a list")
    try:
        return Game(options, seats, stake=stake, chips=chips, dealer=seats.index(dealer),
                    record_events=True)
    except EngineError as exc:
        raise _fail(str(exc)) from None


def _rank(text: object, where: str, hand: int) -> Rank:
    if not isinstance(text, str):
        raise _fail(f"{where}: a card must be a rank id string, got {text!r}", hand)
    try:
        return Rank.from_id(text)
    except InvalidCardError as exc:
        raise _fail(f"{where}: {exc}", hand) from None


def _deck(game: Game, hand: dict[str, object], number: int) -> list[int]:
    """Faces of the hand's tokens: dealt cards in turn order, then the listed stock."""
    names = game.names
    cards = hand.get("cards")
    if not isinstance(cards, dict):
        raise _fail("cards must be an object mapping seats to cards", number)
    for name in cards:
        if name not in names:
            raise _fail(f"cards: {name!r} is not a seat", number)
        if names.index(name) not in game.order:
            raise _fail(f"cards: {name} is out of the game and gets no card", number)
    stock = hand.get("stock", [])
    if not isinstance(stock, list):
        raise _fail("stock must be a list of cards", number)
    dealt = [names[seat] for seat in game.order]
    for name in dealt:
        if name not in cards:
            raise _fail(f"cards: {name} has no card", number)
    room = DECK_SIZE - len(dealt)
    if len(stock) > room:
        raise _fail(f"stock lists {len(stock)} cards but only {room} remain after the deal",
                    number)
    ranks = [_rank(cards[name], f"card of {name}", number) for name in dealt]
    ranks += [_rank(card, f"stock card {i + 1}", number) for i, card in enumerate(stock)]
    used = [0] * len(RANKS)
    faces = [UNKNOWN] * DECK_SIZE
    for token, rank in enumerate(ranks):
        if used[rank] == COPIES:
            raise _fail(f"a third {rank.id}: the deck has only two of each card", number)
        faces[token] = rank * COPIES + used[rank]
        used[rank] += 1
    return faces


def _moves(hand: dict[str, object], key: str, number: int) -> list[list[object]]:
    raw = hand.get(key, [])
    if not isinstance(raw, list):
        raise _fail(f"{key} must be a list", number)
    for i, move in enumerate(raw):
        if not (isinstance(move, list) and len(move) >= 2 and isinstance(move[0], str)
                and isinstance(move[1], str)):
            if key == "moves":
                raise _fail(f"a move must be [seat, decision, ...], got {move!r}", number, i + 1)
            raise _fail(f"after entry {i + 1} must be [seat, decision], got {move!r}", number)
    return raw


# One branch per move verb, each with its own error message.
def _decision(game: Game, move: list[object], number: int,  # noqa: PLR0911, PLR0912
              index: int) -> Fact:
    names = game.names
    name, verb, args = move[0], move[1], move[2:]
    assert isinstance(name, str)
    assert isinstance(verb, str)
    expected = game.expect_seat
    want = _DECIDING[game.phase]
    who = names[expected] if expected is not None else "nobody"
    if name not in names:
        raise _fail(f"unknown seat {name!r}; {who} was expected to {want}", number, index)
    seat = names.index(name)
    if seat != expected:
        raise _fail(f"move out of turn: {name} moved but {who} was expected to {want}",
                    number, index)
    phase = game.phase
    bad_args = _fail(f"{name}: bad arguments for {verb!r}: {args!r}", number, index)
    if phase == Phase.TURN:
        if verb == "keep" and not args:
            return Keep(seat)
        if verb == "swap":
            if not args:
                return Swap(seat)
            if len(args) == 1 and _is_int(args[0]):
                pick = args[0]
                assert isinstance(pick, int)
                if game.options.max_pick == 1:
                    raise _fail(f"{name}: this ruleset has no picking, the drawer takes the top "
                                "card", number, index)
                if not 1 <= pick <= game.options.max_pick:
                    raise _fail(f"{name}: pick must be 1..{game.options.max_pick}, got {pick}",
                                number, index)
                return Swap(seat, pick)
            raise bad_args
        if verb == "redeal" and not args:
            return AskRedeal(seat)
        if verb == "sell":
            if len(args) != 2 or not isinstance(args[0], str) or not _is_int(args[1]):
                raise bad_args
            buyer, price = args
            assert isinstance(price, int)
            if buyer not in names:
                raise _fail(f"{name}: unknown buyer {buyer!r}", number, index)
            if price < 0:
                raise _fail(f"{name}: a price cannot be negative", number, index)
            return Sell(seat, names.index(buyer), price)
    elif phase == Phase.VOTE:
        if verb in _VOTES and not args:
            return Vote(seat, _VOTES[verb])
    elif phase == Phase.SALE and verb in ("accept", "reject") and not args:
        return SaleAnswer(seat, verb == "accept")
    if args and verb in ("keep", "redeal", "agree", "refuse", "depends", "accept", "reject"):
        raise bad_args
    raise _fail(f"{name} cannot {verb!r} now: {who} was expected to {want}", number, index)


# The hand file's shape checks, then one branch per phase kind.
def _play_hand(game: Game, hand: object, number: int) -> dict[str, object]:  # noqa: PLR0912
    if not isinstance(hand, dict):
        raise _fail("a hand must be a JSON object", number)
    unknown = sorted(set(hand) - _HAND_KEYS)
    if unknown:
        raise _fail(f"unknown key(s) {unknown}: expected {sorted(_HAND_KEYS)}", number)
    if "moves" not in hand or "cards" not in hand:
        raise _fail("a hand needs 'cards' and 'moves'", number)
    moves = _moves(hand, "moves", number)
    after = _moves(hand, "after", number)
    events = game.events
    assert events is not None
    first_event = len(events)
    game.apply(Deal())
    faces = _deck(game, hand, number)
    names = game.names
    index = 0
    while game.phase not in (Phase.AFTER, Phase.DEAL, Phase.OVER):
        phase = game.phase
        fact: Fact
        if phase in _ORACLE:
            try:
                fact = oracle_fact(game, faces)
            except FaceUnknown as exc:
                raise _fail(f"{exc}", number, index or None) from None
        elif phase == Phase.CUT:
            # The stock is given as it lies after any cut.
            fact = Cut(game.order[0], 0)
        else:
            if index >= len(moves):
                seat = game.expect_seat
                who = names[seat] if seat is not None else "nobody"
                raise _fail(f"moves missing: {who} was expected to {_DECIDING[phase]}",
                            number, index + 1)
            fact = _decision(game, moves[index], number, index + 1)
            index += 1
        try:
            game.apply(fact)
        except EngineError as exc:
            raise _fail(str(exc), number, index or None) from None
    if index < len(moves):
        extra = moves[index]
        raise _fail(f"move left over: {extra!r} comes after the hand has ended", number,
                    index + 1)
    result = game.result
    assert result is not None
    if result.redealt and after:
        raise _fail("after: a redealt hand has no buy-ins", number)
    _settle(game, after, number)
    held = {names[seat]: RANKS[faces[token] >> 1].id
            for seat, token in sorted(zip(result.dealt, result.held, strict=True))}
    out: dict[str, object] = {
        "dealer": names[result.dealer],
        "died": [names[seat] for seat in result.died],
        "held": held,
        "pot": game.pot,
        "chips": {names[seat]: chips for seat, chips in enumerate(game.chips)},
        "in_game": [names[seat] for seat in range(len(names)) if game.in_game[seat]],
        "events": [event.to_json(names) for event in events[first_event:]],
    }
    if result.redealt:
        out["redealt"] = True
    return out


def _settle(game: Game, after: Sequence[list[object]], number: int) -> None:
    names = game.names
    wanted: dict[int, str] = {}
    for entry in after:
        name, verb = entry[0], entry[1]
        assert isinstance(name, str)
        if name not in names:
            raise _fail(f"after: unknown seat {name!r}", number)
        if verb not in ("buyin", "decline") or len(entry) != 2:
            raise _fail(f"after: {name}: expected 'buyin' or 'decline', got {entry[1:]!r}",
                        number)
        seat = names.index(name)
        if seat in wanted:
            raise _fail(f"after: {name} is named twice", number)
        wanted[seat] = str(verb)
    while game.phase == Phase.AFTER:
        asked = game.expect_seat
        assert asked is not None
        verb = wanted.pop(asked, "decline")
        try:
            game.apply(BuyIn(asked) if verb == "buyin" else Decline(asked))
        except EngineError as exc:
            raise _fail(f"after: {names[asked]} cannot buy in: {exc}", number) from None
    if wanted:
        seat = min(wanted)
        raise _fail(f"after: {names[seat]} has no buy-in choice after this hand", number)


def run_replay(doc: object) -> dict[str, object]:
    """doc: the parsed JSON replay input. Returns the output document; raises
    :class:`ReplayError` (and nothing else) for any bad input."""
    game = _setup(doc)
    assert isinstance(doc, dict)
    hands_out: list[dict[str, object]] = []
    for number, hand in enumerate(doc["hands"], start=1):
        if game.over:
            winner = game.names[game.winner] if game.winner is not None else "?"
            raise _fail(f"hand listed after the game has ended ({winner} won)", number)
        hands_out.append(_play_hand(game, hand, number))
    return {
        "hands": hands_out,
        "winner": None if game.winner is None else game.names[game.winner],
    }
