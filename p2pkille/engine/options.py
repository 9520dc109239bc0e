"""Rule options: every rule that differs between the three rulesets, made explicit.

A ruleset is a preset (:data:`PRESETS`) over :class:`RuleOptions`; a table may
override single options (:func:`options_from_json`), e.g. to play house rules.
Sources are cited as in ``shared/rulings.md``: W = the Wikipedia text
(``seeds/002_…``, preset ``wikipedia``), B = the book text (``seeds/004_…``,
preset ``bytes-kille``), E = the short text (``seeds/000_…``, preset
``enkortskille``), R = a ruling of rulings.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Final

from p2pkille.engine.cards import DECK_SIZE
from p2pkille.engine.errors import InvalidOptionsError


class KukuEffect(Enum):
    """What a target's kuku does (R "A player's turn", kuku row)."""

    #: No swap; swapping ends and the showdown follows (W "Kuku står, ingen byta får!", B).
    STOP = "stop"
    #: Every swap of the hand so far is undone, then the showdown (E "alla tidigare gjorda
    #: byten blir ogiltiga"); deaths already suffered stand.
    REVERT_ALL = "revert-all"


class HusuEffect(Enum):
    """What a target's husu (Gris) does (R, husu row)."""

    #: "Svinhugg går igen!": the chain that carried the offered card is undone and the
    #: chain's originator dies (W, and E's last paragraph).
    SVINHUGG = "svinhugg"
    #: No swap; the requester dies, as for husar (B "Grisen är ett dödande kort").
    KILL_REQUESTER = "kill-requester"


class SwappedKille(Enum):
    """What receiving a kille by a swap means (R, kille row and "Showdown")."""

    #: The receiver dies at once (W "spelaren som fått Killen tillbytt sig är död").
    DIES = "dies"
    #: The kille is the lowest card of the showdown for its holder (B, E).
    LOWEST = "lowest"


class StockPass(Enum):
    """A kavall or vardshus drawn from the stock (R "The dealer's draw")."""

    #: No exchange (W "Blir det en Kuku, Kavall, eller Värdshus blir bytet inte av").
    NO_EXCHANGE = "no-exchange"
    #: The next stock card is drawn instead, repeatedly (B "då får han ta upp nästa kort", E).
    DRAW_NEXT = "draw-next"


class StockKuku(Enum):
    """A kuku drawn from the stock (R "The dealer's draw")."""

    #: No exchange; the drawer keeps its card; swapping goes on (W; B "behåll").
    NO_EXCHANGE = "no-exchange"
    #: Every swap of the hand is undone and the swapping ends (E: the stock answers as a
    #: player's card would).
    REVERT_ALL = "revert-all"


class Showdown(Enum):
    """Who dies at the showdown (R "Showdown")."""

    #: The live player(s) with the lowest card die, always (W).
    LOWEST = "lowest"
    #: Killing cards are an unswapped kille, husu and husar: none shown, nobody dies; one,
    #: the lowest dies; two or more, the two lowest die; ties at a dying rank all die (B).
    KILLING_CARDS = "killing-cards"
    #: As KILLING_CARDS, and kuku is a killing card too (E).
    KILLING_CARDS_KUKU = "killing-cards-kuku"


class Price(Enum):
    """A buy-in price (R "Pot, buy-backs and the end"); half the pot is rounded up."""

    STAKE = "stake"
    TWICE_STAKE = "twice-stake"
    HALF_POT = "half-pot"
    POT = "pot"
    TWICE_POT = "twice-pot"

    def amount(self, stake: int, pot: int) -> int:
        """The price in chips for this base stake and the pot as it stands now."""
        if self is Price.STAKE:
            return stake
        if self is Price.TWICE_STAKE:
            return 2 * stake
        if self is Price.HALF_POT:
            return (pot + 1) // 2
        if self is Price.POT:
            return pot
        return 2 * pot


class BuybackTiming(Enum):
    """When a dead player may buy back in (R "Pot, buy-backs and the end")."""

    #: Only right after the hand in which it died (W "Man måste köpa in sig direkt").
    IMMEDIATE = "immediate"
    #: After any later hand, before the next deal (E "även om det innebär att man stått över
    #: ett antal omgångar"; B "kan få chansen att köpa in sig igen senare").
    ANY_LATER = "any-later"


class RedealRule(Enum):
    """Who answers a redeal request (R "Redeal votes")."""

    #: No redeals (W).
    NONE = "none"
    #: The two others answer in turn order, starting after the asker; all must agree (E).
    BOTH_OTHERS = "both-others"
    #: Fråge-Kille: the acting dealer answers first (the next player in turn when the asker
    #: is the acting dealer); "det beror på" hands the decision to the third player (B).
    FRAGE_KILLE = "frage-kille"


class DealerRotation(Enum):
    """Who deals the next hand (R "Seats and turns")."""

    #: The previous hand's förhand, even if it died (W "Given som nu är den som i förra
    #: spelet var Förhand", B).
    FORHAND = "forhand"
    #: The seat left of the previous dealer, even if eliminated (E).
    LEFT = "left"


#: The deck allows one card each plus a stock of at least four (R, bytes-kille limits).
DECK_MAX_PLAYERS: Final = DECK_SIZE - 4


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """The rule options of one table; every peer must agree on them before the deal."""

    #: What a target's kuku does.
    kuku: KukuEffect = KukuEffect.STOP
    #: What a target's husu does; the stock's husu follows the same option.
    husu: HusuEffect = HusuEffect.SVINHUGG
    #: What a kille received by a swap does.
    swapped_kille: SwappedKille = SwappedKille.DIES
    #: The drawer may name the 1st..``max_pick`` card from the top (B: 4); 1 = the top only.
    max_pick: int = 1
    #: Förhand cuts the stock before the hand's first draw (W "Förhand kuperar").
    forhand_cuts: bool = True
    #: A kavall or vardshus drawn from the stock.
    stock_pass: StockPass = StockPass.NO_EXCHANGE
    #: A kuku drawn from the stock.
    stock_kuku: StockKuku = StockKuku.NO_EXCHANGE
    #: Who dies at the showdown.
    showdown: Showdown = Showdown.LOWEST
    #: Price of the 1st, 2nd, ... buy-back; later ones repeat the last (W: stake, half pot,
    #: pot; E: twice the stake, half pot, pot; B: twice the stake).
    buyback_prices: tuple[Price, ...] = (Price.STAKE, Price.HALF_POT, Price.POT)
    #: Buy-backs per player, ``None`` for no limit (W, E: 3; B: no limit given).
    buyback_limit: int | None = 3
    #: When a dead player may buy back.
    buyback_timing: BuybackTiming = BuybackTiming.IMMEDIATE
    #: Buy-backs end once a hand leaves this many players or fewer (B: 3, "har de som
    #: hittills blivit utslagna ingen mer chans"); 0 = never.
    buybacks_close_at: int = 0
    #: Redeal requests and their votes.
    redeal: RedealRule = RedealRule.NONE
    #: Redeals may be asked when exactly this many players are in the game (B, E: 3).
    redeal_players: int = 3
    #: When a hand leaves exactly two players, every seat out of the game may buy in at
    #: twice the current pot (B, R "from any number").
    two_left_buyin: bool = False
    #: A live player may sell its card on its turn (E "rätt att sälja sitt kort").
    card_selling: bool = False
    #: Who deals the next hand.
    dealer_rotation: DealerRotation = DealerRotation.FORHAND
    #: Fewest players at the start of a game (W 3; B, E 2).
    min_players: int = 3
    #: Most players at the start of a game (W 15; E 20; B as many as the deck allows).
    max_players: int = 15
    #: The call of a target's kuku (cosmetic: W "Kuku står, ingen byta får!", B "Kuku behåll").
    kuku_call: str = "Kuku står, ingen byta får!"
    #: The call that starts the showdown (cosmetic: W "På rygg!", B "Upp till bevis!").
    showdown_call: str = "På rygg!"

    def __post_init__(self) -> None:
        problems = _check(self)
        if problems:
            raise InvalidOptionsError("; ".join(problems))

    def to_json(self) -> dict[str, object]:
        """The options as a JSON object that :func:`options_from_json` reads back."""
        out: dict[str, object] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, Enum):
                out[field.name] = value.value
            elif isinstance(value, tuple):
                out[field.name] = [item.value for item in value]
            else:
                out[field.name] = value
        return out


def _check(opts: RuleOptions) -> list[str]:
    problems: list[str] = []
    if not 1 <= opts.max_pick <= 4:
        problems.append(f"max_pick must be 1..4, got {opts.max_pick}")
    if not opts.buyback_prices:
        problems.append("buyback_prices must name at least one price")
    if opts.buyback_limit is not None and opts.buyback_limit < 0:
        problems.append(f"buyback_limit must be >= 0 or null, got {opts.buyback_limit}")
    if opts.buybacks_close_at < 0:
        problems.append(f"buybacks_close_at must be >= 0, got {opts.buybacks_close_at}")
    if not 2 <= opts.redeal_players <= DECK_MAX_PLAYERS:
        problems.append(f"redeal_players must be 2..{DECK_MAX_PLAYERS}")
    if opts.redeal is RedealRule.FRAGE_KILLE and opts.redeal_players != 3:
        problems.append("redeal frage-kille needs redeal_players 3 (asker, dealer, third)")
    if opts.redeal is RedealRule.BOTH_OTHERS and opts.redeal_players != 3:
        problems.append("redeal both-others needs redeal_players 3")
    if not 2 <= opts.min_players <= opts.max_players <= DECK_MAX_PLAYERS:
        problems.append(
            f"need 2 <= min_players <= max_players <= {DECK_MAX_PLAYERS}, got "
            f"{opts.min_players}..{opts.max_players}"
        )
    return problems


WIKIPEDIA: Final = RuleOptions()
BYTES_KILLE: Final = RuleOptions(
    kuku=KukuEffect.STOP,
    husu=HusuEffect.KILL_REQUESTER,
    swapped_kille=SwappedKille.LOWEST,
    max_pick=4,
    forhand_cuts=False,
    stock_pass=StockPass.DRAW_NEXT,
    stock_kuku=StockKuku.NO_EXCHANGE,
    showdown=Showdown.KILLING_CARDS,
    buyback_prices=(Price.TWICE_STAKE,),
    buyback_limit=None,
    buyback_timing=BuybackTiming.ANY_LATER,
    buybacks_close_at=3,
    redeal=RedealRule.FRAGE_KILLE,
    two_left_buyin=True,
    dealer_rotation=DealerRotation.FORHAND,
    min_players=2,
    max_players=DECK_MAX_PLAYERS,
    kuku_call="Kuku behåll",
    showdown_call="Upp till bevis!",
)
ENKORTSKILLE: Final = RuleOptions(
    kuku=KukuEffect.REVERT_ALL,
    husu=HusuEffect.SVINHUGG,
    swapped_kille=SwappedKille.LOWEST,
    max_pick=1,
    forhand_cuts=False,
    stock_pass=StockPass.DRAW_NEXT,
    stock_kuku=StockKuku.REVERT_ALL,
    showdown=Showdown.KILLING_CARDS_KUKU,
    buyback_prices=(Price.TWICE_STAKE, Price.HALF_POT, Price.POT),
    buyback_limit=3,
    buyback_timing=BuybackTiming.ANY_LATER,
    redeal=RedealRule.BOTH_OTHERS,
    card_selling=True,
    dealer_rotation=DealerRotation.LEFT,
    min_players=2,
    max_players=20,
    kuku_call="Kuku står, ingen byta får!",
    showdown_call="På rygg!",
)

#: The named rulesets; ``wikipedia`` is the default.
PRESETS: Final[dict[str, RuleOptions]] = {
    "wikipedia": WIKIPEDIA,
    "bytes-kille": BYTES_KILLE,
    "enkortskille": ENKORTSKILLE,
}
DEFAULT_RULESET: Final = "wikipedia"

def _field_kinds() -> dict[str, type[Enum] | str]:
    kinds: dict[str, type[Enum] | str] = {}
    sample = RuleOptions()
    for field in dataclasses.fields(RuleOptions):
        value = getattr(sample, field.name)
        if isinstance(value, Enum):
            kinds[field.name] = type(value)
        elif isinstance(value, bool):
            kinds[field.name] = "bool"
        elif isinstance(value, tuple):
            kinds[field.name] = "prices"
        elif field.name == "buyback_limit":
            kinds[field.name] = "int|null"
        elif isinstance(value, int):
            kinds[field.name] = "int"
        else:
            kinds[field.name] = "str"
    return kinds


_KINDS: Final = _field_kinds()


def _enum_value(name: str, kind: type[Enum], raw: object) -> Enum:
    choices = ", ".join(repr(member.value) for member in kind)
    if isinstance(raw, str):
        for member in kind:
            if member.value == raw:
                return member
    raise InvalidOptionsError(f"option {name}: {raw!r} is not one of {choices}")


def _convert(name: str, raw: object) -> object:
    kind = _KINDS[name]
    if isinstance(kind, type):
        return _enum_value(name, kind, raw)
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        raise InvalidOptionsError(f"option {name}: expected true or false, got {raw!r}")
    if kind in ("int", "int|null"):
        if raw is None and kind == "int|null":
            return None
        if type(raw) is int:
            return raw
        want = "an integer or null" if kind == "int|null" else "an integer"
        raise InvalidOptionsError(f"option {name}: expected {want}, got {raw!r}")
    if kind == "prices":
        if not isinstance(raw, list):
            raise InvalidOptionsError(f"option {name}: expected a list of prices, got {raw!r}")
        return tuple(_enum_value(name, Price, item) for item in raw)
    if isinstance(raw, str):
        return raw
    raise InvalidOptionsError(f"option {name}: expected a string, got {raw!r}")


def options_from_json(ruleset: object = DEFAULT_RULESET, overrides: object = None) -> RuleOptions:
    """The preset ``ruleset`` with single options replaced from a JSON object.

    Keys are :class:`RuleOptions` field names; enum options take their string values,
    ``buyback_prices`` a list of price names. Anything unknown or mistyped raises
    :class:`InvalidOptionsError` naming the option.
    """
    if not isinstance(ruleset, str) or ruleset not in PRESETS:
        raise InvalidOptionsError(
            f"unknown ruleset {ruleset!r}: expected one of {', '.join(PRESETS)}"
        )
    base = PRESETS[ruleset]
    if overrides is None:
        return base
    if not isinstance(overrides, dict):
        raise InvalidOptionsError(f"options must be a JSON object, got {overrides!r}")
    changes: dict[str, object] = {}
    for name, raw in overrides.items():
        if name not in _KINDS:
            raise InvalidOptionsError(
                f"unknown option {name!r}: expected one of {', '.join(sorted(_KINDS))}"
            )
        changes[name] = _convert(name, raw)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]
