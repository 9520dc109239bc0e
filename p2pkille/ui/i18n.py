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
from p2pkille.ui.words import LANGS, Cast, card_name, say

__all__ = ["LANGS", "default_lang", "rank_name", "text"]

def rank_name(rank: Rank, lang: str) -> str:
    """The card's display name (the card box shows it in capitals; the narration says it
    the same way)."""
    return card_name(rank, lang)


_TEXTS: Final[dict[str, tuple[str, str]]] = {
    "title": ("p2pkille - Byteskille utan server", "p2pkille - Byteskille without a server"),
    # the table screen
    "table_title": ("p2pkille · {table} · {ruleset} · insats {stake} · {mode}",
                    "p2pkille · {table} · {ruleset} · stake {stake} · {mode}"),
    "mode_audit": ("granskat bord", "audit table"),
    "mode_strict": ("strikt bord", "strict table"),
    "local_title": ("du och {n:bot|botar}", "you and {n:bot|bots}"),
    "hand": ("Giv {n}", "Hand {n}"),
    "pot": ("Potten: {pot}", "Pot: {pot}"),
    "chips": ("{chips:mark|marker}", "{chips:chip|chips}"),
    "buybacks": ("köpt in {n}", "bought back {n}"),
    "alive": ("lever", "alive"),
    "dead": ("död", "dead"),
    "out": ("ute", "out"),
    "dealer": ("giv", "dealer"),
    "forhand": ("förhand", "förhand"),
    "you": ("du", "you"),
    "waiting_for": ("Väntar på {who:obj} ({left} s kvar)", "Waiting for {who} ({left} s left)"),
    "waiting_you": ("Din tur! ({left} s kvar)", "Your turn! ({left} s left)"),
    "waiting_step": ("Väntar på {who:obj}: {step} ({left} s kvar)",
                     "Waiting for {who}: {step} ({left} s left)"),
    "step_keys": ("nycklar för given", "the hand's keys"),
    "step_shuffle": ("blandning med bevis", "the proven shuffle"),
    "step_deal": ("utdelning", "the deal"),
    "step_reveal": ("avslöjande för granskningen", "the reveal for the audit"),
    "step_sign": ("signaturer på kontrollpunkten", "the checkpoint signatures"),
    "step_stock": ("kortet ur högen", "the stock card"),
    "step_showdown": ("korten vid visningen", "the cards at the showdown"),
    "l_swap": ("byte", "swap"),
    "l_sell": ("sälj till {a:obj} för {price:mark|marker}", "sell to {a} for {price:chip|chips}"),
    "l_agree": ("godta omgiv", "agree to the redeal"),
    "l_refuse": ("vägra omgiv", "refuse the redeal"),
    "l_buy": ("köp kortet", "buy the card"),
    "l_nobuy": ("köp inte", "do not buy"),
    "l_cut": ("kupera vid {n}", "cut at {n}"),
    "l_buyin": ("köp in dig för {price:mark|marker}", "buy back in for {price:chip|chips}"),
    "l_leave": ("lämna spelet", "leave the game"),
    "l_wait": ("stå över den här given", "sit this hand out"),
    "your_card": ("Ditt kort", "Your card"),
    "no_card": ("(inget kort just nu)", "(no card right now)"),
    "hidden_card": ("(kortet är på väg)", "(the card is on its way)"),
    "rank_of": ("rang {n} av 21", "rank {n} of 21"),
    "swapped_kille": ("fick Kille genom byte: lägst!", "got the Kille by a swap: lowest!"),
    "moves": ("Dina drag", "Your moves"),
    "log": ("Händelser", "What happened"),
    "log_hint": ("PgUp/↑ äldre", "PgUp/↑ older"),
    "log_scrolled": ("{n:rad|rader} nyare nedanför, End: senaste",
                     "{n:newer line|newer lines} below, End: newest"),
    "more_below": ("… mer nedanför: ↓/PgDn", "… more below: ↓/PgDn"),
    "trust_ok": ("Giv {n}: verifierad av alla {count} spelare (kontrollpunkt {cp})",
                 "Hand {n}: verified by all {count} peers (checkpoint {cp})"),
    "trust_ok_two": ("Giv {n}: verifierad av båda spelarna (kontrollpunkt {cp})",
                     "Hand {n}: verified by both peers (checkpoint {cp})"),
    "trust_partial": ("Giv {n}: bara {agreed} av {count} spelare signerade",
                      "Hand {n}: only {agreed} of {count} peers signed"),
    "trust_void": ("Giv {n} ogiltig: se Händelser", "Hand {n} voided: see What happened"),
    "died": ("Död i giv {n}: {who}", "Died in hand {n}: {who}"),
    "winner": ("{a} vinner spelet och tar potten!", "{a} {a:wins|win} the game and "
               "{a:takes|take} the pot!"),
    "game_over": ("Spelet är slut. Tryck q för att avsluta.", "The game is over. Press q to quit."),
    "log_saved": ("Spelet är loggat i {path}.", "The game is logged in {path}."),
    "log_verify": ("Kontrollera det med: p2pkille verify {path}",
                   "Check it with: p2pkille verify {path}"),
    "log_failed": ("Spelet loggades inte: {reason}", "The game was not logged: {reason}"),
    "starting": ("Spelarna kommer överens om platser och giv ...",
                 "The peers agree on seats and the first dealer ..."),
    "too_small": ("Fönstret är för litet: {w}x{h}, behöver minst {mw}x{mh}. Gör det större.",
                  "The window is too small: {w}x{h}, need at least {mw}x{mh}. Make it larger."),
    "footer": ("h hjälp  a granskning  l english  PgUp/PgDn/↑↓ bläddra  q avsluta",
               "h help  a audit  l svenska  PgUp/PgDn/↑↓ scroll  q quit"),
    "footer_back": ("Esc eller h: tillbaka   PgUp/PgDn/↑↓: bläddra",
                    "Esc or h: back   PgUp/PgDn/↑↓: scroll"),
    # moves
    "k_keep": ("k  behåll («Jag är nöjd!»)", "k  keep («Jag är nöjd!»)"),
    "k_swap": ("s  byt med nästa spelare", "s  swap with the next player"),
    "k_draw": ("s  dra från högen («Jag går i lek!»)", "s  draw from the stock («Jag går i lek!»)"),
    "k_pick": ("1-{n}  välj vilket av de {n} översta korten du drar",
               "1-{n}  pick which of the top {n} stock cards you draw"),
    "k_redeal": ("r  begär omgiv («Bättre kort!»)", "r  ask for a redeal («Bättre kort!»)"),
    "k_sell": ("b  sälj kortet (välj köpare och pris)",
               "b  sell your card (choose the buyer and the price)"),
    "sale_title": ("Sälj ditt kort", "Sell your card"),
    "sale_to": ("till: {to} ({chips:mark|marker})", "to: {to} ({chips:chip|chips})"),
    "sale_more": ("(↑/↓ annan köpare)", "(↑/↓ another buyer)"),
    "sale_price": ("pris:", "price:"),
    "sale_price_keys": ("(siffror, Backsteg)", "(digits, Backspace)"),
    "sale_keys": ("Enter: bjud ut kortet   Esc: avbryt", "Enter: offer the card   Esc: cancel"),
    "sale_cancelled": ("Ingen försäljning.", "No sale."),
    "why_sale_key": ("Tangenten {key} gör inget här: ↑/↓ köpare, siffror pris, Enter, Esc.",
                     "The key {key} does nothing here: ↑/↓ buyer, digits price, Enter, Esc."),
    "why_sale_price": ("Skriv ett pris (0 eller mer).", "Type a price (0 or more)."),
    "why_sale_poor": ("{a} har bara {n:mark|marker} och kan inte betala {price}.",
                      "{a} {a:has|have} only {n:chip|chips} and cannot pay {price}."),
    "k_agree": ("j  godta omgiv", "y  agree to the redeal"),
    "k_refuse": ("n  vägra omgiv", "n  refuse the redeal"),
    "k_depends": ("d  «Det beror på.»", "d  «Det beror på.» (it depends)"),
    "k_buy": ("j  köp kortet av {a:obj} för {price:mark|marker}",
              "y  buy {a:gen} card for {price:chip|chips}"),
    "k_nobuy": ("n  köp inte", "n  do not buy"),
    "k_cut": ("0  kupera inte, 1-{n}  kupera högen där", "0  no cut, 1-{n}  cut the stock there"),
    "k_buyin": ("j  köp in dig igen för {price:mark|marker}",
                "y  buy back in for {price:chip|chips}"),
    "k_decline": ("n  köp inte in dig (lämna spelet)", "n  do not buy back in (leave the game)"),
    "k_wait": ("w  stå över den här given (du får frågan igen före nästa)",
               "w  sit this hand out (you are asked again before the next)"),
    "k_leave": ("n  lämna spelet för gott (ingen mer fråga)",
                "n  leave the game for good (no more asking)"),
    "buyin_ask": ("Köpa in dig igen för {price:mark|marker}? Du har {chips:mark|marker}{count}.",
                  "Buy back in for {price:chip|chips}? You have {chips:chip|chips}{count}."),
    "buyin_count": ("; det blir återköp {nth}{of}", "; it would be buy-back {nth}{of}"),
    "buyin_of": (" av {n}", " of {n}"),
    "buyin_two_left": ("; två är kvar, så priset är dubbla potten",
                       "; two are left, so the price is twice the pot"),
    # why a key does nothing
    "why_not_yours": ("Inte din tur: vi väntar på {who:obj}.", "Not your turn: we wait for {who}."),
    "why_nothing": ("Inget att välja just nu.", "Nothing to choose right now."),
    "why_key": ("Tangenten {key} gör inget nu. Möjliga: {keys}.",
                "The key {key} does nothing now. Open: {keys}."),
    "why_no_pick": ("Du kan inte välja kort: du drar inte från högen, eller reglerna tillåter "
                    "bara översta kortet.", "You cannot pick a card: you do not draw from the "
                    "stock, or this ruleset lets the drawer take the top card only."),
    "why_pick_range": ("Välj 1-{n}.", "Pick 1-{n}."),
    "why_no_redeal": ("Omgiv kan inte begäras nu (bara med {n} spelare kvar, före första drag, "
                      "en gång per giv).",
                      "A redeal cannot be asked now (only with {n} players left, before the "
                      "first move, once a hand)."),
    "why_no_sell": ("Ingen kan köpa ditt kort nu: ingen är ute, och du säljer före ditt drag.",
                    "Nobody may buy your card now: nobody is out, and you sell before your "
                    "move."),
    "why_no_selling": ("Vid det här bordet säljer man inte sitt kort.",
                       "Cards are not sold at this table."),
    "why_no_depends": ("«Det beror på» går bara som första svar i Fråge-Kille.",
                       "«Det beror på» (it depends) is only the first answer in Fråge-Kille."),
    "why_cut_range": ("Högen har {n} kort: kupera vid 1-{m}, eller 0.",
                      "The stock has {n} cards: cut at 1-{m}, or 0."),
    "sent": ("Skickat: {what}", "Sent: {what}"),
    "vanished": ("{who} har inte svarat på {secs} s: {who:spelaren|spelarna} kan ha "
                 "försvunnit utan att lämna bordet. Bordet väntar tills tiden är ute ({left} s "
                 "kvar), sedan röstar ni andra ut {who:obj} och spelar vidare.",
                 "{who} {who:has|have} not answered for {secs} s: {who:the peer|the peers} may "
                 "have vanished without leaving the table. The table waits until the time is "
                 "up ({left} s left), then the rest of you vote {who:obj} out and play on."),
    "gone": ("Anslutningen till {who:obj} stängdes, utan att {who} lämnade bordet (en krasch "
             "eller nätet): bordet spelar vidare tills det behöver {who:obj}, väntar då ut "
             "tidsgränsen (upp till {limit} s) och röstar sedan ut {who:obj}.",
             "The connection to {who:obj} closed without {who:obj} leaving the table (a crash, "
             "or the network): the table plays on until it needs {who:obj}, then waits out "
             "the time-out (up to {limit} s) and votes {who:obj} out."),
    "no_majority": ("{who} svarar inte, och ni andra är inte fler än hälften av de {n} "
                    "med nyckel i given:",
                    "{who} {who:is|are} silent, and the rest of you are no majority of the "
                    "hand's {n} key holders:"),
    "no_majority_hint": ("ingen kan döma ut deras tid (det ser ut som ett avbrott i nätet). "
                         "Vänta på dem, eller avsluta.",
                         "nobody can agree their time-out (it looks like a split network). "
                         "Wait for them, or quit."),
    "failed": ("Bordet kan inte fortsätta: {reason}", "The table cannot go on: {reason}"),
    "quit_confirm": ("Tryck q igen för att lämna bordet (eller Ctrl-C); en annan tangent "
                     "stannar kvar.",
                     "Press q again to leave the table (or Ctrl-C); any other key stays."),
    "quit_confirm_wait": (
        "Tryck q igen för att lämna bordet (eller Ctrl-C); en annan tangent stannar kvar. Du "
        "spelar fortfarande: vid ett bord med andra får de ett signerat besked om att du "
        "lämnat, avgör din plats direkt (en giv du har kort i blir ogiltig) och spelar "
        "vidare utan dig.",
        "Press q again to leave the table (or Ctrl-C); any other key stays. You still play: "
        "at a table with other people, they get a signed word that you left, settle your "
        "seat at once (a hand you hold cards in is voided) and play on without you."),
    "audit_players": ("Spelarna och deras nycklar:", "The players and their keys:"),
    "audit_player": ("{player}: nyckel {fp}{bot}", "{player}: key {fp}{bot}"),
    "audit_bot": (" (en bot)", " (a bot)"),
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
    "audit_proofs": ("Bevis kontrollerade (blandningar och svar): {n}. Strikt bord: inga nycklar "
                     "avslöjas, kort som ingen regel visade förblir hemliga.",
                     "Proofs checked (shuffles and answers): {n}. Strict table: no key is "
                     "revealed; cards no rule showed stay secret."),
    "audit_void": ("Giv {n} ogiltig:", "Hand {n} voided:"),
    "audit_accusation": ("{kind}: {what} ({verdict})", "{kind}: {what} ({verdict})"),
    "help_title": ("Hjälp: regler och tangenter", "Help: rules and keys"),
    "help_keys_title": ("Tangenter", "Keys"),
    "help_keys": ("k behåll, s byt eller dra, 1-4 välj kort ur högen, r omgiv, b sälj, j/n svar, "
                  "w stå över en giv, d det beror på, 0-9 kupera, a granskning, h hjälp, "
                  "l språk, PgUp/PgDn/↑/↓/Home/End bläddra, q avsluta (Ctrl-C likaså).",
                  "k keep, s swap or draw, 1-4 pick a stock card, r redeal, b sell, y/n "
                  "answers, w sit a hand out, d it depends, 0-9 cut, a audit, h help, "
                  "l language, PgUp/PgDn/↑/↓/Home/End scroll, q quit (Ctrl-C too)."),
    "help_trust_title": ("Ingen server", "No server"),
    "help_trust": ("Ingen server och ingen betrodd giv: korten blandas och delas med kryptografi, "
                   "och varje giv granskas av alla spelare innan den räknas. Efter granskningen "
                   "är alla givens kort offentliga.",
                   "No server and no trusted dealer: the cards are shuffled and dealt with "
                   "cryptography, and every hand is audited by every peer before it counts. "
                   "After its audit every card of the hand is public."),
    "help_trust_strict": (
        "Ingen server och ingen betrodd giv: varje blandning och varje svar bevisas med "
        "nollkunskapsbevis när det görs, och ingen nyckel avslöjas: kort som ingen regel "
        "visade förblir hemliga även efter given.",
        "No server and no trusted dealer: every shuffle and every answer is proved in zero "
        "knowledge as it is made, and no key is ever revealed: cards no rule showed stay "
        "secret after the hand too."),
    "help_leave": ("Att lämna: q q (eller Ctrl-C) lämnar bordet med ett signerat besked; de "
                   "andra avgör platsen direkt och spelar vidare. Den som slutar svara utan att "
                   "lämna (en krasch, nätet) väntas på i upp till {limit} s för ett beslut; "
                   "sedan röstar de andra ut den. En giv som stoppas så blir ogiltig och ges om.",
                   "Leaving: q q (or Ctrl-C) leaves the table with a signed word; the others "
                   "settle the seat at once and play on. A player who stops answering without "
                   "leaving (a crash, the network) is waited for, up to {limit} s for a "
                   "decision; then the others vote that player out. A hand stopped so is "
                   "voided and dealt again."),
    # the LAN lobby
    "lan_title": ("Bord på nätverket (lyssnar på {where})",
                  "Tables on the LAN (listening on {where})"),
    "lan_all": ("alla gränssnitt", "every interface"),
    "lan_head": ("  bord                     regler         insats  platser    skapare",
                 "  table                    rules          stake   seats      creator"),
    "lan_gone": ("(borta)", "(gone)"),
    "lan_peers": ("{n} spelare hörda", "{n} peer(s) heard"),
    "lan_full": ("fullt", "full"),
    "lan_above": ("  ↑ {n} bord till ovanför", "  ↑ {n} more table(s) above"),
    "lan_below": ("  ↓ {n} bord till nedanför", "  ↓ {n} more table(s) below"),
    "lan_none": ("Inga bord hörda än. Skapa ett med c.", "No tables heard yet. Create one with c."),
    "lan_keys": ("↑/↓ välj   Enter gå med   c skapa ett bord   q avsluta",
                 "↑/↓ choose   Enter join   c create a table   q quit"),
    "lan_broken": ("Kan inte lyssna efter bord: {reason}", "Cannot listen for tables: {reason}"),
    "lan_is_full": ("Bordet {table} är fullt.", "The table {table} is full."),
    "lan_pick": ("Välj ett bord med ↑/↓ först.", "Choose a table with ↑/↓ first."),
    "lan_key": ("Tangenten {key} gör inget här.", "The key {key} does nothing here."),
    "form_title": ("Skapa ett bord", "Create a table"),
    "form_name": ("Bordets namn", "Table name"),
    "form_ruleset": ("Regler", "Rules"),
    "form_stake": ("Insats", "Stake"),
    "form_chips": ("Marker var", "Chips each"),
    "form_seats": ("Platser", "Seats"),
    "form_bots": ("Botar", "Bots"),
    "form_mode": ("Läge", "Mode"),
    "form_mode_audit": ("granskat: korten visas efter varje giv",
                        "audit: the cards are shown after each hand"),
    "form_mode_strict": ("strikt: bevis, ingen nyckel visas", "strict: proofs, no key shown"),
    "form_number": ("{field}: skriv ett heltal", "{field}: type a whole number"),
    "form_no_name": ("bordet behöver ett namn", "the table needs a name"),
    "form_bad_name": ("bordets namn får vara högst 64 byte skrivbar text",
                      "the table's name may be at most 64 bytes of printable text"),
    "form_bad_ruleset": ("okända regler {ruleset}: välj bland {known}",
                         "unknown rules {ruleset}: choose one of {known}"),
    "form_bad_mode": ("okänt läge {mode}: granskat eller strikt",
                      "unknown mode {mode}: audit or strict"),
    "form_stake_low": ("insatsen måste vara minst 1", "the stake must be at least 1"),
    "form_chips_low": ("markerna ({chips}) måste täcka insatsen ({stake})",
                       "the chips ({chips}) must cover the stake ({stake})"),
    "form_seats_range": ("{seats} platser: {ruleset} spelas av {low} till {high}",
                         "{seats} seats: {ruleset} is played by {low} to {high}"),
    "form_bots_many": ("{bots} botar vid {seats} platser: högst {most} (en plats är din)",
                       "{bots} bots at {seats} seats: at most {most} (one seat is yours)"),
    "lan_unknown_ruleset": ("bordet spelar {ruleset}, som det här programmet inte kan",
                            "the table plays {ruleset}, which this program does not know"),
    "lan_cannot_join": ("Kan inte gå med: {reason}", "Cannot join: {reason}"),
    "form_open": ("{n} platser öppna för spelare på nätverket",
                  "{n} seat(s) open to players on the LAN"),
    "form_keys": ("↑/↓ fält   ←/→ ändra   skriv för att ändra   Enter skapa   Esc tillbaka",
                  "↑/↓ field   ←/→ change   type to edit   Enter create   Esc back"),
    "form_default": ("{who}s bord", "{who}'s table"),
    "form_bad": ("Går inte: {reason}", "Cannot create it: {reason}"),
    "wait_create": ("Bord {table} ({ruleset}, insats {stake}): {taken} av {wanted} platser "
                    "tagna, väntar på {left} till.",
                    "Table {table} ({ruleset}, stake {stake}): {taken} of {wanted} seats taken, "
                    "waiting for {left} more."),
    "wait_bots": ("Dina botar: {n} av {m} har satt sig.", "Your bots: {n} of {m} seated."),
    "wait_open": ("Andra kan gå med: p2pkille play, eller p2pkille peer --table {table} "
                  "--seats {wanted}", "Others can join: p2pkille play, or p2pkille peer "
                  "--table {table} --seats {wanted}"),
    "wait_join": ("Ber om en plats vid {table} ...", "Asking for a seat at {table} ..."),
    "wait_join_by": ("Ber {creator} om en plats vid {table} ...",
                     "Asking {creator} for a seat at {table} ..."),
    "wait_asks": ("Vill sitta med: {who}  (a: släpp in, r: neka)",
                  "Wants a seat: {who}  (a: let in, r: refuse)"),
    "wait_who": ("{player}, nyckel {fp}", "{player}, key {fp}"),
    "wait_nameless": ("utan namn", "no name"),
    "wait_seated": ("Vid bordet: {who}", "At the table: {who}"),
    "wait_bot": ("{player} (bot)", "{player} (bot)"),
    "wait_more": ("... och {n} till väntar.", "... and {n} more waiting."),
    "wait_accept": ("Alla {wanted} platser tagna: {n} av {wanted} har godkänt listan ...",
                    "All {wanted} seats taken: {n} of {wanted} accepted the roster ..."),
    "wait_start": ("Bordet är format, spelet börjar ...", "The table is formed; the game "
                   "begins ..."),
    "wait_failed": ("Bordet misslyckades: {reason}", "The table failed: {reason}"),
    "wait_keys": ("Esc: lämna och gå tillbaka   q: avsluta", "Esc: leave and go back   q: quit"),
    "lan_you_are": ("Du är {player}, nyckel {fp}.", "You are {player}, key {fp}."),
    "id_created": ("Ny identitet skapad i {path}: nyckel {fp}, namn {player} (byt med --name).",
                   "Created your identity in {path}: key {fp}, name {player} (change it with "
                   "--name)."),
    "id_renamed": ("Ditt namn är nu {player} (var {old}).", "Your name is now {player} (it was "
                   "{old})."),
    "id_known_problem": ("Namnen du har mött kan inte läsas eller sparas: {reason}",
                         "The names you met cannot be read or kept: {reason}"),
}


def text(key: str, lang: str, cast: Cast | None = None, /, **fields: object) -> str:
    """The text ``key`` in ``lang`` (``sv`` or ``en``) with ``fields`` filled in; persons
    among them (:class:`~p2pkille.ui.words.Person`, ``Group``) are named by ``cast``."""
    sv, en = _TEXTS[key]
    if lang not in LANGS:
        raise KeyError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
    template = sv if lang == "sv" else en
    if not fields:
        return template
    return say(template, lang, cast or Cast(()), None, True, **fields)


def default_lang(env: Mapping[str, str]) -> str:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            return "sv" if value.lower().startswith("sv") else "en"
    return "en"
