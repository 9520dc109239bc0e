"""The rules page: the rules of this table, in plain Swedish or English.

:func:`rules_page` writes the page from the table's actual :class:`RuleOptions`, so a
bytes-kille table reads the bytes-kille rules and a table that overrides an option of
its ruleset (a house rule) reads that rule, marked as one. Each sentence names the
options it rests on; a sentence whose options differ from the named ruleset's preset is
a house rule. :data:`COVERED` lists the options the page explains (a test checks that
every option is covered).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

from p2pkille.engine.options import (
    PRESETS,
    BuybackTiming,
    DealerRotation,
    HusuEffect,
    KukuEffect,
    Price,
    RedealRule,
    RuleOptions,
    Showdown,
    StockKuku,
    StockPass,
    SwappedKille,
)

__all__ = ["COVERED", "Paragraph", "rules_page"]


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One paragraph of the page: a heading (``head``) or text; ``house`` marks a
    house rule."""

    text: str
    head: bool = False
    house: bool = False


@dataclass(frozen=True, slots=True)
class _Rule:
    options: tuple[str, ...]
    sv: str
    en: str


_RULESETS: Final = {
    "wikipedia": ("reglerna i svenska Wikipedias artikel om Byteskille",
                  "the rules of the Swedish Wikipedia article on Byteskille"),
    "bytes-kille": ("reglerna för Bytes-Kille ur en kortspelsbok, med Fråge-Kille",
                    "the rules of Bytes-Kille from a card-game book, with Fråge-Kille"),
    "enkortskille": ("reglerna för Enkortskille", "the rules of Enkortskille"),
}


def _price(price: Price, stake: int, lang: str) -> str:
    sv = {Price.STAKE: f"insatsen ({stake})", Price.TWICE_STAKE: f"dubbla insatsen "
          f"({2 * stake})", Price.HALF_POT: "halva potten (avrundat uppåt)",
          Price.POT: "hela potten", Price.TWICE_POT: "dubbla potten"}
    en = {Price.STAKE: f"the stake ({stake})", Price.TWICE_STAKE: f"twice the stake "
          f"({2 * stake})", Price.HALF_POT: "half the pot (rounded up)",
          Price.POT: "the whole pot", Price.TWICE_POT: "twice the pot"}
    return (sv if lang == "sv" else en)[price]


_ORDINAL_SV: Final = ("första", "andra", "tredje", "fjärde", "femte")
_ORDINAL_EN: Final = ("1st", "2nd", "3rd", "4th", "5th")


def _prices(opts: RuleOptions, stake: int) -> tuple[str, str]:
    prices = opts.buyback_prices
    if len(set(prices)) == 1:
        return (f"Varje återköp kostar {_price(prices[0], stake, 'sv')}.",
                f"Each buy-back costs {_price(prices[0], stake, 'en')}.")
    sv = ", ".join(f"det {_ORDINAL_SV[i]} {_price(p, stake, 'sv')}"
                   for i, p in enumerate(prices[:5]))
    en = ", ".join(f"the {_ORDINAL_EN[i]} {_price(p, stake, 'en')}"
                   for i, p in enumerate(prices[:5]))
    return (f"Priset: {sv}; senare återköp kostar som det sista.",
            f"The price: {en}; later ones cost as much as the last.")


Item = tuple[str, str, str] | _Rule
"""A heading (Swedish, English, "") or a rule."""


def _the_game(opts: RuleOptions, stake: int, base: RuleOptions | None) -> list[Item]:
    """Dealing, turns, the cards' order, the dealer."""
    out: list[Item] = []
    add = out.append
    add(("Spelet", "The game", ""))
    add(_Rule(("min_players", "max_players"),
              f"{opts.min_players} till {opts.max_players} spelare.",
              f"{opts.min_players} to {opts.max_players} players."))
    add(_Rule((), f"Alla betalar insatsen, {stake}, till potten en gång när spelet börjar. "
                  "Alla får ett kort med baksidan upp; resten är högen. Förhand sitter till "
                  "vänster om given och börjar; sedan går turen medsols bland de levande. "
                  "Den som är på tur behåller kortet («Jag är nöjd!») eller bjuder nästa "
                  "levande spelare att byta. Den sista i turordningen kan inte byta och drar "
                  "i stället från högen («Jag går i lek!»).",
              f"Everyone pays the stake, {stake}, into the pot once, when the game starts. "
              "Everyone is dealt one card face down; the rest is the stock. Förhand sits left "
              "of the dealer and begins; the turn then goes clockwise among the live players. "
              "The player in turn keeps the card («Jag är nöjd!») or offers a swap to the "
              "next live player. The last player in turn cannot swap and draws from the "
              "stock instead («Jag går i lek!»)."))
    add(_Rule((), "Korten från högst till lägst: Kille, Kuku, Husar, Husu, Kavall, Värdshus, "
                  "12 ner till 1, Kransen, Blompottan, Blaren.",
              "The cards, highest first: Kille, Kuku, Husar, Husu, Kavall, Värdshus, 12 down "
              "to 1, Kransen, Blompottan, Blaren."))
    add(_Rule(("dealer_rotation",),
              "Nästa giv ges av den här givens förhand, även om den dog."
              if opts.dealer_rotation is DealerRotation.FORHAND else
              "Given går vidare till vänster, även till en spelare som är ute (den ger men "
              "spelar inte).",
              "The next hand is dealt by this hand's förhand, even if that player died."
              if opts.dealer_rotation is DealerRotation.FORHAND else
              "The deal passes to the left, even to a player who is out (who deals but does "
              "not play)."))

    return out


def _offered(opts: RuleOptions, stake: int, base: RuleOptions | None) -> list[Item]:
    """What a target's card does to an offer."""
    kuku_call = opts.kuku_call
    out: list[Item] = []
    add = out.append
    add(("När du blir bjuden att byta", "When you are offered a swap", ""))
    add(_Rule((), "Kortet du har avgör, inte din vilja: de här korten måste visas.",
              "Your card decides, not your will: these cards must be shown."))
    if opts.kuku is KukuEffect.STOP:
        add(_Rule(("kuku", "kuku_call"),
                  f"Kuku: inget byte, och ingen byter mer i given («{kuku_call}»).",
                  f"Kuku: no swap, and nobody swaps any more this hand («{kuku_call}»)."))
    else:
        add(_Rule(("kuku", "kuku_call"),
                  f"Kuku: alla byten i given går tillbaka och bytandet är slut; den som redan "
                  f"dött förblir död («{kuku_call}»).",
                  f"Kuku: every swap of the hand is undone and the swapping ends; whoever "
                  f"died already stays dead («{kuku_call}»)."))
    add(_Rule((), "Husar: inget byte; den som bjöd dör («Husar hugger!»).",
              "Husar: no swap; whoever offered dies («Husar hugger!»)."))
    if opts.husu is HusuEffect.SVINHUGG:
        add(_Rule(("husu",),
                  "Husu: «Svinhugg går igen!»: alla byten som förde det bjudna kortet i "
                  "given går tillbaka, och den som först bjöd ut kortet dör.",
                  "Husu: «Svinhugg går igen!»: every swap that carried the offered card this "
                  "hand is undone, and whoever first offered that card dies."))
    else:
        add(_Rule(("husu",), "Husu: inget byte; den som bjöd dör, som för Husar.",
                  "Husu: no swap; whoever offered dies, as with the Husar."))
    add(_Rule((), "Kavall och Värdshus: «förbi»: budet går vidare till nästa levande "
                  "spelare, och efter den sista till högen.",
              "Kavall and Värdshus: «förbi», the offer passes on to the next live player, "
              "and after the last one to the stock."))
    if opts.swapped_kille is SwappedKille.DIES:
        add(_Rule(("swapped_kille",),
                  "Kille: bytet sker med framsidan upp, och den som får Kille genom ett byte "
                  "dör genast.",
                  "Kille: the swap happens face up, and whoever gets the Kille by a swap dies "
                  "at once."))
    else:
        add(_Rule(("swapped_kille",),
                  "Kille: bytet sker med framsidan upp, och en Kille som kommit genom ett byte "
                  "är lägst vid visningen.",
                  "Kille: the swap happens face up, and a Kille got by a swap is the lowest "
                  "card at the showdown."))

    return out


def _the_draw(opts: RuleOptions, stake: int, base: RuleOptions | None) -> list[Item]:
    """The last player's draw from the stock."""
    out: list[Item] = []
    add = out.append
    add(("Draget ur högen", "The draw from the stock", ""))
    if opts.max_pick == 1:
        add(_Rule(("max_pick",), "Den som drar tar översta kortet i högen.",
                  "The drawer takes the top card of the stock."))
    else:
        add(_Rule(("max_pick",),
                  f"Den som drar väljer vilket av de {opts.max_pick} översta korten i högen "
                  f"som vänds upp.",
                  f"The drawer chooses which of the top {opts.max_pick} stock cards is turned "
                  f"up."))
    if opts.forhand_cuts:
        add(_Rule(("forhand_cuts",), "Före givens första drag får förhand kupera högen.",
                  "Before the hand's first draw, förhand may cut the stock."))
    else:
        add(_Rule(("forhand_cuts",), "Högen kuperas inte.", "The stock is not cut."))
    add(_Rule((), "Kortet som dras visas för alla.", "The drawn card is shown to everyone."))
    add(_Rule(("stock_pass",),
              "Kavall eller Värdshus: inget byte." if opts.stock_pass is StockPass.NO_EXCHANGE
              else "Kavall eller Värdshus läggs undan och nästa kort vänds upp.",
              "A Kavall or Värdshus: no exchange." if opts.stock_pass is StockPass.NO_EXCHANGE
              else "A Kavall or Värdshus is put aside and the next card is turned up."))
    add(_Rule(("stock_kuku",),
              "Kuku: inget byte, den som drar behåller sitt kort."
              if opts.stock_kuku is StockKuku.NO_EXCHANGE else
              "Kuku: alla byten i given går tillbaka och bytandet är slut.",
              "A Kuku: no exchange, the drawer keeps the card."
              if opts.stock_kuku is StockKuku.NO_EXCHANGE else
              "A Kuku: every swap of the hand is undone and the swapping ends."))
    add(_Rule(("husu",),
              "Husar dödar den som drar; Husu är ett svinhugg på det kortet."
              if opts.husu is HusuEffect.SVINHUGG else
              "Husar och Husu dödar den som drar.",
              "A Husar kills the drawer; a Husu is a svinhugg on the drawer's card."
              if opts.husu is HusuEffect.SVINHUGG else
              "A Husar or a Husu kills the drawer."))
    add(_Rule((), "En Kille ur högen tas och är högsta kortet. Ett annat kort tas, och det "
                  "gamla lämnar spelet. Tar högen slut blir det inget byte.",
              "A Kille from the stock is taken and is the highest card. Any other card is "
              "taken and the old one leaves play. If the stock runs out, there is no "
              "exchange."))

    return out


def _the_showdown(opts: RuleOptions, stake: int, base: RuleOptions | None) -> list[Item]:
    """Who dies when the cards are shown."""
    show_call = opts.showdown_call
    out: list[Item] = []
    add = out.append
    add(("Visningen", "The showdown", ""))
    if opts.showdown is Showdown.LOWEST:
        add(_Rule(("showdown", "showdown_call"),
                  f"Alla levande visar sina kort («{show_call}»), och den eller de med lägst "
                  f"kort dör, alltid.",
                  f"All live players show their cards («{show_call}»), and the player or "
                  f"players with the lowest card die, always."))
    else:
        kuku = opts.showdown is Showdown.KILLING_CARDS_KUKU
        add(_Rule(("showdown", "showdown_call"),
                  f"Alla levande visar sina kort («{show_call}»). Dödande kort är en Kille "
                  f"som inte kommit genom byte, {'Kuku, ' if kuku else ''}Husu och Husar. "
                  f"Visas inget dör ingen; visas ett dör lägsta kortet; visas två eller fler "
                  f"dör de två lägsta korten. Lika kort på en dödande rang dör alla.",
                  f"All live players show their cards («{show_call}»). Killing cards are a "
                  f"Kille not got by a swap, {'the Kuku, ' if kuku else ''}the Husu and the "
                  f"Husar. If none is shown, nobody dies; if one is shown, the lowest card "
                  f"dies; if two or more are shown, the two lowest cards die. Equal cards at "
                  f"a dying rank all die."))
    add(_Rule((), "Ett dödsfall lämnar aldrig en giv utan levande spelare.",
              "A death never leaves a hand without a live player."))

    return out


def _buying_back(opts: RuleOptions, stake: int, base: RuleOptions | None) -> list[Item]:
    """Buy-backs, redeals, card sales and the end."""
    out: list[Item] = []
    add = out.append
    add(("Återköp och slutet", "Buying back in, and the end", ""))
    limit = opts.buyback_limit
    if limit == 0:
        add(_Rule(("buyback_limit",), "Vid det här bordet finns inga återköp.",
                  "This table has no buy-backs."))
    else:
        times_sv = "hur många gånger som helst" if limit is None else (
            "en gång" if limit == 1 else f"högst {limit} gånger")
        times_en = "any number of times" if limit is None else (
            "once" if limit == 1 else f"at most {limit} times")
        when = opts.buyback_timing is BuybackTiming.IMMEDIATE
        add(_Rule(("buyback_limit", "buyback_timing"),
                  f"Den som dött får köpa in sig igen {times_sv}, "
                  + ("men bara direkt efter given där den dog." if when else
                     "före vilken senare giv som helst, även efter att ha stått över några.")
                  + " Den som inte kan betala kan inte köpa in sig.",
                  f"A player who died may buy back in {times_en}, "
                  + ("but only right after the hand in which they died." if when else
                     "before any later hand, even after sitting some hands out.")
                  + " A player who cannot pay cannot buy back in."))
        sv, en = _prices(opts, stake)
        add(_Rule(("buyback_prices",), sv, en))
    if opts.buybacks_close_at:
        n = opts.buybacks_close_at
        add(_Rule(("buybacks_close_at",),
                  f"När en giv lämnar {n} eller färre spelare kvar är återköpen slut för gott.",
                  f"Once a hand leaves {n} or fewer players, buy-backs end for good."))
    elif base is not None and base.buybacks_close_at:
        add(_Rule(("buybacks_close_at",), "Återköpen tar aldrig slut i förtid.",
                  "Buy-backs never end early."))
    if opts.two_left_buyin:
        add(_Rule(("two_left_buyin",),
                  "När en givs dödsfall lämnar två spelare kvar får alla som är ute köpa in "
                  "sig för dubbla potten; den som avböjer förblir ute.",
                  "When a hand's deaths leave two players, everyone out of the game may buy "
                  "back in for twice the pot; whoever declines stays out."))
    elif base is not None and base.two_left_buyin:
        add(_Rule(("two_left_buyin",), "Det finns inget återköp när två är kvar.",
                  "There is no buy-in when two are left."))
    if opts.redeal is RedealRule.BOTH_OTHERS:
        add(_Rule(("redeal", "redeal_players"),
                  f"Med {opts.redeal_players} spelare kvar får den som är på tur, före sitt "
                  f"drag, begära omgiv («Bättre kort!»). De två andra svarar i tur och "
                  f"ordning, och båda måste godta. En omgiv avslutar given: ingen dör, inga "
                  f"marker flyttas, samma giv ger igen. En begäran per giv.",
                  f"With {opts.redeal_players} players left, the player in turn may, before "
                  f"moving, ask for a redeal («Bättre kort!»). The two others answer in turn, "
                  f"and both must agree. A redeal ends the hand: nobody dies, no chips move, "
                  f"the same dealer deals again. One request per hand."))
    elif opts.redeal is RedealRule.FRAGE_KILLE:
        add(_Rule(("redeal", "redeal_players"),
                  f"Fråge-Kille: med {opts.redeal_players} spelare kvar får den som är på "
                  f"tur, före sitt drag, begära omgiv («Bättre kort!»). Den som ger svarar "
                  f"först (eller nästa i tur, om den som frågar ger); «Det beror på» lämnar "
                  f"beslutet till den tredje. Godtar alla avslutas given: ingen dör, inga "
                  f"marker flyttas, samma giv ger igen. En begäran per giv; efter ett nej "
                  f"blir det en vanlig bytesrunda och visning.",
                  f"Fråge-Kille: with {opts.redeal_players} players left, the player in turn "
                  f"may, before moving, ask for a redeal («Bättre kort!»). The dealer answers "
                  f"first (or the next in turn, when the asker deals); «Det beror på» (it "
                  f"depends) leaves the decision to the third player. If all agree, the hand "
                  f"ends: nobody dies, no chips move, the same dealer deals again. One request "
                  f"per hand; after a no comes an ordinary round of swaps and the showdown."))
    else:
        add(_Rule(("redeal",), "Det finns ingen omgiv.", "There are no redeals."))
    if opts.card_selling:
        add(_Rule(("card_selling",),
                  "På sin tur, före sitt drag, får en levande spelare bjuda ut sitt kort för "
                  "ett pris till någon som är ute (med två kvar: till den andra). Köparen "
                  "betalar, tar platsen med kortet och spelar vidare; säljaren lämnar spelet "
                  "och får aldrig köpa in sig igen. Med två kvar avslutar en försäljning "
                  "spelet.",
                  "On the own turn, before moving, a live player may offer the card at a price "
                  "to a player who is out (with two left, to the other player). The buyer "
                  "pays, takes the seat with the card and plays on; the seller leaves the game "
                  "and may never buy back in. With two left, a sale ends the game."))
    elif base is not None and base.card_selling:
        add(_Rule(("card_selling",), "Ingen får sälja sitt kort.", "Nobody may sell the card."))
    add(_Rule((), "Den sista kvar tar hela potten.", "The last player left takes the whole pot."))
    return out


def _rules(opts: RuleOptions, stake: int, base: RuleOptions | None) -> list[Item]:
    """The page as headings and rules, in order; a rule the preset ``base`` has and the
    table turned off is said too."""
    return [item for section in (_the_game, _offered, _the_draw, _the_showdown, _buying_back)
            for item in section(opts, stake, base)]


#: The options the page explains, each in the sentences that name it.
COVERED: Final = frozenset(name for preset in PRESETS.values()
                           for item in _rules(preset, 1, preset)
                           if isinstance(item, _Rule) for name in item.options)


def rules_page(options: RuleOptions, ruleset: str, stake: int, lang: str) -> list[Paragraph]:
    """The rules of a table of ``ruleset`` playing ``options`` (the preset, or with house
    rules) at ``stake``, in ``lang``."""
    base = PRESETS.get(ruleset)
    changed = {f.name for f in dataclasses.fields(RuleOptions)
               if base is None or getattr(options, f.name) != getattr(base, f.name)}
    def sv_en(pair: tuple[str, str]) -> str:
        return pair[0] if lang == "sv" else pair[1]

    named = sv_en(_RULESETS.get(ruleset, (ruleset, ruleset)))
    out = [Paragraph(sv_en((f"Reglerna vid det här bordet: {ruleset}",
                            f"The rules at this table: {ruleset}")), head=True)]
    if changed and base is not None:
        out.append(Paragraph(sv_en((f"Bordet spelar {named}, med husregler: de är märkta "
                                    f"[husregel].",
                                    f"The table plays {named}, with house rules: they are "
                                    f"marked [house rule]."))))
    elif base is not None:
        out.append(Paragraph(sv_en((f"Bordet spelar {named}, utan husregler.",
                                    f"The table plays {named}, with no house rules."))))
    mark = sv_en(("[husregel] ", "[house rule] "))
    for item in _rules(options, stake, base):
        if isinstance(item, tuple):
            out.append(Paragraph(sv_en((item[0], item[1])), head=True))
            continue
        house = base is not None and bool(set(item.options) & changed)
        text = item.sv if lang == "sv" else item.en
        out.append(Paragraph(mark + text if house else text, house=house))
    return out
