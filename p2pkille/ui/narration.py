"""The game told in Swedish and English: every line of "What happened".

A line is kept as a :class:`Said`, a template key and its fields (seats, cards,
numbers), and is said only when shown, in the screen's language and with the names of
the moment: ``l`` switches the whole log, and a display name that arrives later names
every line. :data:`TEMPLATES` holds every template in both languages (the grammar test
renders each one with the player and a bot in every role).

:class:`Chronicle` turns the engine's events into lines, with what the rules of the
table make of them: why a seat died (one killing card or two), why nobody died, why a
dead seat may not buy back in, and what a voided hand undid. It reads only the public
game state and the table's options.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from p2pkille.engine.cards import Rank
from p2pkille.engine.events import Event
from p2pkille.engine.machine import Game
from p2pkille.engine.options import (
    KukuEffect,
    RuleOptions,
    StockKuku,
    StockPass,
    SwappedKille,
)
from p2pkille.engine.options import Showdown as ShowdownRule
from p2pkille.ui.identity import Clash, Met
from p2pkille.ui.words import Call, Card, Cast, Group, Person, Phrase, say

__all__ = ["FAULTS", "TEMPLATES", "Chronicle", "Said", "Standing", "clash_line",
           "fault_text", "killing_cards", "said", "verdict_text"]

#: Every narration template: key -> (Swedish, English). Fields: ``a``, ``b`` persons,
#: ``who`` a group, ``n``/``m``/``price``/``pot`` numbers, ``card``, ``call``, phrases.
TEMPLATES: Final[dict[str, tuple[str, str]]] = {
    # --- the engine's events
    "deal": ("Giv {hand}: {a} ger, {b} är förhand. Potten är {pot}.",
             "Hand {hand}: {a} {a:deals|deal}, {b} {b:is|are} förhand. The pot is {pot}."),
    "keep": ("{a} behåller kortet: {call}", "{a} {a:keeps|keep} the card: {call}"),
    "offer": ("{a} bjuder {b:obj} att byta.", "{a} {a:offers|offer} {b:obj} a swap."),
    "exchange": ("{a} och {b} byter kort med baksidan upp.",
                 "{a} and {b} exchange cards face down."),
    "exchange_gave": ("{a} byter med {b:obj} med baksidan upp: {a:gent} kort, {card}, mot "
                      "{b:gent} kort.",
                      "{a} {a:swaps|swap} with {b:obj} face down: {a:gen} {card} for {b:gen} "
                      "card."),
    "exchange_took": ("{a} byter med {b:obj} med baksidan upp: {a:gent} kort mot {b:gent} "
                      "kort, {card}.",
                      "{a} {a:swaps|swap} with {b:obj} face down: {a:gen} card for {b:gen} "
                      "{card}."),
    "received": ("{a} får {b:gent} kort: {card}.", "{a} {a:gets|get} {b:gen} card: {card:the}."),
    "kille_moves": ("{card} går med framsidan upp från {a:obj} till {b:obj}.",
                    "The {card} goes face up from {a:obj} to {b:obj}."),
    "pass": ("{a} visar {card}: {call} Budet går vidare.",
             "{a} {a:shows|show} the {card}: {call} The offer passes on."),
    "pass_stock": ("Högen visar {card}: {call} Nästa kort i högen vänds upp.",
                   "The stock shows the {card}: {call} The next stock card is turned up."),
    "kuku_stop": ("{a} visar {card}: {call} Inga fler byten i den här given.",
                  "{a} {a:shows|show} the {card}: {call} No more swaps this hand."),
    "kuku_revert": ("{a} visar {card}: {call} Alla byten i given går tillbaka och bytandet "
                    "är slut.",
                    "{a} {a:shows|show} the {card}: {call} Every swap of the hand is undone "
                    "and the swapping is over."),
    "kuku_stock": ("Högen visar {card}: {call} Alla byten i given går tillbaka och bytandet "
                   "är slut.",
                   "The stock shows the {card}: {call} Every swap of the hand is undone and "
                   "the swapping is over."),
    "blow": ("{a} visar {card}: {call}", "{a} {a:shows|show} the {card}: {call}"),
    "blow_stock": ("Högen visar {card}: {call}", "The stock shows the {card}: {call}"),
    "revert": ("{n:byte går|byten går} tillbaka.", "{n:swap is|swaps are} undone."),
    "died": ("{a} dör: {why}.", "{a} {a:dies|die}: {why}."),
    "spared": ("{a} skonas: en giv behåller alltid någon levande.",
               "{a} {a:is|are} spared: a hand always keeps one player alive."),
    "draw": ("{a} drar från högen: {call}", "{a} {a:draws|draw} from the stock: {call}"),
    "cut": ("{a} kuperar högen vid kort {n}.", "{a} {a:cuts|cut} the stock at card {n}."),
    "no_cut": ("{a} kuperar inte högen.", "{a} {a:does|do} not cut the stock."),
    "stock_card": ("{a} vänder upp kort {n} i högen: {card}.",
                   "{a} {a:turns|turn} up stock card {n}: {card:the}."),
    "stock_card_keep": ("{a} vänder upp kort {n} i högen: {card}. Inget byte: {a} behåller "
                        "{a:reflt} kort.",
                        "{a} {a:turns|turn} up stock card {n}: {card:the}. No exchange: {a} "
                        "{a:keeps|keep} the old card."),
    "take": ("{a} tar {card:the}.", "{a} {a:takes|take} {card:the}."),
    "take_kille": ("{a} tar {card} ur högen: den är det högsta kortet.",
                   "{a} {a:takes|take} the {card} from the stock: it is the highest card."),
    "stock_empty": ("Högen är slut: {a} behåller kortet.",
                    "The stock has run out: {a} {a:keeps|keep} the card."),
    "redeal_asked": ("{a} begär omgiv: {call}", "{a} {a:asks|ask} for a redeal: {call}"),
    "redeal_agree": ("{a} godtar omgiv.", "{a} {a:agrees|agree} to the redeal."),
    "redeal_refuse": ("{a} vägrar omgiv.", "{a} {a:refuses|refuse} the redeal."),
    "redeal_depends": ("{a} säger {call} Den tredje spelaren avgör.",
                       "{a} {a:says|say} {call} The third player decides."),
    "redeal_refused": ("Ingen omgiv: {a} spelar vidare.", "No redeal: {a} {a:plays|play} on."),
    "redeal": ("Alla godtar: {a} ger igen, ingen dör och inga marker flyttas.",
               "Everyone agrees: {a} {a:deals|deal} again, nobody dies and no chips move."),
    "sell": ("{a} bjuder ut {a:reflt} kort till {b:obj} för {n:mark|marker}.",
             "{a} {a:offers|offer} the card to {b:obj} for {n:chip|chips}."),
    "sale_accepted": ("{b} köper {a:gent} kort för {n:mark|marker}, och {a} lämnar spelet.",
                      "{b} {b:buys|buy} {a:gen} card for {n:chip|chips}, and {a} "
                      "{a:leaves|leave} the game."),
    "sale_rejected": ("{b} köper inte {a:gent} kort.", "{b} {b:does|do} not buy {a:gen} card."),
    "showdown": ("{call} Korten visas: {faces}.", "{call} The cards are shown: {faces}."),
    "swapped_kille": ("{a:gen} Kille kom genom ett byte och är lägst.",
                      "{a:gen} Kille (fool) came by a swap, so it is the lowest card."),
    "buyin": ("{a} köper in {a:refl} igen för {n:mark|marker}.",
              "{a} {a:buys|buy} back in for {n:chip|chips}."),
    "decline": ("{a} köper inte in {a:refl}.", "{a} {a:does|do} not buy back in."),
    "declines": ("Inget återköp för {who:obj}.", "No buy-back for {who:obj}."),
    "winner": ("{a} är ensam kvar och tar potten på {n:mark|marker}.",
               "{a} {a:is|are} the last one standing and {a:takes|take} the pot of "
               "{n:chip|chips}."),
    "expel": ("{a} utesluts ur spelet.", "{a} {a:is|are} expelled from the game."),
    # --- why a seat died
    "cause_husar": ("Husar hugger den som bjöd", "the Husar (hussar) strikes whoever offered"),
    "cause_husu": ("Husu dödar den som bjöd", "the Husu (pig) kills whoever offered"),
    "cause_svinhugg": ("svinhugget faller på den som först bjöd ut kortet",
                       "the pig's blow falls on whoever first offered that card"),
    "cause_kille": ("{a} fick Kille genom ett byte", "{a} got the Kille (fool) by a swap"),
    "cause_lowest": ("lägst kort vid visningen", "the lowest card at the showdown"),
    "cause_one_killer": ("lägst kort vid visningen, där ett dödande kort visades",
                         "the lowest card at the showdown, where one killing card was shown"),
    "cause_two_killers": ("ett av de två lägsta korten vid visningen, där {k} dödande kort "
                          "visades",
                          "one of the two lowest cards at the showdown, where {k} killing "
                          "cards were shown"),
    "cause_other": ("{cause}", "{cause}"),
    # --- a showdown where nobody dies
    "nobody_no_killer": ("Ingen dör: inget dödande kort visades ({killers}).",
                         "Nobody dies: no killing card was shown ({killers})."),
    "nobody_alone": ("Ingen dör: {a} är ensam levande vid visningen.",
                     "Nobody dies: {a} {a:is|are} the only one alive at the showdown."),
    "killers_basic": ("Kille som inte kommit genom byte, Husu, Husar",
                      "a Kille not got by a swap, Husu, Husar"),
    "killers_kuku": ("Kille som inte kommit genom byte, Kuku, Husu, Husar",
                     "a Kille not got by a swap, Kuku, Husu, Husar"),
    # --- buy-backs after a hand
    "bb_two_left": ("Två spelare är kvar: alla som är ute får köpa in sig för dubbla potten, "
                    "{n:mark|marker}.",
                    "Two players are left: everyone out of the game may buy back in for twice "
                    "the pot, {n:chip|chips}."),
    "bb_over": ("{a} kan inte köpa in {a:refl} igen: återköpen är slut för gott när {n} eller "
                "färre spelare är kvar.",
                "{a} cannot buy back in: buy-backs end for good once {n} or fewer players are "
                "left."),
    "bb_limit": ("{a} kan inte köpa in {a:refl} igen: {a} har använt alla återköp "
                 "({n} tillåts).",
                 "{a} cannot buy back in: {a} {a:has|have} used up the {n:buy-back|buy-backs} "
                 "allowed."),
    "bb_never": ("{a} kan inte köpa in {a:refl}: vid det här bordet finns inga återköp.",
                 "{a} cannot buy back in: this table has no buy-backs."),
    "bb_expelled": ("{a} är utesluten och kan inte köpa in {a:refl}.",
                    "{a} {a:is|are} expelled and cannot buy back in."),
    "bb_sold": ("{a} sålde {a:reflt} kort och får aldrig köpa in {a:refl} igen.",
                "{a} sold the card and may never buy back in."),
    "bb_poor": ("{a} kan inte köpa in {a:refl}: det kostar {price:mark|marker} och {a} har "
                "{n:mark|marker}.",
                "{a} cannot buy back in: it costs {price:chip|chips} and {a} {a:has|have} "
                "{n:chip|chips}."),
    "bb_left": ("{a} lämnar spelet för gott och tillfrågas inte igen om återköp.",
                "{a} {a:leaves|leave} the game for good and will not be asked to buy back "
                "in again."),
    "bb_later": ("{a} står över den här given och kan köpa in {a:refl} före en senare giv.",
                 "{a} {a:sits|sit} this hand out and may buy back in before a later hand."),
    "sale_poor": ("{a} kan inte köpa {b:gent} kort: det kostar {price:mark|marker} och {a} har "
                  "{n:mark|marker}.",
                  "{a} cannot buy {b:gen} card: it costs {price:chip|chips} and {a} "
                  "{a:has|have} {n:chip|chips}."),
    "timed_decision": ("{a} bestämde {a:refl} inte i tid: bordet gav {a:obj} standardsvaret.",
                       "{a} did not decide in time: the table gave {a:obj} the default "
                       "answer."),
    # --- names that clash with the player's known players (fields are plain text)
    "id_new_key": ("Varning: {name} ({fp}) är en ny nyckel för ett namn du har mött med "
                   "nyckeln {known}. Det kan vara någon annan.",
                   "Warning: {name} ({fp}) is a new key for a name you met with the key "
                   "{known}. It may be somebody else."),
    "id_new_name": ("Varning: nyckeln {fp} hette {known} när ni möttes, nu {name}.",
                    "Warning: the key {fp} was called {known} when you met; now {name}."),
    "id_bot_name": ("Varning: en bot kallar sig {name} ({fp}), som en person du har mött "
                    "med nyckeln {known}.",
                    "Warning: a bot calls itself {name} ({fp}), like a person you met with "
                    "the key {known}."),
    "left_table": ("{a} har lämnat bordet (ett signerat besked).",
                   "{a} left the table (a signed leave)."),
    # --- a voided hand
    "void": ("Giv {hand} är ogiltig och räknas inte.",
             "Hand {hand} is voided and does not count."),
    "void_timeout": ("{a} svarade inte i tid{waited}: alla andra med nyckel i given röstade ut "
                     "{a:obj}.",
                     "{a} did not answer in time{waited}: every other key holder voted {a:obj} "
                     "out."),
    "void_left": ("{a} lämnade bordet: alla andra med nyckel i given röstade genast ut "
                  "{a:obj}.",
                  "{a} left the table: every other key holder voted {a:obj} out at once."),
    "void_accused": ("{who} anklagade {a:obj}: {what} ({verdict}).",
                     "{who} accused {a:obj}: {what} ({verdict})."),
    "void_out": ("{a} är ute ur spelet för gott.", "{a} {a:is|are} out of the game for good."),
    "void_blamed": ("{what} (bevisat).", "{what} (proven)."),
    "void_plain": ("Ingen nämns som skyldig.", "Nobody is named as the one at fault."),
    "void_undone": ("Ogjort med given: {items}.", "Undone with the hand: {items}."),
    "void_unchanged": ("Inget hade ändrats än: markerna och potten är som före given.",
                       "Nothing had changed yet: the chips and the pot stand as before the "
                       "hand."),
    "waited": (" (bordet väntade på {step})", " (the table was waiting for {step})"),
    "undo_pot": ("potten är {n} igen (den var {m})", "the pot is {n} again (it was {m})"),
    "undo_chips": ("{a} har {n:mark|marker} igen (inte {m})",
                   "{a} {a:has|have} {n:chip|chips} again (not {m})"),
    "undo_death": ("{a:gen} död", "{a:gen} death"),
    "undo_buyin": ("{a:gent} återköp för {n:mark|marker}", "{a:gen} buy-back for "
                   "{n:chip|chips}"),
    "undo_sale": ("{a:gen} försäljning till {b:obj}", "{a:gen} sale to {b:obj}"),
    "verdict_proven": ("bevisat", "proven"),
    "verdict_false": ("falskt: den som anklagade får skulden", "false: the accuser is blamed"),
    "verdict_unproven": ("inte bevisat", "not proven"),
    "verdict_agreed": ("överenskommet", "agreed"),
    # steps the table waits for
    "step_decision": ("{a:gent} beslut", "{a:gen} decision"),
    "step_keys": ("nycklarna för given", "the hand's keys"),
    "step_shuffle": ("blandningen med bevis", "the proven shuffle"),
    "step_deal": ("utdelningen", "the deal"),
    "step_reveal": ("avslöjandet för granskningen", "the reveal for the audit"),
    "step_sign": ("signaturerna på kontrollpunkten", "the checkpoint signatures"),
    "step_stock": ("kortet ur högen", "the stock card"),
    "step_showdown": ("korten vid visningen", "the cards at the showdown"),
}

#: What an accusation's kind says the accused did (``a``), in plain words.
FAULTS: Final[dict[str, tuple[str, str]]] = {
    "malformed": ("{a} skickade ett signerat meddelande som inte går att läsa",
                  "{a} sent a signed message that cannot be read"),
    "equivocation": ("{a} skickade två olika meddelanden för samma steg",
                     "{a} sent two different messages for the same step"),
    "bad-key": ("{a} skickade en nyckel vars bevis inte håller",
                "{a} sent a hand key whose proof does not hold"),
    "bad-share": ("{a} skickade en dekrypteringsandel som inte stämmer",
                  "{a} sent a decryption share that does not check"),
    "bad-seal": ("{a} skickade en förseglad andel som inte går att öppna eller inte stämmer",
                 "{a} sent a sealed share that does not open or does not match"),
    "illegal-act": ("{a} gjorde ett drag som reglerna eller turen inte tillåter",
                    "{a} made a move that the rules or the turn do not allow"),
    "false-show": ("{a} visade ett annat kort än det som sades",
                   "{a} showed another card than the one claimed"),
    "false-fact": ("{a} påstod något om ett kort som korten motsäger",
                   "{a} claimed something about a card that the cards contradict"),
    "audit": ("granskningen efter given fann fel hos {a:obj}",
              "the audit after the hand found {a:obj} at fault"),
    "genesis": ("{a} bröt mot bordets start",
                "{a} broke the table's start"),
    "bad-proof": ("{a} skickade ett bevis för en blandning eller ett svar som inte håller",
                  "{a} sent a proof of a shuffle or an answer that does not hold"),
    "checkpoint": ("{a} signerade en annan kontrollpunkt än bordets",
                   "{a} signed another checkpoint than the table's"),
    "idle": ("{a} stoppade given med en anklagelse utan grund",
             "{a} stopped the hand with an accusation that names no fault"),
    "other": ("{a} bröt mot protokollet", "{a} broke the protocol"),
    "timeout": ("{a} svarade inte i tid", "{a} did not answer in time"),
}
TEMPLATES.update({f"fault_{kind}": words for kind, words in FAULTS.items()})

_VERDICTS: Final = {"proven": "verdict_proven", "false": "verdict_false",
                    "unproven": "verdict_unproven", "agreed": "verdict_agreed"}
_CAUSES: Final = {"husar": "cause_husar", "husu": "cause_husu",
                  "svinhugg": "cause_svinhugg", "kille": "cause_kille"}
_KILLER_RANKS: Final = frozenset({Rank.HUSU, Rank.HUSAR})
#: Events told by one template of the same name, from the event's seats, card and amount.
_PLAIN: Final = {kind: kind for kind in (
    "keep", "offer", "spared", "draw", "stock_empty", "redeal_asked", "redeal_refused",
    "redeal", "sell", "sale_rejected", "winner")}
#: The call an event says when the engine gave none.
_CALLS: Final = {"keep": "Jag är nöjd!", "draw": "Jag går i lek!",
                 "redeal_asked": "Bättre kort!", "redeal_vote": "Det beror på."}


_CLASHES: Final = {Clash.NEW_KEY: "id_new_key", Clash.NEW_NAME: "id_new_name",
                   Clash.BOT_NAME: "id_bot_name"}


def clash_line(met: Met) -> Said:
    """The warning for a name that clashes with the known players."""
    return said(_CLASHES[met.clash], indent=0, name=met.name, fp=met.fingerprint,
                known=", ".join(met.known))


def fault_text(kind: str, seat: int, lang: str, cast: Cast) -> str:
    """What an accusation of ``kind`` says the seat did, in plain words."""
    sv, en = FAULTS.get(kind, FAULTS["other"])
    return say(sv if lang == "sv" else en, lang, cast, TEMPLATES, True, a=Person(seat))


def verdict_text(verdict: object, lang: str) -> str:
    """An accusation's verdict (``proven``, ``false``, ...) in words."""
    sv, en = TEMPLATES[_VERDICTS.get(str(verdict), "verdict_unproven")]
    return sv if lang == "sv" else en


@dataclass(frozen=True, slots=True)
class Said:
    """One line of the log: a template key and its fields, said when shown."""

    key: str
    fields: tuple[tuple[str, object], ...] = ()
    indent: int = 2

    def text(self, lang: str, cast: Cast) -> str:
        sv, en = TEMPLATES[self.key]
        return " " * self.indent + say(sv if lang == "sv" else en, lang, cast, TEMPLATES,
                                       **dict(self.fields))


def said(key: str, /, indent: int = 2, **fields: object) -> Said:
    if key not in TEMPLATES:
        raise KeyError(f"no template {key!r}")
    return Said(key, tuple(sorted(fields.items())), indent)


@dataclass(frozen=True, slots=True)
class Standing:
    """What a void can undo: the chips, the pot and who is in the game."""

    chips: tuple[int, ...]
    pot: int
    in_game: tuple[bool, ...]

    @classmethod
    def of(cls, game: Game) -> Standing:
        return cls(tuple(game.chips), game.pot, tuple(game.in_game))


def killing_cards(options: RuleOptions) -> frozenset[Rank] | None:
    """The killing cards at this table's showdown (``None``: the lowest always dies)."""
    if options.showdown is ShowdownRule.LOWEST:
        return None
    extra = {Rank.KUKU} if options.showdown is ShowdownRule.KILLING_CARDS_KUKU else set()
    return frozenset({Rank.KILLE, *_KILLER_RANKS, *extra})


def _listing(items: Sequence[Phrase]) -> Phrase:
    """Phrases joined by semicolons (an item may hold a comma of its own)."""
    fields = {f"i{n}": item for n, item in enumerate(items)}
    joint = "; ".join(f"{{i{n}}}" for n in range(len(items)))
    return Phrase("", fields, (joint, joint))


class Chronicle:
    """The log of one player's game, in :class:`Said` lines."""

    def __init__(self) -> None:
        self.lines: list[Said] = []
        self.edits = 0
        """Lines replaced so far (a reader that keeps what it said of the lines redoes it)."""
        self.sellers: set[int] = set()
        # what happened in the hand under way, for a void to list as undone
        self._deaths: list[int] = []
        self._buyins: list[tuple[int, int]] = []
        self._sales: list[tuple[int, int]] = []
        self._killers = 0

    def add(self, line: Said) -> None:
        self.lines.append(line)

    # ------------------------------------------------------------------ events

    def events(self, events: Iterable[Event], game: Game, *, hand: int,
               known: Mapping[int, Rank], me: int | None) -> None:
        """Tell ``events`` (one fact's, or a void's), ``game`` as it stands after them;
        ``hand`` is the table's number of the hand a deal starts."""
        ended = False
        for event in events:
            self._event(event, game, hand, known, me)
            ended = ended or event.kind == "showdown"
        if ended:
            self._after_hand(game)

    def _event(self, e: Event, game: Game, hand: int, known: Mapping[int, Rank],
               me: int | None) -> None:
        kind = e.kind
        fields: dict[str, object] = {
            "a": Person(e.seat) if e.seat is not None else None,
            "b": Person(e.other) if e.other is not None else None,
            "card": Card(e.rank) if e.rank is not None else None,
            "call": Call(e.call or _CALLS.get(kind, "")),
            "n": e.amount or 0,
        }
        if kind in _PLAIN:
            self.add(Said(_PLAIN[kind], tuple(sorted(
                (k, v) for k, v in fields.items() if v is not None))))
            return
        told = self._special(e, game, hand, known, me, fields)
        if not told:
            self.add(said("cause_other", cause=kind))

    # One branch per event kind whose line depends on the table.
    def _special(self, e: Event, game: Game, hand: int, known: Mapping[int, Rank],  # noqa: PLR0912
                 me: int | None, fields: dict[str, object]) -> bool:
        """The events whose line depends on the table's options, on what the player knows,
        or on the hand so far; False for an event of a kind not known here."""
        kind, opts, add = e.kind, game.options, self.add
        a, b, card, call = fields["a"], fields["b"], fields["card"], fields["call"]
        if kind == "deal":
            self._deaths, self._buyins, self._sales = [], [], []
            add(said("deal", indent=0, hand=hand, a=a, b=b, pot=game.pot))
        elif kind == "exchange":
            self._exchange(e, game, known, me)
        elif kind == "kille_moves":
            add(said("kille_moves", a=a, b=b, card=Card(Rank.KILLE)))
        elif kind == "pass":
            add(said("pass" if a is not None else "pass_stock", a=a, card=card, call=call))
        elif kind == "kuku":
            key = ("kuku_stock" if a is None else
                   "kuku_revert" if opts.kuku is KukuEffect.REVERT_ALL else "kuku_stop")
            add(said(key, a=a, card=card, call=call))
        elif kind in ("husar", "svinhugg"):
            add(said("blow" if a is not None else "blow_stock", a=a, card=card, call=call))
        elif kind == "revert":
            if e.amount:
                add(said("revert", n=e.amount))
        elif kind == "died" and e.seat is not None:
            self._deaths.append(e.seat)
            add(said("died", a=a, why=self._cause(e, game)))
        elif kind == "cut":
            add(said("cut", a=a, n=e.amount) if e.amount else said("no_cut", a=a))
        elif kind == "stock_card":
            rank = e.rank
            no_exchange = (
                (rank in (Rank.KAVALL, Rank.VARDSHUS) and opts.stock_pass is StockPass.NO_EXCHANGE)
                or (rank is Rank.KUKU and opts.stock_kuku is StockKuku.NO_EXCHANGE))
            add(said("stock_card_keep" if no_exchange else "stock_card", a=a, n=e.amount,
                     card=card))
        elif kind == "take":
            add(said("take_kille" if e.rank is Rank.KILLE else "take", a=a, card=card))
        elif kind == "redeal_vote":
            key = {"depends": "redeal_depends", "agree": "redeal_agree"}.get(
                e.cause or "", "redeal_refuse")
            add(said(key, a=a, call=call))
        elif kind == "sale_accepted" and e.seat is not None and e.other is not None:
            self.sellers.add(e.seat)
            self._sales.append((e.seat, e.other))
            add(said("sale_accepted", a=a, b=b, n=e.amount or 0))
        elif kind == "showdown":
            self._show(e, game, Call(e.call or "På rygg!"))
        elif kind == "buyin" and e.seat is not None:
            self._buyins.append((e.seat, e.amount or 0))
            add(said("buyin", a=a, n=e.amount or 0))
        elif kind == "decline" and e.seat is not None:
            self._decline(e.seat)
        elif kind != "expel":  # only a void expels a seat, and its narration names the seat
            return False
        return True

    def _exchange(self, e: Event, game: Game, known: Mapping[int, Rank],
                  me: int | None) -> None:
        """A face-down exchange; the card the player gave is named. After the exchange the
        requester holds the target's old card and the target the requester's."""
        if e.seat is None or e.other is None:
            return
        a, b = Person(e.seat), Person(e.other)
        gave = None
        if me == e.seat:
            gave = known.get(game.hold[game.tgt])
        elif me == e.other:
            gave = known.get(game.hold[game.req])
        if gave is None:
            self.add(said("exchange", a=a, b=b))
        else:
            self.add(said("exchange_gave" if me == e.seat else "exchange_took", a=a, b=b,
                          card=Card(gave)))

    def _decline(self, seat: int) -> None:
        """Declines one after another (a table asking every seat out before each hand)
        are one line."""
        last = self.lines[-1] if self.lines else None
        if last is not None and last.key in ("decline", "declines"):
            before = dict(last.fields)["who" if last.key == "declines" else "a"]
            seats = before.seats if isinstance(before, Group) else (
                (before.seat,) if isinstance(before, Person) else ())
            self.lines[-1] = said("declines", who=Group((*seats, seat)))
            self.edits += 1
            return
        self.add(said("decline", a=Person(seat)))

    def _show(self, e: Event, game: Game, call: Call | None) -> None:
        faces: dict[str, object] = {}
        sv: list[str] = []
        en: list[str] = []
        swapped: list[int] = []
        kills = killing_cards(game.options)
        self._killers = 0
        for i, (seat, rank) in enumerate(zip(e.seats, e.ranks, strict=True)):
            faces[f"p{i}"], faces[f"c{i}"] = Person(seat), Card(rank)
            got = _swapped(game, seat) and rank is Rank.KILLE
            if got and game.options.swapped_kille is not SwappedKille.DIES:
                swapped.append(seat)
            if kills is not None and rank in kills and not (rank is Rank.KILLE and got):
                self._killers += 1
            sv.append(f"{{p{i}}} har {{c{i}:the}}" if i == 0 else f"{{p{i}}} {{c{i}:the}}")
            en.append(f"{{p{i}}} {{p{i}:has|have}} {{c{i}:the}}" if i == 0
                      else f"{{p{i}}} {{c{i}:the}}")
        if len(sv) > 1:
            sv[-2:] = [f"{sv[-2]} och {sv[-1]}"]
            en[-2:] = [f"{en[-2]} and {en[-1]}"]
        listed = Phrase("", faces, (", ".join(sv), ", ".join(en)))
        self.add(said("showdown", call=call or Call("På rygg!"), faces=listed))
        for seat in swapped:
            self.add(said("swapped_kille", a=Person(seat)))
        # Nobody dies at this showdown: say why.
        live = list(e.seats)
        dead = [s for s in live if not _alive(game, s)]
        if dead:
            return
        if len(live) == 1:
            self.add(said("nobody_alone", a=Person(live[0])))
        elif kills is not None and self._killers == 0:
            key = ("killers_kuku" if game.options.showdown is ShowdownRule.KILLING_CARDS_KUKU
                   else "killers_basic")
            self.add(said("nobody_no_killer", killers=Phrase(key)))
        # Otherwise the deaths would leave nobody alive: the engine's "spared" lines say so.

    def _cause(self, e: Event, game: Game) -> Phrase:
        cause = e.cause or ""
        if cause == "showdown":
            kills = killing_cards(game.options)
            if kills is None:
                return Phrase("cause_lowest")
            if self._killers >= 2:
                return Phrase("cause_two_killers", {"k": self._killers})
            return Phrase("cause_one_killer")
        if cause in _CAUSES:
            return Phrase(_CAUSES[cause], {"a": Person(e.seat if e.seat is not None else -1)})
        return Phrase("cause_other", {"cause": cause})

    def _after_hand(self, game: Game) -> None:
        """The hand is over: say why a seat that died in it may not buy back in."""
        result = game.result
        if result is None or result.redealt or game.over:
            return
        opts = game.options
        died = list(result.died)
        if opts.two_left_buyin and game.n_in == 2 and died:
            self.add(said("bb_two_left", n=2 * game.pot))
            return
        limit = opts.buyback_limit
        for seat in died:
            a = Person(seat)
            if game.in_game[seat]:
                continue
            if game.expelled[seat]:
                self.add(said("bb_expelled", a=a))
            elif seat in self.sellers:
                self.add(said("bb_sold", a=a))
            elif opts.buybacks_close_at and game.n_in <= opts.buybacks_close_at:
                self.add(said("bb_over", a=a, n=opts.buybacks_close_at))
            elif limit == 0:
                self.add(said("bb_never", a=a))
            elif limit is not None and game.buybacks[seat] >= limit:
                self.add(said("bb_limit", a=a, n=limit))

    # ------------------------------------------------------------------ a voided hand

    # One branch per kind of blame a void tells.
    def void(self, hand: int, accusations: Sequence[Mapping[str, object]],  # noqa: PLR0912
             expelled: Sequence[int], seat_of: Mapping[str, int], before: Standing | None,
             game: Game, waited: Mapping[int, Phrase], left: Collection[int] = ()) -> None:
        """Hand ``hand`` was voided: who was blamed and why, what it undid (``before``:
        the standing just before the void; ``game`` the state it went back to) and who is
        out for it (``expelled``). ``seat_of`` maps the runtime's seat names to seats;
        ``waited`` what the table last waited for from a seat; ``left`` the seats whose
        signed leave this node holds (their time-out was voted at once)."""
        self.add(said("void", indent=0, hand=hand))
        told = False
        accusers: dict[tuple[int, str, str], list[int]] = {}
        for acc in accusations:
            accused = seat_of.get(str(acc.get("accused")))
            if accused is None:
                continue
            told = True
            a = Person(accused)
            kind = str(acc.get("kind", ""))
            by = seat_of.get(str(acc.get("by"))) if acc.get("by") is not None else None
            if kind == "timeout" and accused in left:
                self.add(said("void_left", a=a))
            elif kind == "timeout":
                step = waited.get(accused)
                extra = Phrase("waited", {"step": step}) if step is not None else ""
                self.add(said("void_timeout", a=a, waited=extra))
            elif by is None:
                kind = "idle" if kind == "illegal-act" else kind
                what = Phrase(f"fault_{kind}" if kind in FAULTS else "fault_other", {"a": a})
                self.add(said("void_blamed", what=what))
            else:
                # One line for every holder that accused the seat of the same thing.
                key = (accused, kind, str(acc.get("verdict")))
                accusers.setdefault(key, []).append(by)
        for (accused, kind, verdict), by_seats in accusers.items():
            others = [s for s in by_seats if s != accused] or by_seats
            what = Phrase(f"fault_{kind}" if kind in FAULTS else "fault_other",
                          {"a": Person(accused)})
            self.add(said("void_accused", a=Person(accused), who=Group(tuple(others)),
                          what=what, verdict=Phrase(_VERDICTS.get(verdict, "verdict_unproven"))))
        if not told:
            self.add(said("void_plain"))
        items: list[Phrase] = [Phrase("undo_death", {"a": Person(s)}) for s in self._deaths]
        items += [Phrase("undo_buyin", {"a": Person(s), "n": n}) for s, n in self._buyins]
        items += [Phrase("undo_sale", {"a": Person(s), "b": Person(t)}) for s, t in self._sales]
        if before is not None:
            for seat, (was, now) in enumerate(zip(before.chips, game.chips, strict=False)):
                if was != now:
                    items.append(Phrase("undo_chips", {"a": Person(seat), "n": now, "m": was}))
            if before.pot != game.pot:
                items.append(Phrase("undo_pot", {"n": game.pot, "m": before.pot}))
        for seat, _ in self._sales:
            self.sellers.discard(seat)
        self._deaths, self._buyins, self._sales = [], [], []
        self.add(said("void_undone", items=_listing(items)) if items
                 else said("void_unchanged"))
        for seat in expelled:
            self.add(said("void_out", a=Person(seat)))


def _alive(game: Game, seat: int) -> bool:
    pos = game.position_of(seat)
    return pos is not None and game.alive[pos]


def _swapped(game: Game, seat: int) -> bool:
    pos = game.position_of(seat)
    return pos is not None and game.via_swap[pos]
