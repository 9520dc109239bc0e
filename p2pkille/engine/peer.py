"""A peer's view: the same state machine, fed public facts from outside.

Faces stay hidden until a fact shows them. The view records every claim a fact
makes about a hidden card (a plain answer says the target's card is no answering
card; a disclosure says whether the offered card was a kille; shown cards say what
they are). When faces come out (the showdown, or :meth:`PeerView.audit` with every
face after the hand) it reports the first claim they contradict as a
:class:`FalseFact` naming the seat that made it: a result value, not a crash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from p2pkille.engine.cards import Rank
from p2pkille.engine.facts import Deal, Fact, Showdown, fact_from_json, fact_to_json
from p2pkille.engine.machine import Claim, Game
from p2pkille.engine.options import RuleOptions
from p2pkille.engine.view import SeatView


@dataclass(frozen=True, slots=True)
class FalseFact:
    """A claim the faces contradict: ``seat`` lied in ``claim.fact`` about ``claim.token``."""

    seat: int
    claim: Claim
    actual: Rank

    def describe(self, names: Sequence[str]) -> str:
        said = (
            f"is {self.claim.rank.id}" if self.claim.rank is not None
            else f"is none of {sorted(r.id for r in self.claim.excluded)}"
        )
        return (
            f"{names[self.seat]} lied in {fact_to_json(self.claim.fact)}: it said the card "
            f"{said}, but it is {self.actual.id}"
        )


class PeerView:
    """One peer's copy of the game. ``own_seat`` may learn its own cards privately."""

    __slots__ = ("false_fact", "game", "known", "own_seat")

    def __init__(
        self,
        options: RuleOptions,
        seats: Sequence[str],
        *,
        stake: int,
        chips: int | Sequence[int],
        dealer: int = 0,
        own_seat: int | None = None,
        record_events: bool = False,
    ) -> None:
        self.game = Game(options, seats, stake=stake, chips=chips, dealer=dealer,
                         record_events=record_events, record_claims=True)
        self.own_seat = own_seat
        #: Faces this peer knows, token -> rank, for the current hand.
        self.known: dict[int, Rank] = {}
        #: The first contradiction found, if any.
        self.false_fact: FalseFact | None = None

    def feed(self, fact: Fact) -> FalseFact | None:
        """Apply a public fact; returns a contradiction the faces it shows reveal."""
        game = self.game
        claims = game.claims
        assert claims is not None
        if type(fact) is Deal:
            claims.clear()
            self.known.clear()
        start = len(claims)
        game.apply(fact)
        game.fact_count += 1
        if type(fact) is Showdown:
            # The showdown faces are the truth every earlier claim must agree with.
            shown = {claim.token: claim.rank for claim in claims[start:] if claim.rank}
            found = self._check(claims[:start], shown)
            if found is not None and self.false_fact is None:
                self.false_fact = found
            return found
        for claim in claims[start:]:
            if claim.rank is not None:
                self.known[claim.token] = claim.rank
        return None

    def feed_json(self, text: str | bytes) -> FalseFact | None:
        """Parse (InvalidFactError on bad text) and apply a fact."""
        return self.feed(fact_from_json(text))

    def learn(self, token: int, rank: Rank) -> None:
        """A private fact for this seat only: the face of a token it holds."""
        self.known[token] = rank

    @property
    def own_rank(self) -> Rank | None:
        """This peer's own card, if it plays in the hand and has learnt it."""
        if self.own_seat is None:
            return None
        token = self.game.token_of(self.own_seat)
        return None if token is None else self.known.get(token)

    def view(self, seat: int) -> SeatView:
        """A bot's view for ``seat``: faces are those this peer knows (``None`` otherwise)."""
        return SeatView(self.game, seat, self.known.get)

    def audit(self, faces: Mapping[int, Rank]) -> FalseFact | None:
        """Check every claim of the current hand against the true faces (token -> rank)."""
        claims = self.game.claims
        assert claims is not None
        found = self._check(claims, faces)
        if found is not None and self.false_fact is None:
            self.false_fact = found
        return found

    @staticmethod
    def _check(claims: Sequence[Claim], faces: Mapping[int, Rank | None]) -> FalseFact | None:
        for claim in claims:
            actual = faces.get(claim.token)
            if actual is not None and not claim.holds(actual):
                return FalseFact(claim.seat, claim, actual)
        return None
