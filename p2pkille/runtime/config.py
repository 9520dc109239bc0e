"""A table's configuration and its genesis: who plays, under which rules, in which seats.

The configuration is what the lobby agreed before any envelope: the table id, a
name, the ruleset with option overrides, stake and starting chips, and each
member's identity and delivery (X25519) public keys. Members are ordered by their
identity key bytes (the transcript's member order). Seats and the first dealer
come later, from joint commit-reveal randomness (:func:`genesis`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Final

from p2pkille.engine.cards import DECK
from p2pkille.engine.options import RuleOptions, options_from_json
from protocol import canonical
from protocol.deck import Deck, random_permutation, uniform_below
from protocol.domain import hash32
from protocol.errors import LocalProtocolError
from protocol.identity import PublicKey
from protocol.keys import check_delivery_key
from protocol.rng import DeterministicRng

__all__ = ["MODES", "Genesis", "Member", "TableConfig", "card_deck", "genesis", "seat_name"]

MAX_NAME: Final = 64
#: ``audit``: commit-reveal shuffles, every card public after the hand's audit.
#: ``strict``: proved shuffles and answers, no key ever revealed (docs/protocol.md II.13).
MODES: Final = ("audit", "strict")


@cache
def card_deck() -> Deck:
    """The protocol deck of the 42 Kille cards: label ``rank:copy``, card index = slot."""
    return Deck(tuple(card.text for card in DECK))


def seat_name(seat: int) -> str:
    """Seat names are ``P1``..``PN`` in seat order."""
    return f"P{seat + 1}"


@dataclass(frozen=True, slots=True)
class Member:
    """One member: the identity key that signs, and the delivery key sealed shares go to."""

    identity: PublicKey
    delivery: bytes

    def __post_init__(self) -> None:
        # Members come from the lobby, i.e. from peers: a bad key is remote input.
        check_delivery_key(self.delivery)


@dataclass(frozen=True, slots=True)
class TableConfig:
    """What every member agreed on before the first envelope."""

    table_id: bytes
    name: str
    ruleset: str
    members: tuple[Member, ...]
    stake: int = 1
    chips: int = 10
    overrides: Mapping[str, object] = field(default_factory=dict)
    mode: str = "audit"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise LocalProtocolError(f"mode {self.mode!r}: expected one of {', '.join(MODES)}")
        if type(self.table_id) is not bytes or not 1 <= len(self.table_id) <= 64:
            raise LocalProtocolError(f"table id must be 1..64 bytes: {self.table_id!r}")
        if not isinstance(self.name, str) or not 1 <= len(self.name) <= MAX_NAME:
            raise LocalProtocolError(f"table name must be 1..{MAX_NAME} characters")
        ordered = tuple(sorted(self.members, key=lambda m: m.identity.raw))
        if len({m.identity for m in ordered}) != len(ordered):
            raise LocalProtocolError("members repeat")
        object.__setattr__(self, "members", ordered)
        object.__setattr__(self, "overrides", dict(self.overrides))
        opts = self.options  # raises InvalidOptionsError for a bad ruleset or option
        if not opts.min_players <= len(ordered) <= opts.max_players:
            raise LocalProtocolError(
                f"{len(ordered)} members: {self.ruleset} plays with "
                f"{opts.min_players}..{opts.max_players}"
            )
        if type(self.stake) is not int or type(self.chips) is not int or not (
            1 <= self.stake <= self.chips
        ):
            raise LocalProtocolError(
                f"stake {self.stake} and chips {self.chips}: need 1 <= stake <= chips"
            )

    @property
    def options(self) -> RuleOptions:
        return options_from_json(self.ruleset, dict(self.overrides) or None)

    @property
    def identities(self) -> tuple[PublicKey, ...]:
        return tuple(m.identity for m in self.members)

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "chips": self.chips,
            "members": [
                {"delivery": canonical.b64encode(m.delivery),
                 "identity": canonical.b64encode(m.identity.raw)}
                for m in self.members
            ],
            "name": self.name,
            "options": dict(self.overrides),
            "ruleset": self.ruleset,
            "stake": self.stake,
            "table": canonical.b64encode(self.table_id),
        }
        if self.mode != "audit":
            # Absent for audit tables, so their genesis documents stay as they were.
            doc["mode"] = self.mode
        return doc


@dataclass(frozen=True, slots=True)
class Genesis:
    """The agreed start: seat order (seat -> member index), first dealer, joint seed."""

    seed: bytes
    seats: tuple[int, ...]
    dealer: int
    document: bytes

    @property
    def digest(self) -> bytes:
        return hash32("table-genesis", self.document)


def genesis(config: TableConfig, nonces: Sequence[bytes]) -> Genesis:
    """Seats and dealer from every member's nonce (in member order).

    ``seed = hash32("table-seed", table, nonce_1, ..., nonce_n)``; with
    ``DeterministicRng(seed)``: ``perm = random_permutation(n)`` (seat i is member
    ``perm[i]``), then ``dealer = uniform_below(n)``.
    """
    if len(nonces) != len(config.members):
        raise LocalProtocolError("one nonce per member")
    seed = hash32("table-seed", config.table_id, *nonces)
    rng = DeterministicRng(seed)
    perm = random_permutation(len(nonces), rng)
    dealer = uniform_below(len(nonces), rng)
    doc = canonical.encode({
        "config": config.to_json(),
        "dealer": dealer,
        "seats": list(perm),
        "seed": canonical.b64encode(seed),
    })
    return Genesis(seed, perm, dealer, doc)
