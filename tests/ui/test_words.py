"""Every narration template and every screen text with persons in it, rendered in both
languages with the player and a bot in every role, one and many of every counted
thing: the grammar rules hold (second person for the player, plurals, Swedish
pronoun cases, no stray dashes or placeholders, the player's name never in a
sentence)."""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Iterator

import pytest

from p2pkille.engine.cards import Rank
from p2pkille.ui import i18n
from p2pkille.ui.narration import TEMPLATES
from p2pkille.ui.words import Call, Card, Cast, Group, Person, Phrase, say

ME, BOT, BOT2 = 2, 0, 1
LOBBY = ("lan_", "form_", "wait_")
CAST = Cast(["Anna", "Lars", "Tester"], ME)
PERSONS = ("a", "b")
#: Fields that hold another phrase, with a sample of it.
NESTED = {
    "why": Phrase("cause_husar"),
    "what": Phrase("fault_bad-key", {"a": Person(BOT)}),
    "verdict": Phrase("verdict_proven"),
    "killers": Phrase("killers_basic"),
    "waited": Phrase("waited", {"step": Phrase("step_keys")}),
    "step": Phrase("step_decision", {"a": Person(BOT2)}),
    "items": Phrase("", {"i0": Phrase("undo_death", {"a": Person(ME)})}, ("{i0}", "{i0}")),
    "faces": Phrase("", {"p0": Person(ME), "c0": Card(Rank.KUKU)},
                    ("{p0} har {c0:the}", "{p0} {p0:has|have} {c0:the}")),
    "count": "",
    "of": "",
}
#: English verbs in the third person (the player never takes one).
THIRD = {"is", "has", "does", "keeps", "offers", "swaps", "gets", "shows", "dies", "draws",
         "cuts", "turns", "takes", "asks", "agrees", "refuses", "says", "plays", "deals",
         "buys", "leaves", "wins", "sits", "passes", "sells", "exchanges", "accepts",
         "declines", "goes", "was", "answers", "stays", "votes"}


def fields_of(template: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for _, name, spec, _ in string.Formatter().parse(template):
        if name:
            out.setdefault(name, set()).add(spec or "")
    return out


def cases(sv: str, en: str) -> Iterator[dict[str, object]]:
    """The ways to fill a template pair: every person role the player or a bot (two
    roles: the player and a bot either way, or two bots), each count 1 and 2."""
    used = fields_of(sv) | fields_of(en)
    persons = [name for name in PERSONS if name in used]
    roles: list[tuple[int, ...]]
    if len(persons) == 2:
        roles = [(ME, BOT), (BOT, ME), (BOT, BOT2)]
    elif persons:
        roles = [(ME,), (BOT,), (BOT2,)]
    else:
        roles = [()]
    groups: list[tuple[int, ...]] = ([(ME,), (BOT,), (BOT, ME), (BOT, BOT2)] if "who" in used
                                     else [()])
    for seats, group, count in itertools.product(roles, groups, (1, 2)):
        fields: dict[str, object] = {}
        for name in used:
            if name in PERSONS:
                fields[name] = Person(seats[persons.index(name)])
            elif name == "who":
                fields[name] = Group(group)
            elif name == "card":
                fields[name] = Card(Rank.VARDSHUS if count == 1 else Rank.EIGHT)
            elif name == "call":
                fields[name] = Call("Kavall förbi!")
            elif name in NESTED:
                fields[name] = NESTED[name]
            else:
                fields[name] = count
        yield fields


# One branch per grammar rule.
def check(said: str, lang: str, key: str) -> list[str]:  # noqa: PLR0912
    """The grammar rules ``said`` breaks."""
    wrong = []
    # A move's label ("k  keep") has two spaces after its key.
    body = said.strip()[3:] if key.startswith("k_") else said.strip()
    if re.search(r"[{}]|\bNone\b|\s-\s|-$|\.\.|\s[.,:;]|:\s*[.:]|\(\s*\)|\s{2,}\S", body):
        wrong.append("a placeholder, stray dash or stray punctuation")
    if said.count("(") != said.count(")") or said.count("«") != said.count("»"):
        wrong.append("unbalanced brackets")
    if "Tester" in said:
        wrong.append("the player's name in a sentence (the player is spoken to)")
    if lang == "en":
        verb = re.search(r"\b[Yy]ou (\w+)\b", said)
        for found in re.finditer(r"\b[Yy]ou (\w+)\b", said):
            if found.group(1) in THIRD:
                wrong.append(f"'you {found.group(1)}'")
        del verb
        if re.search(r"(?<!and )\b(Anna|Lars) (have|are|do|keep|die|get|show|take|win)\b",
                     said):
            wrong.append("a name with a second-person verb")
        if re.search(r"\b[Yy]ou's\b|\(you\)", said):
            wrong.append("'you's' or '(you)'")
        if re.search(r"\b1 (chips|swaps|peers|players|buy-backs|bots|lines|cards)\b", said):
            wrong.append("a plural after 1")
        if re.search(r"\b([02-9]|\d\d+) (chip|swap|peer|player|buy-back|bot|line|card)\b",
                     said):
            wrong.append("a singular after a number other than 1")
        if re.search(r"\ball 2\b", said):
            wrong.append("'all 2'")
    else:
        for found in re.finditer(r"\bDu\b", said):
            before = said[:found.start()].rstrip()
            if before and before[-1] not in ".!?:":
                wrong.append("'Du' inside a sentence")
        if re.search(r"\b(till|av|för|med|åt|om|på|mot|från|bjuder|dödar|hugger|ger|skonar|"
                     r"ut|gav|köper in|byter med) du\b", said):
            wrong.append("'du' as an object (dig)")
        if re.search(r"\b(Dus|dus|Du's|Larss)\b", said):
            wrong.append("a bad genitive")
        if re.search(r"\bdin (kort|beslut|återköp)\b|\bditt (död|tur|försäljning|Kille)\b|"
                     r"\bsin kort\b", said):
            wrong.append("a possessive of the wrong gender")
        if re.search(r"\b1 (marker|byten|botar|rader)\b", said):
            wrong.append("a plural after 1")
        if re.search(r"\b([02-9]|\d\d+) (mark|byte|bot|rad)\b", said):
            wrong.append("a singular after a number other than 1")
        if re.search(r"\b(the|and|you|your|chips|dies)\b", said):
            wrong.append("English in Swedish")
    return [f"{key} [{lang}]: {w}: {said!r}" for w in wrong]


def test_templates_have_the_same_fields_in_both_languages() -> None:
    for key, (sv, en) in {**TEMPLATES, **i18n._TEXTS}.items():
        assert set(fields_of(sv)) == set(fields_of(en)), key


def test_every_narration_template_reads_well_with_the_player_and_a_bot_in_every_role() -> None:
    wrong: list[str] = []
    rendered = 0
    for key, (sv, en) in TEMPLATES.items():
        for fields in cases(sv, en):
            for lang, template in (("sv", sv), ("en", en)):
                said = say(template, lang, CAST, TEMPLATES, **fields)
                rendered += 1
                wrong += check(said, lang, key)
                if fields_of(template) and template.startswith("{a}"):
                    assert said[0].isupper(), (key, lang, said)
    assert rendered > 900
    assert not wrong, "\n".join(wrong)


def test_every_screen_text_with_a_person_or_a_count_reads_well() -> None:
    wrong: list[str] = []
    for key, (sv, en) in i18n._TEXTS.items():
        if key.startswith(LOBBY):
            continue  # the lobby's texts take plain strings
        used = fields_of(sv) | fields_of(en)
        personal = set(used) & {"a", "b", "who"}
        counted = any("|" in spec for specs in used.values() for spec in specs)
        if not personal and not counted:
            continue
        for fields in cases(sv, en):
            for lang in ("sv", "en"):
                plain = {k: ("X" if k in NESTED else v) for k, v in fields.items()}
                wrong += check(i18n.text(key, lang, CAST, **plain), lang, key)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("template", "lang", "fields", "want"), [
    ("{a} {a:keeps|keep} the card.", "en", {"a": Person(ME)}, "You keep the card."),
    ("{a} {a:keeps|keep} the card.", "en", {"a": Person(BOT)}, "Anna keeps the card."),
    ("{a} bjuder {b:obj} att byta.", "sv", {"a": Person(BOT), "b": Person(ME)},
     "Anna bjuder dig att byta."),
    ("{a} bjuder {b:obj} att byta.", "sv", {"a": Person(ME), "b": Person(BOT2)},
     "Du bjuder Lars att byta."),
    ("{b:gent} kort", "sv", {"b": Person(BOT2)}, "Lars kort"),
    ("{b:gent} kort", "sv", {"b": Person(BOT)}, "Annas kort"),
    ("{n:chip|chips}", "en", {"n": 1}, "1 chip"),
    ("{n:mark|marker}", "sv", {"n": 3}, "3 marker"),
    ("{who} {who:is|are} silent", "en", {"who": Group((BOT, BOT2))}, "Anna and Lars are silent"),
    ("{who} {who:is|are} silent", "en", {"who": Group((BOT,))}, "Anna is silent"),
    ("{card:the}", "en", {"card": Card(Rank.EIGHT)}, "an 8"),
    ("{card:the}", "sv", {"card": Card(Rank.TWELVE)}, "12:an"),
    ("{call}", "en", {"call": Call("På rygg!")}, "«På rygg!» (On your backs!)"),
    ("{call}", "sv", {"call": Call("På rygg!")}, "«På rygg!»"),
])
def test_words_agree(template: str, lang: str, fields: dict[str, object], want: str) -> None:
    assert say(template, lang, CAST, None, **fields) == want


def test_a_bad_form_is_an_error_not_a_silent_word() -> None:
    with pytest.raises(ValueError, match="unknown person form"):
        say("{a:genitive}", "en", CAST, None, a=Person(BOT))
    with pytest.raises(ValueError, match="Swedish only"):
        say("{a:refl}", "en", CAST, None, a=Person(BOT))


def test_a_name_is_said_as_written_and_only_the_pronoun_is_capitalised() -> None:
    cast = Cast(["peer 49fd7a", "Anna"], 1)
    assert say("{a} {a:keeps|keep} the card.", "en", cast, None, a=Person(0)) == (
        "peer 49fd7a keeps the card.")
    assert say("{a} {a:keeps|keep} the card.", "en", cast, None, a=Person(1)) == (
        "You keep the card.")
    assert say("Nu: {a} behåller kortet. {a} ger.", "sv", cast, None, a=Person(1)) == (
        "Nu: du behåller kortet. Du ger.")
