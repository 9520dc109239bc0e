"""Words that agree: the small template language of the screen's texts.

A template is a :meth:`str.format` string whose fields may be values that know how to
say themselves in a language, so one template serves the player ("you", "du") and
everyone else (a name), one chip and many:

- :class:`Person`, one seat. The player is spoken to ("you", "du"); anyone else is
  named. Format specs: none (subject), ``obj`` (object: you, dig), ``gen`` (possessive:
  your, Anna's; Swedish common gender: din, Annas), ``gent`` (Swedish neuter: ditt),
  ``refl`` (Swedish reflexive: sig, dig), ``reflt``/``refln`` (Swedish reflexive
  possessive, neuter/common: sitt/ditt, sin/din), and ``third|second``: the word for a
  third person or for "you" (``{a:keeps|keep}``).
- :class:`Group`, several seats: a list ("Anna, Björn and you"); ``obj``; ``one|many``
  agrees with the list (``{who:has|have}``).
- An ``int`` with the spec ``one|many``: the number and its noun ("1 chip", "2 chips").
- :class:`Card`: its display name (the one the card box shows); ``the``: with an English
  article, a Swedish number card in the definite form ("12:an").
- :class:`Call`: a traditional call in «», with its English meaning in English.
- :class:`Phrase`: another template, said in the same language and cast.

:func:`say` fills a template and capitalises the player's pronoun where it opens a
sentence, so a template may begin with ``{a}`` whoever ``a`` is (a name is said as it
is written). Names come from one place, a :class:`Cast`: the seats' display names and
the player's seat.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from p2pkille.engine.cards import Rank

__all__ = ["LANGS", "Call", "Card", "Cast", "Group", "Person", "Phrase", "card_name",
           "genitive", "say"]

LANGS: Final = ("sv", "en")

_CARD_SV: Final = {
    Rank.KILLE: "Kille", Rank.KUKU: "Kuku", Rank.HUSAR: "Husar", Rank.HUSU: "Husu",
    Rank.KAVALL: "Kavall", Rank.VARDSHUS: "Värdshus", Rank.KRANSEN: "Kransen",
    Rank.BLOMPOTTAN: "Blompottan", Rank.BLAREN: "Blaren",
}
_CARD_EN: Final = {
    Rank.KILLE: "Kille (fool)", Rank.KUKU: "Kuku (cuckoo)", Rank.HUSAR: "Husar (hussar)",
    Rank.HUSU: "Husu (pig)", Rank.KAVALL: "Kavall (cavalier)",
    Rank.VARDSHUS: "Värdshus (inn)", Rank.KRANSEN: "Kransen (wreath)",
    Rank.BLOMPOTTAN: "Blompottan (flowerpot)", Rank.BLAREN: "Blaren (bladder)",
}

#: The traditional calls in English.
CALLS_EN: Final = {
    "Jag är nöjd!": "I'm content!",
    "Jag går i lek!": "I go to the stock!",
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


def card_name(rank: Rank, lang: str) -> str:
    """The name a card is shown by (the card box shows it in capitals)."""
    names = _CARD_SV if lang == "sv" else _CARD_EN
    return names.get(rank, rank.id)


def genitive(name: str, lang: str) -> str:
    """``Annas``/``Anna's``; a Swedish name ending in s, x or z takes no second s."""
    if lang == "sv":
        return name if name[-1:].lower() in ("s", "x", "z") else f"{name}s"
    return f"{name}'s"


@dataclass(frozen=True, slots=True)
class Cast:
    """Who is who: display names in seat order and the player's seat (``None``: the
    player watches, or the seats are not known yet)."""

    names: Sequence[str]
    me: int | None = None

    def name(self, seat: int, lang: str) -> str:
        if 0 <= seat < len(self.names):
            return self.names[seat]
        return f"plats {seat + 1}" if lang == "sv" else f"seat {seat + 1}"


@dataclass(frozen=True, slots=True)
class Person:
    """One seat in a sentence."""

    seat: int


@dataclass(frozen=True, slots=True)
class Group:
    """Several seats in a sentence, in the order given."""

    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Card:
    rank: Rank


@dataclass(frozen=True, slots=True)
class Call:
    text: str


@dataclass(frozen=True, slots=True)
class Phrase:
    """A template by key (looked up in the :func:`say` call's ``templates``), or given as
    ``texts`` (Swedish, English); ``fields`` fill it."""

    key: str
    fields: Mapping[str, object] = field(default_factory=dict)
    texts: tuple[str, str] | None = None


_PRONOUNS: Final = {
    # form: (sv, en)
    "": ("du", "you"), "obj": ("dig", "you"), "gen": ("din", "your"),
    "gent": ("ditt", "your"), "refl": ("dig", ""), "reflt": ("ditt", ""), "refln": ("din", ""),
}
_THIRD_REFLEXIVE: Final = {"refl": "sig", "reflt": "sitt", "refln": "sin"}
#: Marks the player's pronoun until :func:`say` knows whether it opens a sentence.
_YOU: Final = "\x01"


class _Words(string.Formatter):
    def __init__(self, lang: str, cast: Cast,
                 templates: Mapping[str, tuple[str, str]] | None) -> None:
        super().__init__()
        self.lang = lang
        self.cast = cast
        self.templates = templates or {}

    # One return per kind of value a phrase holds.
    def format_field(self, value: object, format_spec: str) -> str:  # noqa: PLR0911
        if isinstance(value, Person):
            return self._person(value.seat, format_spec)
        if isinstance(value, Group):
            return self._group(value.seats, format_spec)
        if isinstance(value, Card):
            return self._card(value.rank, format_spec)
        if isinstance(value, Call):
            english = CALLS_EN.get(value.text)
            if self.lang == "en" and english:
                return f"«{value.text}» ({english})"
            return f"«{value.text}»"
        if isinstance(value, Phrase):
            return self.phrase(value)
        if "|" in format_spec:
            one, many = format_spec.split("|", 1)
            if isinstance(value, int) and not isinstance(value, bool):
                return f"{value} {one if value == 1 else many}"
            return one  # a plain name: a third person
        return str(super().format_field(value, format_spec))

    def phrase(self, phrase: Phrase) -> str:
        sv, en = phrase.texts if phrase.texts is not None else self.templates[phrase.key]
        template = sv if self.lang == "sv" else en
        return self.vformat(template, (), dict(phrase.fields))

    def _person(self, seat: int, spec: str) -> str:
        you = seat == self.cast.me
        if "|" in spec:
            third, second = spec.split("|", 1)
            return second if you else third
        if spec not in _PRONOUNS:
            raise ValueError(f"unknown person form {spec!r}")
        if spec in _THIRD_REFLEXIVE and self.lang != "sv":
            raise ValueError(f"the person form {spec!r} is Swedish only")
        if you:
            sv, en = _PRONOUNS[spec]
            return _YOU + (sv if self.lang == "sv" else en)
        if spec in _THIRD_REFLEXIVE:
            return _THIRD_REFLEXIVE[spec]
        name = self.cast.name(seat, self.lang)
        return genitive(name, self.lang) if spec in ("gen", "gent") else name

    def _group(self, seats: Sequence[int], spec: str) -> str:
        you = self.cast.me in seats
        if "|" in spec:
            one, many = spec.split("|", 1)
            return many if you or len(seats) != 1 else one
        others = [self.cast.name(s, self.lang) for s in seats if s != self.cast.me]
        if you:
            others.append(self._person(self.cast.me if self.cast.me is not None else -1,
                                       "obj" if spec == "obj" else ""))
        if not others:
            return "ingen" if self.lang == "sv" else "nobody"
        if len(others) == 1:
            return others[0]
        joint = " och " if self.lang == "sv" else " and "
        return ", ".join(others[:-1]) + joint + others[-1]

    def _card(self, rank: Rank, spec: str) -> str:
        name = card_name(rank, self.lang)
        if spec != "the":
            return name
        number = rank.id.isdigit()
        if self.lang == "sv":
            return f"{rank.id}:an" if number else name
        if number:
            return f"{'an' if rank.id in ('8', '11') else 'a'} {name}"
        return f"the {name}"


_SENTENCE: Final = re.compile(r"(^\s*|[.!?] )" + _YOU + r"(\w)")


def say(template: str, lang: str, cast: Cast,
        templates: Mapping[str, tuple[str, str]] | None = None, capitalize: bool = True, /,
        **fields: object) -> str:
    """``template`` filled for ``lang`` (``sv`` or ``en``) and ``cast``; ``templates``
    resolves :class:`Phrase` keys. With ``capitalize`` the player's pronoun opening a
    sentence is capitalised (off for a label said inside another text)."""
    if lang not in LANGS:
        raise KeyError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
    words = _Words(lang, cast, templates)
    text = words.vformat(template, (), fields)
    if capitalize:
        text = _SENTENCE.sub(lambda m: m.group(1) + m.group(2).upper(), text)
    return text.replace(_YOU, "")
