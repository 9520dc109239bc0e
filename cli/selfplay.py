"""``p2pkille selfplay``: bots play a whole game with every card known, narrated.

Each hand is told in plain text: who deals, the cards dealt, every decision and
answer with its traditional call and a short English gloss, the draws, the
showdown faces, who died and why, the pot and chips, the buy-backs; then the
winner. ``--json`` prints one document instead::

    {"ruleset": ..., "seats": [{"name", "bot"}], "stake", "chips",
     "hands": [{"number", "dealer", "forhand", "cards", "died", "pot", "chips",
                "in_game", "events", "redealt"?}],
     "winner": name or null, "hands_played": n}

``events`` use the replay tool's event objects (``p2pkille/replay.py``). Bad
arguments exit with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from typing import Final

from cli.args import BadArgs as _BadArgs
from cli.args import whole_number
from p2pkille.bots.tableaware import STRATEGIES, make_bot
from p2pkille.engine.cards import Rank
from p2pkille.engine.events import Event
from p2pkille.engine.machine import Game, Phase
from p2pkille.engine.options import (
    PRESETS,
    HusuEffect,
    KukuEffect,
    RuleOptions,
    StockKuku,
    StockPass,
    SwappedKille,
)
from p2pkille.engine.referee import Referee

BAD_ARGS: Final = 2
DEFAULT_BOTS: Final = "tableaware,threshold"

NAMES: Final = (
    "Anna", "Björn", "Cecilia", "David", "Eva", "Fredrik", "Greta", "Hugo", "Ingrid",
    "Johan", "Karin", "Lars", "Maja", "Nils", "Olle", "Pia", "Rut", "Sven", "Tove", "Ulf",
)

_CAUSES: Final = {
    "husar": "the husar hews",
    "husu": "the husu (Gris) kills the requester",
    "svinhugg": "the svinhugg falls on the chain's first player",
    "kille": "got the kille by a swap",
    "showdown": "lowest card at the showdown",
}


#: The traditional calls in English.
ENGLISH: Final = {
    "Jag är nöjd!": "I'm content!",
    "Jag går i lek!": "I go to the pack!",
    "Husar hugger!": "The hussar strikes!",
    "Svinhugg går igen!": "The pig's blow comes back!",
    "Kavall förbi!": "Cavalier, pass by!",
    "Värdshus förbi!": "Inn, pass by!",
    "Kuku står, ingen byta får!": "Cuckoo stands, nobody may swap!",
    "Kuku behåll": "Cuckoo, keep!",
    "På rygg!": "On your backs!",
    "Upp till bevis!": "Prove it!",
    "Bättre kort!": "Better cards!",
    "Det beror på.": "It depends.",
}


def _said(call: str | None) -> str:
    """A call with its English, ready to be followed by what it does."""
    if not call:
        return ""
    english = ENGLISH.get(call)
    return f"«{call}» ({english}) - " if english else f"«{call}» - "


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "selfplay",
        help="bots play a whole game; every hand narrated (or --json)",
        description=(
            "Bots play a whole Byteskille game in the full-information view. Prints each "
            "hand narrated in plain text, then the winner; --json prints one document. "
            "Exit status 2 and one line on stderr for bad arguments."
        ),
    )
    # Numbers are read as text and checked here, so a bad value gives one clear line.
    parser.add_argument("--seats", default="5", help="number of players (default 5)")
    parser.add_argument("--ruleset", default="wikipedia",
                        help=f"one of {', '.join(PRESETS)} (default wikipedia)")
    parser.add_argument("--seed", default="1", help="seed of the deal (default 1)")
    parser.add_argument("--stake", default="10", help="base stake (default 10)")
    parser.add_argument("--chips", default="100", help="starting chips per seat (default 100)")
    parser.add_argument(
        "--bots", default=DEFAULT_BOTS,
        help=f"strategies, comma-separated, repeated round the table ({', '.join(STRATEGIES)}; "
             f"default {DEFAULT_BOTS})",
    )
    parser.add_argument("--max-hands", default="500", help="stop after this many hands")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(func=run)


def seat_names(n: int) -> list[str]:
    """Pleasant distinct names for ``n`` seats."""
    return [NAMES[i] if i < len(NAMES) else f"Spelare {i + 1}" for i in range(n)]


class _Setup:
    __slots__ = ("bots", "chips", "json", "max_hands", "options", "ruleset", "seats", "seed",
                 "stake")

    def __init__(self, args: argparse.Namespace) -> None:
        ruleset = str(args.ruleset)
        if ruleset not in PRESETS:
            raise _BadArgs(f"unknown ruleset {ruleset!r}: expected one of {', '.join(PRESETS)}")
        self.ruleset = ruleset
        self.options: RuleOptions = PRESETS[ruleset]
        seats = whole_number("seats", args.seats, 1)
        low, high = self.options.min_players, self.options.max_players
        if not low <= seats <= high:
            raise _BadArgs(f"--seats {seats}: {ruleset} plays with {low}..{high} players")
        self.seats = seats
        self.seed = whole_number("seed", args.seed, 0)
        self.stake = whole_number("stake", args.stake, 1)
        self.chips = whole_number("chips", args.chips, 1)
        if self.chips < self.stake:
            raise _BadArgs(f"--chips {self.chips} must cover the stake {self.stake}")
        self.max_hands = whole_number("max-hands", args.max_hands, 1)
        bots = [name.strip() for name in str(args.bots).split(",")]
        for name in bots:
            if name not in STRATEGIES:
                raise _BadArgs(f"unknown bot {name!r}: expected one of {', '.join(STRATEGIES)}")
        self.bots = [bots[i % len(bots)] for i in range(seats)]
        self.json = bool(args.json)


def run(args: argparse.Namespace) -> int:
    try:
        setup = _Setup(args)
    except _BadArgs as exc:
        print(exc, file=sys.stderr)
        return BAD_ARGS
    doc, lines = play(setup)
    out = json.dumps(doc, indent=2, ensure_ascii=False) if setup.json else "\n".join(lines)
    try:
        print(out)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep the interpreter's
        # final flush from raising again on the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0


def play(setup: _Setup) -> tuple[dict[str, object], list[str]]:
    """Play the game; the JSON document and the narration."""
    rng = random.Random(setup.seed)
    names = seat_names(setup.seats)
    game = Game(setup.options, names, stake=setup.stake, chips=setup.chips,
                dealer=rng.randrange(setup.seats), record_events=True)
    bots = [make_bot(name, rng) for name in setup.bots]
    referee = Referee(game, bots, rng)
    teller = _Teller(game, referee, setup)
    lines = teller.intro()
    hands: list[dict[str, object]] = []
    while not game.over and game.hand_no < setup.max_hands:
        hands.append(teller.hand(lines))
    lines.append("")
    if game.winner is not None:
        lines.append(f"{names[game.winner]} ({setup.bots[game.winner]}) wins the game with "
                     f"{game.chips[game.winner]} chips after {game.hand_no} hands.")
    else:
        lines.append(f"No winner after {game.hand_no} hands (--max-hands {setup.max_hands}); "
                     f"still in: {', '.join(n for s, n in enumerate(names) if game.in_game[s])}.")
    doc: dict[str, object] = {
        "ruleset": setup.ruleset,
        "seats": [{"name": n, "bot": b} for n, b in zip(names, setup.bots, strict=True)],
        "stake": setup.stake,
        "chips": setup.chips,
        "hands": hands,
        "winner": None if game.winner is None else names[game.winner],
        "hands_played": game.hand_no,
    }
    return doc, lines


class _Teller:
    """Plays hand by hand and tells what happens, with the faces the referee knows."""

    def __init__(self, game: Game, referee: Referee, setup: _Setup) -> None:
        self.game = game
        self.referee = referee
        self.setup = setup
        self.names = game.names

    def intro(self) -> list[str]:
        g, s = self.game, self.setup
        seats = ", ".join(f"{n} ({b})" for n, b in zip(self.names, s.bots, strict=True))
        return [
            f"Byteskille, ruleset {s.ruleset}, seed {s.seed}.",
            f"Seats, clockwise: {seats}.",
            f"Everyone starts with {s.chips} chips and pays the stake of {s.stake}: "
            f"the pot is {g.pot}.",
        ]

    def face(self, token: int) -> str:
        return self.referee.face_of(token).id

    def hand(self, lines: list[str]) -> dict[str, object]:
        g, ref = self.game, self.referee
        events = g.events
        assert events is not None
        first = len(events)
        ref.apply(ref.next_fact())  # the deal
        names = self.names
        cards = {names[g.order[p]]: self.face(g.hold[p]) for p in range(len(g.order))}
        lines.append("")
        seen = first
        while True:
            for event in events[seen:]:
                line = self.tell(event, cards)
                if line:
                    lines.append(line)
            seen = len(events)
            if g.phase in (int(Phase.DEAL), int(Phase.OVER)):
                break
            ref.apply(ref.next_fact())
        result = g.result
        assert result is not None
        chips = {names[s]: c for s, c in enumerate(g.chips)}
        if not result.redealt:
            died = ", ".join(names[s] for s in result.died) or "nobody"
            lines.append(f"  Died this hand: {died}. Pot {g.pot}. Chips: "
                         + ", ".join(f"{n} {c}" for n, c in chips.items()) + ".")
        out: dict[str, object] = {
            "number": result.number,
            "dealer": names[result.dealer],
            "forhand": names[result.forhand],
            "cards": cards,
            "died": [names[s] for s in result.died],
            "pot": g.pot,
            "chips": chips,
            "in_game": [names[s] for s in range(len(names)) if g.in_game[s]],
            "events": [e.to_json(names) for e in events[first:seen]],
        }
        if result.redealt:
            out["redealt"] = True
        return out

    # One narrated line per event kind: a dispatch table.
    def tell(self, e: Event, cards: dict[str, str]) -> str:  # noqa: PLR0911, PLR0912, PLR0915
        g = self.game
        names = self.names
        who = names[e.seat] if e.seat is not None else "?"
        other = names[e.other] if e.other is not None else "?"
        card = e.rank.id if e.rank is not None else "?"
        call = _said(e.call)
        kind = e.kind
        if kind == "deal":
            dealt = ", ".join(f"{n} {c}" for n, c in cards.items())
            return (f"Hand {e.amount}: {who} deals, {other} is förhand. Pot {g.pot}.\n"
                    f"  Cards: {dealt}.")
        if kind == "keep":
            return f"  {who}: {call}keeps the card."
        if kind == "offer":
            return f"  {who} offers a swap to {other}."
        if kind == "exchange":
            # Told right after the answer: the requester now holds the target's old card.
            gave, got = self.face(g.hold[g.tgt]), self.face(g.hold[g.req])
            return f"  {who} and {other} exchange face down ({who}'s {gave} for {other}'s {got})."
        if kind == "kille_moves":
            return f"  The kille goes face up from {who} to {other}."
        if kind == "pass":
            if e.seat is None:
                return f"  The stock's {card}: {call}the next stock card is turned up."
            return f"  {who} shows the {card}: {call}the offer passes on."
        if kind == "kuku":
            whose = f"{who} shows the kuku" if e.seat is not None else "The stock shows the kuku"
            undo = ("every swap of the hand is undone" if g.options.kuku is KukuEffect.REVERT_ALL
                    else "no swap, and the swapping is over")
            return f"  {whose}: {call}{undo}."
        if kind == "husar":
            whose = f"{who} shows the husar" if e.seat is not None else "The stock's husar"
            return f"  {whose}: {call}it hews {other}."
        if kind == "svinhugg":
            whose = f"{who} shows the husu" if e.seat is not None else "The stock's husu"
            if g.options.husu is HusuEffect.KILL_REQUESTER:
                return f"  {whose}: {call}the pig kills {other}."
            return (f"  {whose}: {call}the pig strikes back along the swaps that carried "
                    f"{other}'s card.")
        if kind == "revert":
            n = e.amount or 0
            return f"  {n} swap{'s' if n != 1 else ''} undone." if n else ""
        if kind == "died":
            return f"  {who} dies: {_CAUSES.get(e.cause or '', e.cause or '')}."
        if kind == "spared":
            return f"  {who} is spared: a death may not leave the hand without a live player."
        if kind == "draw":
            return f"  {who}: {call}goes to the stock."
        if kind == "cut":
            return (f"  {who} cuts the stock at {e.amount}." if e.amount
                    else f"  {who} does not cut the stock.")
        if kind == "stock_card":
            opts = g.options
            rank = e.rank
            no_exchange = (
                (rank in (Rank.KAVALL, Rank.VARDSHUS) and opts.stock_pass is StockPass.NO_EXCHANGE)
                or (rank is Rank.KUKU and opts.stock_kuku is StockKuku.NO_EXCHANGE)
            )
            gloss = f" (no exchange: {who} keeps the card)" if no_exchange else ""
            return f"  {who} turns up stock card {e.amount}: {card}{gloss}."
        if kind == "take":
            return f"  {who} takes the {card}" + (
                " (a kille from the stock is the highest card)." if e.rank is not None
                and e.rank.id == "kille" else ".")
        if kind == "stock_empty":
            return f"  The stock has run out: {who} keeps the card."
        if kind == "redeal_asked":
            return f"  {who}: {call}asks for a redeal."
        if kind == "redeal_vote":
            if e.cause == "depends":
                return f"  {who}: {call}it depends: the third player decides."
            verb = "agrees to" if e.cause == "agree" else "refuses"
            return f"  {who} {verb} the redeal."
        if kind == "redeal_refused":
            return f"  The redeal is refused; {who} plays on."
        if kind == "redeal":
            return f"  Everyone agrees: {who} deals again, nobody dies, no chips move."
        if kind == "sell":
            return f"  {who} offers the card to {other} for {e.amount} chips."
        if kind == "sale_accepted":
            return f"  {other} buys {who}'s card for {e.amount} chips; {who} leaves the game."
        if kind == "sale_rejected":
            return f"  {other} does not buy {who}'s card."
        if kind == "showdown":
            faces = ", ".join(
                f"{names[s]} {r.id}" + (" (swapped: lowest)" if r.id == "kille"
                                        and self._swapped_kille(s) else "")
                for s, r in zip(e.seats, e.ranks, strict=True)
            )
            return f"  {call}{faces}."
        if kind == "buyin":
            return f"  {who} buys back in for {e.amount} chips."
        if kind == "decline":
            return f"  {who} does not buy back in."
        if kind == "winner":
            return f"  {who} is the last one standing and takes the pot of {e.amount}."
        return f"  {kind}"

    def _swapped_kille(self, seat: int) -> bool:
        g = self.game
        if g.options.swapped_kille is SwappedKille.DIES:
            return False
        pos = g.position_of(seat)
        return pos is not None and g.via_swap[pos]

