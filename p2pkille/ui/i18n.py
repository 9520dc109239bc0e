"""The screen's texts in Swedish and English.

:func:`text` looks a key up for a language and fills its ``{fields}``; a missing key
or language is a bug (``KeyError``), never a silent fallback. :func:`default_lang`
reads the locale from the environment it is given (``LC_ALL``, ``LC_MESSAGES``,
``LANG``, in that order): Swedish for ``sv*``, else English.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from p2pkille.engine.cards import Rank

__all__ = ["LANGS", "default_lang", "rank_name", "text"]

LANGS: Final = ("sv", "en")

_RANK_SV: Final = {
    Rank.KILLE: "Kille (Narren)", Rank.KUKU: "Kuku", Rank.HUSAR: "Husar", Rank.HUSU: "Husu",
    Rank.KAVALL: "Kavall", Rank.VARDSHUS: "Värdshus", Rank.KRANSEN: "Kransen",
    Rank.BLOMPOTTAN: "Blompottan", Rank.BLAREN: "Blaren",
}
_RANK_EN: Final = {
    Rank.KILLE: "Kille (the Fool)", Rank.KUKU: "Kuku (cuckoo)", Rank.HUSAR: "Husar (hussar)",
    Rank.HUSU: "Husu (pig)", Rank.KAVALL: "Kavall (cavalier)",
    Rank.VARDSHUS: "Värdshus (inn)", Rank.KRANSEN: "Kransen (wreath)",
    Rank.BLOMPOTTAN: "Blompottan (flowerpot)", Rank.BLAREN: "Blaren (bladder)",
}


def rank_name(rank: Rank, lang: str) -> str:
    names = _RANK_SV if lang == "sv" else _RANK_EN
    return names.get(rank, rank.id)


_TEXTS: Final[dict[str, tuple[str, str]]] = {
    "title": ("p2pkille - Byteskille utan server", "p2pkille - Byteskille without a server"),
    "table": ("Bord {table}, regler {ruleset}, insats {stake}", "Table {table}, rules {ruleset}, "
              "stake {stake}"),
    "hand": ("Giv {n}", "Hand {n}"),
    "pot": ("Potten: {pot}", "Pot: {pot}"),
    "chips": ("{chips} marker", "{chips} chips"),
    "buybacks": ("köpt in {n}", "bought back {n}"),
    "alive": ("lever", "alive"),
    "dead": ("död", "dead"),
    "out": ("ute", "out"),
    "dealer": ("giv", "dealer"),
    "forhand": ("förhand", "förhand"),
    "you": ("du", "you"),
    "waiting_for": ("Väntar på {who} ({secs} s)", "Waiting for {who} ({secs} s)"),
    "waiting_you": ("Din tur! ({secs} s)", "Your turn! ({secs} s)"),
    "waiting_step": ("Väntar på {who}: {step} ({secs} s)", "Waiting for {who}: {step} ({secs} s)"),
    "step_keys": ("nycklar för given", "the hand's keys"),
    "step_shuffle": ("blandning med bevis", "the proven shuffle"),
    "step_deal": ("utdelning", "the deal"),
    "step_reveal": ("avslöjande för granskningen", "the reveal for the audit"),
    "step_sign": ("signaturer på kontrollpunkten", "the checkpoint signatures"),
    "step_stock": ("kortet ur högen", "the stock card"),
    "step_showdown": ("korten vid visningen", "the cards at the showdown"),
    "l_swap": ("byte", "swap"),
    "l_sell": ("sälj för {price}", "sell for {price}"),
    "l_agree": ("godta omgiv", "agree to the redeal"),
    "l_refuse": ("vägra omgiv", "refuse the redeal"),
    "l_buy": ("köp kortet", "buy the card"),
    "l_nobuy": ("köp inte", "do not buy"),
    "l_cut": ("kupera vid {n}", "cut at {n}"),
    "l_buyin": ("köp in för {price}", "buy back in for {price}"),
    "l_decline": ("köp inte in", "do not buy back in"),
    "your_card": ("Ditt kort", "Your card"),
    "no_card": ("(inget kort just nu)", "(no card right now)"),
    "hidden_card": ("(kortet är på väg)", "(the card is on its way)"),
    "rank_of": ("rang {n} av 21", "rank {n} of 21"),
    "swapped_kille": ("fick killen genom byte: lägst!", "got the kille by a swap: lowest!"),
    "moves": ("Dina drag", "Your moves"),
    "no_moves": ("Inget att välja just nu.", "Nothing to choose right now."),
    "log": ("Händelser", "What happened"),
    "trust_ok": ("Giv {n}: verifierad av alla {count} spelare (kontrollpunkt {cp})",
                 "Hand {n}: verified by all {count} peers (checkpoint {cp})"),
    "trust_partial": ("Giv {n}: bara {agreed} av {count} spelare signerade",
                      "Hand {n}: only {agreed} of {count} peers signed"),
    "trust_void": ("Giv {n} ogiltig: {who} anklagar {accused}: {reason} ({verdict})",
                   "Hand {n} voided: {who} accuses {accused}: {reason} ({verdict})"),
    "trust_void_plain": ("Giv {n} ogiltig.", "Hand {n} voided."),
    "expelled": ("Utesluten: {who}", "Expelled: {who}"),
    "died": ("Död i giv {n}: {who}", "Died in hand {n}: {who}"),
    "nobody": ("ingen", "nobody"),
    "winner": ("{who} vinner spelet och tar potten!", "{who} wins the game and takes the pot!"),
    "game_over": ("Spelet är slut. Tryck q för att avsluta.", "The game is over. Press q to quit."),
    "starting": ("Spelarna kommer överens om platser och giv ...",
                 "The peers agree on seats and the first dealer ..."),
    "too_small": ("Fönstret är för litet: {w}x{h}, behöver minst {mw}x{mh}. Gör det större.",
                  "The window is too small: {w}x{h}, need at least {mw}x{mh}. Make it larger."),
    "footer": ("h hjälp  a granskning  q avsluta", "h help  a audit  q quit"),
    "footer_back": ("Esc eller h: tillbaka", "Esc or h: back"),
    # moves
    "k_keep": ("k  behåll (\"Jag är nöjd!\")", "k  keep (\"Jag är nöjd!\")"),
    "k_swap": ("s  byt med nästa spelare", "s  swap with the next player"),
    "k_draw": ("s  dra från högen (\"Jag går i lek!\")",
               "s  draw from the stock (\"Jag går i lek!\")"),
    "k_pick": ("1-{n}  välj vilket av de {n} översta korten du drar",
               "1-{n}  pick which of the top {n} stock cards you draw"),
    "k_redeal": ("r  begär omgiv (\"Bättre kort!\")", "r  ask for a redeal (\"Bättre kort!\")"),
    "k_sell": ("b  sälj kortet till {who} för {price}", "b  sell the card to {who} for {price}"),
    "k_agree": ("j  godta omgiv", "y  agree to the redeal"),
    "k_refuse": ("n  vägra omgiv", "n  refuse the redeal"),
    "k_depends": ("d  \"Det beror på.\"", "d  \"Det beror på.\" (it depends)"),
    "k_buy": ("j  köp kortet av {who} för {price}", "y  buy {who}'s card for {price}"),
    "k_nobuy": ("n  köp inte", "n  do not buy"),
    "k_cut": ("0  kupera inte, 1-{n}  kupera högen där", "0  no cut, 1-{n}  cut the stock there"),
    "k_buyin": ("j  köp in igen för {price}", "y  buy back in for {price}"),
    "k_decline": ("n  köp inte in (lämna spelet)", "n  do not buy back (leave the game)"),
    # why a key does nothing
    "why_not_yours": ("Inte din tur: vi väntar på {who}.", "Not your turn: we wait for {who}."),
    "why_nothing": ("Inget att välja just nu.", "Nothing to choose right now."),
    "why_key": ("Tangenten {key} gör inget nu. Möjliga: {keys}.",
                "The key {key} does nothing now. Open: {keys}."),
    "why_no_pick": ("Du kan inte välja kort: du drar inte från högen, eller reglerna tillåter "
                    "bara översta kortet.", "You cannot pick a card: you do not draw from the "
                    "stock, or this ruleset lets the drawer take the top card only."),
    "why_pick_range": ("Välj 1-{n}.", "Pick 1-{n}."),
    "why_no_redeal": ("Omgiv kan inte begäras nu (bara med {n} spelare kvar, före första drag).",
                      "A redeal cannot be asked now (only with {n} players left, before the "
                      "first move)."),
    "why_no_sell": ("Ingen kan köpa ditt kort nu (kortförsäljning kräver {rule}).",
                    "Nobody may buy your card now (card selling needs {rule})."),
    "why_no_depends": ("\"Det beror på\" går bara som första svar i Fråge-Kille.",
                       "\"It depends\" is only the first answer in Fråge-Kille."),
    "why_cut_range": ("Högen har {n} kort: kupera vid 1-{m}, eller 0.",
                      "The stock has {n} cards: cut at 1-{m}, or 0."),
    "why_poor": ("Du har {chips} marker, det kostar {price}.",
                 "You have {chips} chips; it costs {price}."),
    "sent": ("Skickat: {what}", "Sent: {what}"),
    "vanished": ("{who} svarar inte sedan {secs} s: spelaren kan ha försvunnit.",
                 "{who} has not answered for {secs} s: the peer may have vanished."),
    "failed": ("Bordet kan inte fortsätta: {reason}", "The table cannot go on: {reason}"),
    "audit_title": ("Granskning av giv {n}", "Audit of hand {n}"),
    "audit_none": ("Ingen giv är klar än.", "No hand is finished yet."),
    "audit_steps": ("Blandningssteg kontrollerade: {n} (ett per spelare, med bevis)",
                    "Shuffle steps checked: {n} (one per peer, each proven)"),
    "audit_shares": ("Dekrypteringsandelar med DLEQ-bevis kontrollerade: {n}",
                     "Decryption shares with DLEQ proofs checked: {n}"),
    "audit_sigs": ("Signaturer på kontrollpunkten: {n} av {count}",
                   "Checkpoint signatures: {n} of {count}"),
    "audit_cp": ("Kontrollpunkt: {cp}", "Checkpoint hash: {cp}"),
    "audit_faces": ("Utdelat (visat av granskningen efter avslöjandet): {faces}",
                    "Dealt (as the audit after the reveal shows): {faces}"),
    "audit_older": ("Tidigare givar: {hands}", "Earlier hands: {hands}"),
    "help_title": ("Hjälp: regler och tangenter", "Help: rules and keys"),
    "help_rules": (
        "Alla får ett kort. I tur och ordning behåller man (k) eller byter med nästa levande "
        "spelare (s). Blockerande kort visas: Kuku stoppar bytena, Husar dödar den som bjöd, "
        "Husu slår tillbaka längs bytena (svinhugg), Kavall och Värdshus skickar budet vidare. "
        "Den sista drar från högen. Vid visningen dör den med lägst kort; killen är högst men "
        "lägst om den kom genom ett byte. Döda kan köpa in sig. Den sista kvar tar potten.",
        "Everyone gets one card. In turn you keep it (k) or swap with the next live player "
        "(s). Blocking cards are shown: the kuku stops the swapping, the husar kills the "
        "one who offered, the husu strikes back along the swaps (svinhugg), kavall and "
        "värdshus pass the offer on. The last player draws from the stock. At the showdown "
        "the lowest card dies; the kille is highest but lowest if it came by a swap. The dead "
        "may buy back in. The last one standing takes the pot."),
    "help_order": ("Korten från högst till lägst: {ranks}", "Cards, highest first: {ranks}"),
    "help_options": ("Bordets regler ({ruleset}):", "This table's rules ({ruleset}):"),
    "help_keys": ("Tangenter: k behåll, s byt/dra, 1-4 välj kort, r omgiv, b sälj, j/n svar, "
                  "d det beror på, 0-9 kupera, a granskning, h hjälp, l språk, q avsluta.",
                  "Keys: k keep, s swap/draw, 1-4 pick a card, r redeal, b sell, y/n answers, "
                  "d it depends, 0-9 cut, a audit, h help, l language, q quit."),
    "help_trust": ("Ingen server och ingen betrodd giv: korten blandas och delas med kryptografi, "
                   "och varje giv granskas av alla spelare innan den räknas.",
                   "No server and no trusted dealer: the cards are shuffled and dealt with "
                   "cryptography, and every hand is audited by every peer before it counts."),
    "quit_confirm": ("Tryck q igen för att lämna bordet.", "Press q again to leave the table."),
}


def text(name: str, lang: str, **fields: object) -> str:
    """The text ``name`` in ``lang`` (``sv`` or ``en``) with ``fields`` filled in."""
    sv, en = _TEXTS[name]
    if lang not in LANGS:
        raise KeyError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
    template = sv if lang == "sv" else en
    return template.format(**fields) if fields else template


def default_lang(env: Mapping[str, str]) -> str:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            return "sv" if value.lower().startswith("sv") else "en"
    return "en"
