"""The table node: one peer of a Kille table, sans-I/O (implements ``io.Node``).

Every message is a signed envelope broadcast to all members; the node's machine
(core.py) consumes them in chain order and makes this member's moves. Besides envelopes a
node takes gap-fill syncs (II.10): what a peer holds, answered with what it lacks. A
transport calls :meth:`TableNode.start`, :meth:`~TableNode.receive` and
:meth:`~TableNode.wake` with the time and carries out the outputs; nothing here touches a
socket or a clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from p2pkille.engine.cards import Rank
from p2pkille.engine.peer import PeerView
from p2pkille.engine.view import Decider
from p2pkille.runtime import gapfill
from p2pkille.runtime.behaviour import Behaviour, Probe
from p2pkille.runtime.bodies import disclosed_json
from p2pkille.runtime.config import TableConfig
from p2pkille.runtime.core import Core
from p2pkille.runtime.faults import Fault
from p2pkille.runtime.io import Output, Send, WakeAt
from p2pkille.runtime.outcome import DEFAULT_TIMING, HandOutcome, Timing
from p2pkille.runtime.status import HandStatus
from p2pkille.runtime.steps import Stage, Step
from protocol import canonical
from protocol.canonical import JsonValue
from protocol.errors import RemoteProtocolError
from protocol.group import Workers
from protocol.identity import Identity, PublicKey
from protocol.keys import DeliveryKeyPair, KeyShare
from protocol.rng import DeterministicRng
from protocol.transcript import Transcript

__all__ = ["HandOutcome", "Stage", "TableNode", "Timing"]


class TableNode:
    """A peer at a table: see the module doc. ``name`` is its transport name."""

    def __init__(self, name: str, identity: Identity, delivery: DeliveryKeyPair,
                 config: TableConfig, decider: Decider, seed: bytes,
                 timing: Timing = DEFAULT_TIMING) -> None:
        self._name = name
        self._synced_back: dict[str, float] = {}
        """peer -> when I last answered its sync."""
        self._quit = False
        """I signed my ``leave``: I make no move, and answer syncs only."""
        self._core = Core(self, identity, delivery, config, decider, seed, timing)

    # -- io.Node --------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    def start(self, now: float) -> Sequence[Output]:
        self._core.table.now = now
        if self._quit:
            # Rebuilt from a log that holds my leave: I make no move (wake, below).
            return [Send(self.sync_message()), WakeAt(now + self.timing.sync_interval)]
        out: list[Output] = []
        self._core.pump(out)
        self._core.flush(out)
        out.append(WakeAt(now + self.timing.sync_interval))
        return out

    def receive(self, sender: str, data: bytes, now: float) -> Sequence[Output]:
        core = self._core
        core.table.now = now
        data = bytes(data)
        if data.startswith(gapfill.PREFIX):
            return self._sync(sender, data, now)
        if self._quit:
            return []
        accepted = len(core.table.transcript.accepted)
        out: list[Output] = []
        core.intake.accept(data)
        self._settle(out)
        if self._core.table.left:
            # A member that left is not waited for: vote its step out now, not at the
            # next wake (the step may be due only since this envelope).
            sent = len(out)
            self._core.timeouts.vote(out, now)
            if len(out) > sent:
                self._settle(out)
        grew = len(self._core.table.transcript.accepted) > accepted
        return self._core.behaviour.sending(self, grew, out)

    def wake(self, now: float) -> Sequence[Output]:
        core = self._core
        core.table.now = now
        core.intake.forget_old()
        if self.done:
            return []
        if self._quit:
            # Only my sync: a member that lacks my leave then asks for it.
            return [Send(self.sync_message()), WakeAt(now + self.timing.sync_interval)]
        out: list[Output] = [Send(self.sync_message()),
                             WakeAt(now + self.timing.sync_interval)]
        core.timeouts.vote(out, now)
        core.agreeing.wake()
        # Also for seats that hold no key (a buyer, a seat that may buy in): a decision
        # its person could not make before may be ready now.
        self._settle(out)
        return self._core.behaviour.sending(self, False, out)

    def _settle(self, out: list[Output]) -> None:
        self._core.pump(out)
        if self._core.rewinder.due:
            self._core = self._core.rewinder.rebuild(out)
        self._core.flush(out)

    def _sync(self, sender: str, data: bytes, now: float) -> list[Output]:
        """A peer's sync: send it what it lacks, and my own sync if it holds more."""
        core = self._core
        out: list[Output] = []
        try:
            sync = gapfill.decode_sync(data, len(core.table.members))
        except RemoteProtocolError:
            core.table.dropped += 1
            return out
        transcript = core.table.transcript
        out += [Send(wire, to=sender)
                for wire in gapfill.reply(transcript, sync.heads, core.intake.fresh)]
        if sync.open is not None:
            out += [Send(wire, to=sender) for wire in core.closing.certs.get(sync.open, ())]
        if any(h > s for h, s in zip(sync.heads, transcript.heads().heads, strict=True)) and (
                now - self._synced_back.get(sender, -math.inf) >= self.timing.sync_interval):
            # At most once a sync interval per peer: two peers that each lack an envelope
            # the other took just now (too fresh to send) would answer each other's sync
            # for ever, and on a link without delay time would stand still.
            self._synced_back[sender] = now
            out.append(Send(self.sync_message(), to=sender))
        return out

    def sync_message(self) -> bytes:
        """What this node holds, and the hand it has not ended yet (II.10)."""
        core = self._core
        hand = core.table.hand
        open_hand = (hand.number if hand is not None and core.table.stage != Stage.DONE
                     and hand.number not in core.verdict.voided else None)
        return gapfill.encode_sync(core.table.transcript.heads().heads, open_hand)

    def leave(self, now: float) -> Sequence[Output]:
        """Quit the table: sign a ``leave``, my last envelope, and send it. The others
        then settle my seat at once (II.11.4): my decisions take their default, a hand I
        hold a key in is voided, and I take no further part. From here on this node makes
        no move; it answers gap-fill syncs, so that the leave reaches every member while
        its transport lingers. Nothing the second time."""
        core = self._core
        core.table.now = now
        if self._quit:
            return []
        out: list[Output] = []
        core.outbox.emit(out, core.agreeing.leave())
        self._quit = True
        return self._core.behaviour.sending(self, True, out)

    @property
    def has_quit(self) -> bool:
        """I signed my ``leave`` (now, or before a restart from my log)."""
        return self._quit

    @property
    def left(self) -> tuple[int, ...]:
        """The table seats whose ``leave`` I hold (empty before the genesis seats them)."""
        table = self._core.table
        return tuple(sorted(table.seat_of[m] for m in table.left)) if table.seat_of else ()

    def replay(self, log: Iterable[bytes]) -> None:
        """Before :meth:`start`: take back every envelope this node had accepted (its own
        included), e.g. from its log after a crash. Its own are then not sent again: as
        all its secrets come from the seed, it re-derives each of them byte for byte."""
        self._core.replay(log)
        self._quit = self._core.table.me in self._core.table.left

    def take_own_votes(self) -> None:
        """:meth:`take_own_vote` for every ``timeout`` in this member's own chain (after
        :meth:`replay`)."""
        self._core.timeouts.take_own_votes()

    def take_own_vote(self, hand: int, step: Step) -> None:
        """Count a time-out vote from this member's own log as cast: a node rebuilt from
        its log then waits for that seat as it did live (it answers no ``seen`` for a
        step it voted out), and re-derives only envelopes it really made."""
        self._core.timeouts.take_own_vote(hand, step)

    # -- what the table waits for ---------------------------------------------------------

    def waiting_for(self) -> tuple[int, ...]:
        """The seats (member indices during genesis) whose envelope the table waits for
        now: what a time limit runs against, else the holders whose message the hand's
        agreement waits for. Empty when done."""
        return self._core.timeouts.waiting_for() or self._core.agreeing.waiting_for()

    def silent_without_majority(self) -> tuple[int, ...]:
        """The holders I wait on in vain when they are two or more and the other holders
        no strict majority of the hand's: the seats of my votes still open, and the
        holders that answered none of them for ``answer_limit`` past my vote. No silent
        set holding them can be agreed, so the table waits until enough of them come back
        (from inside, their crash cannot be told from a partition, II.11.3). For the
        player to be told so; empty otherwise."""
        return self._core.timeouts.silent_without_majority()

    def status(self) -> HandStatus | None:
        """Where the current (or last) hand stands; None before the first deal."""
        core = self._core
        hand = core.table.hand
        if hand is None:
            return None
        return HandStatus.of(hand, core.table.stage, self.waiting_for())

    # -- the table, the seats, the game -------------------------------------------------

    @property
    def done(self) -> bool:
        return self._core.table.stage == Stage.DONE

    @property
    def stage(self) -> Stage:
        return self._core.table.stage

    @property
    def identity(self) -> Identity:
        return self._core.table.identity

    @property
    def delivery(self) -> DeliveryKeyPair:
        return self._core.table.delivery

    @property
    def config(self) -> TableConfig:
        return self._core.table.config

    @property
    def timing(self) -> Timing:
        return self._core.table.timing

    @property
    def strict(self) -> bool:
        return self._core.table.strict

    @property
    def members(self) -> tuple[PublicKey, ...]:
        return self._core.table.members

    @property
    def me(self) -> int:
        """My member index (the order of the transcript's chains)."""
        return self._core.table.me

    @property
    def names(self) -> list[str]:
        return self._core.table.names

    @property
    def my_seat(self) -> int | None:
        return self._core.table.my_seat

    @property
    def seat_of(self) -> list[int]:
        """member index -> table seat (empty before the genesis)."""
        return list(self._core.table.seat_of)

    @property
    def member_of(self) -> list[int]:
        """table seat -> member index (empty before the genesis)."""
        return list(self._core.table.member_of)

    @property
    def genesis_nonce(self) -> bytes:
        """The nonce this node commits to in the genesis (derived from its seed): the
        simulator uses it to know the seating before the table starts."""
        return self._core.genesis.nonce

    @property
    def genesis_digest(self) -> bytes:
        return self._core.genesis.digest

    @property
    def first_dealer(self) -> int:
        return self._core.genesis.first_dealer

    @property
    def seed(self) -> bytes:
        """The secret every key and nonce of this member derives from (its log keeps it)."""
        return self._core.table.seed

    @property
    def transcript(self) -> Transcript:
        return self._core.table.transcript

    @property
    def view(self) -> PeerView | None:
        """The game as this member sees it (None before the genesis)."""
        return self._core.table.view

    # -- what happened --------------------------------------------------------------------

    @property
    def outcomes(self) -> list[HandOutcome]:
        """Every hand decided, counted or voided, in order."""
        return self._core.table.outcomes

    @property
    def faults(self) -> list[Fault]:
        """Every fault this node found, in order."""
        return self._core.table.faults

    @property
    def timed_decisions(self) -> list[tuple[int, int, int]]:
        """(hand, seat, step) of every decision the table gave its default."""
        return self._core.timeouts.timed_decisions

    @property
    def rewinds(self) -> int:
        """Late decisions this node had taken and took back."""
        return self._core.rewinder.rewinds

    @property
    def rebuilds(self) -> int:
        """Times this node found a silent set agreed in a hand it had counted and took its
        transcript back from the start."""
        return self._core.rewinder.rebuilds

    @property
    def consumed(self) -> tuple[int, ...]:
        """Per member (index), the seq of its last envelope this node consumed."""
        return tuple(self._core.table.consumed)

    @property
    def dropped(self) -> int:
        """Transport input ignored: bytes that are no valid envelope or sync."""
        return self._core.table.dropped

    @property
    def sent_envelopes(self) -> int:
        return self._core.outbox.sent_envelopes

    @property
    def sent_bytes(self) -> int:
        return self._core.outbox.sent_bytes

    # -- what the node's owner sets -------------------------------------------------------

    @property
    def decider(self) -> Decider:
        return self._core.table.decider

    @decider.setter
    def decider(self, decider: Decider) -> None:
        self._core.table.decider = decider

    @property
    def watchers(self) -> list[Callable[[str], None]]:
        """Called after each ``"hand"`` dealt, ``"fact"`` applied, and hand ended
        (``"commit"`` or ``"void"``: see :attr:`outcomes`); for a screen. A watcher must not
        call back into the node."""
        return self._core.table.watchers

    @property
    def workers(self) -> Workers | None:
        """Threads for the large sums of multiplications (shuffles and their proofs):
        results are the same with or without; a strict table checks ~550 per proof."""
        return self._core.table.workers

    @workers.setter
    def workers(self, workers: Workers | None) -> None:
        self._core.table.workers = workers

    @property
    def record_events(self) -> bool:
        """Keep the game's events (narration) from the next deal on."""
        return self._core.table.record_events

    @record_events.setter
    def record_events(self, value: bool) -> None:
        self._core.table.record_events = value

    @property
    def agreement_learner(self) -> bool:
        """Whether this node takes its own ``propose`` and ``vote`` envelopes as a peer's
        and signs none (``verify``: a log replay feeds the logged ones, made no other
        way)."""
        return self._core.agreeing.learner

    @agreement_learner.setter
    def agreement_learner(self, value: bool) -> None:
        self._core.agreeing.learner = value

    @property
    def logged_accuses(self) -> set[int]:
        """Hands whose accuse of mine a log replay will feed (``verify``): made no other
        way."""
        return self._core.accusations.logged

    @logged_accuses.setter
    def logged_accuses(self, hands: set[int]) -> None:
        self._core.accusations.logged = hands

    @property
    def behaviour(self) -> Behaviour:
        """How this node departs from the protocol (in nothing, by default)."""
        return self._core.behaviour

    @behaviour.setter
    def behaviour(self, behaviour: Behaviour) -> None:
        self._core.behaviour = behaviour

    @property
    def probe(self) -> Probe | None:
        """Told of every move and consumption (a benchmark's meter); None by default."""
        return self._core.probe

    @probe.setter
    def probe(self, probe: Probe | None) -> None:
        self._core.probe = probe

    # -- for protocol testers: this member's secrets, what it holds, a colluding witness --

    def secret(self, purpose: str, *parts: bytes) -> bytes:
        """A secret of this member for ``purpose``, from its seed."""
        return self._core.table.secret(purpose, *parts)

    def rng(self, purpose: str, *parts: int) -> DeterministicRng:
        """A random stream of this member for ``purpose``, from its seed."""
        return self._core.table.rng(purpose, *parts)

    def own_key(self) -> KeyShare | None:
        """My key share of the current hand; None if I hold none."""
        hand = self._core.table.hand
        return None if hand is None else hand.deck.key

    def disclosures(self) -> list[dict[str, object]]:
        """What my accuse of the current hand would disclose now: the boxes I sealed that
        a holder may dispute, each with its one-time key (an ``accuse``'s ``disclosed``)."""
        hand = self._core.table.hand
        assert hand is not None
        return [disclosed_json(*entry) for entry in self._core.accusations.disclosures(hand)]

    def claim_proof(self, token: int, purpose: bytes, ranks: frozenset[Rank]) -> str:
        """My proof (strict tables) that card ``token`` of the current hand is none of
        ``ranks``, for an ``answer`` (``purpose`` b"answer") or a ``disclose``, as the
        body's ``pet`` field; whether it holds or not."""
        hand = self._core.table.hand
        assert hand is not None
        return canonical.b64encode(self._core.claims.pet_body(hand, token, purpose, ranks))

    # -- what the machine holds, for protocol testers -------------------------------------

    def owed_forwards(self) -> dict[tuple[int, int], int]:
        """The forwards the table waits for in the current hand, each (card token, to
        seat) with the seat that owes it; empty before the first deal. A forward taken is
        owed no more, whenever it came."""
        hand = self._core.table.hand
        if hand is None:
            return {}
        return {slot: seat for slot, (seat, _) in hand.forwards.owed.items()}

    def sealed_forwards(self) -> set[tuple[int, int, int | None, int]]:
        """The boxes of my forwards in the current hand whose shares my accuse may
        disclose, each (card token, the share's maker, its context's recipient, the seat
        it was sealed to); empty before the first deal."""
        hand = self._core.table.hand
        if hand is None:
            return set()
        return {slot for slot in hand.seals.plain if slot not in hand.seals.deal_boxes}

    def start_over(self) -> list[Output]:
        """Take every accepted envelope back into a fresh machine, as the node does itself
        when votes taken after it counted a hand void that hand (:attr:`rebuilds`); the
        outputs of the fresh machine's first steps. A protocol tester's check that what
        the node holds survives it."""
        out: list[Output] = []
        self._core = self._core.rewinder.rebuild(out)
        self._core.flush(out)
        return out


    def opening(self, token: int) -> list[JsonValue]:
        """The shares of card ``token`` of the current hand I hold, mine included (made for
        an open in public), as a ``show``'s ``shares`` or an accuse's ``opened`` entries:
        the card opens from them when they are one per key holder."""
        hand = self._core.table.hand
        assert hand is not None
        return [entry.to_json() for entry in self._core.custody.open_entries(hand, token)]

    def claims(self) -> list[tuple[int, int, bytes]]:
        """The plain claims of the current hand I took, in order per card: (card token,
        claimant's table seat, the claim's envelope), each a plain answer (the card
        answers nothing) or a "no kille"."""
        hand = self._core.table.hand
        if hand is None:
            return []
        return [(token, seat, wire) for token, taken in hand.claims.claims_on.items()
                for seat, wire, _ in taken]
