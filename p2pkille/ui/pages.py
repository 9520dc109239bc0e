"""The table screen's pages besides the table: the help (this table's rules, the keys,
what the table trusts and what leaving means) and the audit of the last counted hand
and of voided ones. Each is a list of lines for a width; the screen scrolls it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2pkille.engine.cards import RANKS
from p2pkille.ui.layout import Line, para, wrap
from p2pkille.ui.narration import clash_line, fault_text, verdict_text
from p2pkille.ui.rules import rules_page
from p2pkille.ui.words import card_name

if TYPE_CHECKING:
    from p2pkille.ui.model import TableScreen

__all__ = ["audit_page", "help_page"]


def help_page(screen: TableScreen, width: int) -> list[Line]:
    """The rules of this table (house rules marked), the keys, what the table trusts and
    what leaving a game means."""
    node = screen.table.human
    config = node.config
    out: list[Line] = [[("class:moves", screen.t("help_title"))], []]
    for rule in rules_page(config.options, config.ruleset, config.stake, screen.lang):
        if rule.head:
            if out[-1]:
                out.append([])
            out.append([("class:moves", rule.text)])
        else:
            out += para("class:warn" if rule.house else "", rule.text, width, 2)
    out.append([])
    out.append([("class:moves", screen.t("help_keys_title"))])
    out += para("", screen.t("help_keys"), width, 2)
    out.append([])
    out.append([("class:moves", screen.t("help_trust_title"))])
    trust = "help_trust_strict" if config.mode == "strict" else "help_trust"
    out += para("", screen.t(trust), width, 2)
    out += para("", screen.t("help_leave", limit=int(node.timing.decide_limit)), width, 2)
    return out


def audit_page(screen: TableScreen, width: int) -> list[Line]:
    """Who plays under which key (and which names clash with the players met before),
    what this node checked of the last counted hand (and the faces the audit showed, at
    an audit table), the earlier checkpoints, and why the last voided hands were."""
    node = screen.table.human
    out: list[Line] = players(screen, width)
    voided = [o for o in node.outcomes if o.voided]
    done = [o for o in node.outcomes if not o.voided and o.hand in node.audits]
    if not done:
        out += para("", screen.t("audit_none"), width)
    else:
        last = done[-1]
        audit = node.audits[last.hand]
        out += [[("class:moves", screen.t("audit_title", n=last.hand))]]
        for line in (screen.t("audit_steps", n=audit.shuffle_steps),
                     screen.t("audit_shares", n=audit.shares),
                     screen.t("audit_sigs", n=audit.signatures, count=len(last.holders)),
                     screen.t("audit_cp", cp=audit.checkpoint)):
            out += para("", line, width)
        if node.config.mode == "strict":
            out += para("", screen.t("audit_proofs", n=audit.proofs), width)
        names = screen.table.seat_names()
        if last.faces and audit.dealt and names:
            faces = ", ".join(
                f"{screen.seat_label(seat, names)}: "
                f"{card_name(RANKS[last.faces[token] >> 1], screen.lang)}"
                for token, seat in enumerate(audit.dealt))
            out += para("", screen.t("audit_faces", faces=faces), width, 2)
        older = ", ".join(f"{o.hand}:{o.checkpoint[:8]}" for o in done[:-1][-6:])
        if older:
            out += para("", screen.t("audit_older", hands=older), width, 2)
    seat_of = {name: seat for seat, name in enumerate(node.names)}
    for outcome in voided[-3:]:
        out.append([])
        out += para("class:warn", screen.t("audit_void", n=outcome.hand), width)
        for acc in outcome.accusations:
            accused = seat_of.get(str(acc.get("accused")))
            if accused is None:
                continue
            kind = str(acc.get("kind"))
            detail = screen.t("audit_accusation", kind=kind,
                              what=fault_text(kind, accused, screen.lang, screen.cast()),
                              verdict=verdict_text(acc.get("verdict"), screen.lang))
            if screen.lang == "en":  # the node's own words, for whoever checks the evidence
                detail += f" ({acc.get('reason')})"
            out += para("", "  " + detail, width, 4)
    return out


def players(screen: TableScreen, width: int) -> list[Line]:
    """Every seat's name and key fingerprint (bots marked), and the warnings of names that
    clash with the known players: a name is only what its key says it is called."""
    seated = screen.table.seated()
    if not seated:
        return []
    names = screen.table.seat_names()
    out: list[Line] = [[("class:moves", screen.t("audit_players"))]]
    for seat, member in enumerate(seated):
        bot = screen.t("audit_bot") if member.bot else ""
        label = screen.seat_label(seat, names)
        out += _indented("", "  " + screen.t("audit_player", player=label,
                                              fp=member.fingerprint, bot=bot), width)
        if member.met is not None:
            out += _indented("class:warn", "    " + clash_line(member.met).text(
                screen.lang, screen.cast()), width)
    out.append([])
    return out


def _indented(style: str, text: str, width: int) -> list[Line]:
    """A paragraph that keeps its leading spaces (continuation lines under its text)."""
    hang = len(text) - len(text.lstrip(" ")) + 2
    return [[(style, line)] for line in wrap(text, width - 1, hang, keep_indent=True)]
