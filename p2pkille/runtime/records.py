"""What a node holds of one hand, split by concern: one record per concern, one writer each.

A :class:`Hand` carries the hand's identity (number, context, key holders, the game before
its deal) and a record per concern. Every record is written by exactly one module of the
runtime (the one named in its docstring) and read by any; the test
``tests/runtime/test_structure.py::test_each_hand_record_has_one_writer`` holds the
code to it. A record's writer changes it through its own methods only.

=====================  ==========================  ======================================
record                 writer                      what it holds
=====================  ==========================  ======================================
:class:`DeckRecord`    :mod:`.dealing`             keys, the shuffle's steps, the deal
:class:`ShareRecord`   :mod:`.custody`             decryption shares this node holds
:class:`SealRecord`    :mod:`.custody`             boxes this node sealed, to disclose
:class:`ForwardRecord` :mod:`.custody`             forwards owed, to send, sold positions
:class:`PlayRecord`    :mod:`.play`                the facts applied and what play built
:class:`ClaimRecord`   :mod:`.claims`              claims that hide a card, proved claims
:class:`CloseRecord`   :mod:`.closing`             reveals, the audit, the checkpoint
:class:`VoteRecord`    :mod:`.timeouts`            time-out votes, seens, silent sets
:class:`VoidRecord`    :mod:`.accusations`,        accuses (``accusations``) and what the
                       :mod:`.verdict`             verdict counts (``verdict``)
=====================  ==========================  ======================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p2pkille.engine.cards import Rank
from p2pkille.engine.facts import Fact
from p2pkille.engine.machine import GameSnapshot
from p2pkille.runtime import messages as msg
from p2pkille.runtime.steps import Step
from protocol.checkpoint import Checkpoint
from protocol.deck import Ciphertext, ShuffleStep
from protocol.envelope import Envelope
from protocol.group import Point
from protocol.keys import HandContext, JointKey, KeyShare, PublicKeyShare
from protocol.pet import PetClaim, PetShare
from protocol.reveal import DecryptionShare
from protocol.shuffle_proof import ShuffleStatement

__all__ = ["Accuse", "ClaimRecord", "CloseRecord", "DeckRecord", "ForwardRecord", "Hand",
           "Pet", "PlayRecord", "SealRecord", "ShareRecord", "Slot", "VoidRecord",
           "VoteRecord"]

#: A sealed box's place: (token, maker, its context's recipient, the seat it was sealed to).
Slot = tuple[int, int, int | None, int]


@dataclass(slots=True)
class DeckRecord:
    """Keys, shuffle and deal (written by :mod:`.dealing`)."""

    key: KeyShare | None = None
    """My key share of the hand (from my seed), None if I hold no key."""
    announced: dict[int, PublicKeyShare] = field(default_factory=dict)
    joint: JointKey | None = None
    steps: list[ShuffleStep] = field(default_factory=list)
    final: tuple[Ciphertext, ...] = ()
    dealt: set[int] = field(default_factory=set)
    """Holders (indices) whose deal is in."""
    unchecked: list[tuple[ShuffleStatement, bytes]] = field(default_factory=list)
    """Strict tables: shuffle steps taken but not checked yet, with their envelopes."""
    proofs: int = 0
    """Strict tables: shuffle proofs checked."""


@dataclass(slots=True)
class ShareRecord:
    """Decryption shares this node holds (written by :mod:`.custody`)."""

    held: dict[int, dict[int, DecryptionShare]] = field(default_factory=dict)
    """token -> maker (holder index) -> a checked share of it."""
    public: list[DecryptionShare] = field(default_factory=list)
    """Every public share, with its publisher in ``publishers`` (audit evidence)."""
    publishers: list[int] = field(default_factory=list)


@dataclass(slots=True)
class SealRecord:
    """Boxes this node sealed (written by :mod:`.custody`): what it discloses if a
    recipient says a box was bad."""

    plain: dict[Slot, bytes] = field(default_factory=dict)
    """The plaintext share in each box."""
    box_keys: dict[Slot, bytes] = field(default_factory=dict)
    """Each box's ephemeral private key: proves, in a dispute, what the box held."""
    deal_boxes: set[Slot] = field(default_factory=set)
    """The boxes of my deal."""


@dataclass(slots=True)
class ForwardRecord:
    """Forwards (written by :mod:`.custody`)."""

    to_send: list[tuple[int, int]] = field(default_factory=list)
    """(token, to table seat) I still owe."""
    owed: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    """(token, to seat) -> (forwarding seat, fact count when it became owed): what the
    table waits for; a seat that withholds one is timed out, not its victim."""
    early: set[tuple[int, int, int]] = field(default_factory=set)
    """(token, to, sender) of forwards taken before this node knew they were owed."""
    sold: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    """Positions sold in this hand: position -> (seller, token it sold, fact count after
    the sale). A revert can give the buyer a card only the seller held."""


@dataclass(slots=True)
class PlayRecord:
    """The facts of the hand and what play built on them (written by :mod:`.play`)."""

    facts: list[Fact] = field(default_factory=list)
    phase_at: dict[int, tuple[int, int | None]] = field(default_factory=dict)
    """fact count -> (phase, expected seat) when the game stood there: tells a vote on a
    decision (which gets the default) from a vote on a withheld cryptographic step."""
    acted: list[tuple[int, int, int]] = field(default_factory=list)
    """(fact count, member, seq) of each decision applied."""
    consumed: list[tuple[int, int, int]] = field(default_factory=list)
    """(fact count before, member, seq) of each other member's envelope taken in play and
    after: a rewind gives back to their chains what it took past the step."""
    draws: dict[int, DecryptionShare] = field(default_factory=dict)
    """The stock card being drawn: holder index -> its public share."""
    shows: dict[int, int] = field(default_factory=dict)
    """The showdown: position -> card index."""
    skipping: set[int] = field(default_factory=set)
    """Seats whose late decision I dropped: what they sent after it, up to their
    ``rewound``, was built on it and is dropped too."""
    rewound: list[int] = field(default_factory=list)
    """My own late steps to mark with a ``rewound``."""


@dataclass(slots=True)
class Pet:
    """A proved claim (strict tables) waiting for every other key holder's part: its
    fact is applied only once the test shows the claim holds."""

    env: Envelope
    claim: PetClaim
    fact: Fact
    prover: int
    """The claim's prover: a holder index, or keyless_index for a seat without a key."""
    seat: int
    """The prover's table seat."""
    parts: dict[int, PetShare] = field(default_factory=dict)
    pending: dict[int, tuple[PetShare, bytes]] = field(default_factory=dict)
    """Parts taken but not checked yet, with their envelopes, in the order taken: checked
    together once all are in (a batch the threads can split), or once the hand stops."""


@dataclass(slots=True)
class ClaimRecord:
    """Claims that a card is none of some ranks (written by :mod:`.claims`)."""

    claimed: dict[bytes, tuple[int, frozenset[Rank]]] = field(default_factory=dict)
    """Plain answers and "no kille" disclosures: envelope id -> (token, ranks it is not)."""
    claims_on: dict[int, list[tuple[int, bytes, frozenset[Rank]]]] = field(
        default_factory=dict)
    """Per token (claimant seat, envelope, ranks): a face that contradicts one is proven
    at once by opening it."""
    exposed: list[tuple[int, msg.ShareEntry]] = field(default_factory=list)
    """The shares I opened a contradicted card with (my accuse carries them)."""
    pet: Pet | None = None
    """Strict tables: the claim being tested."""
    pet_result: dict[bytes, bool] = field(default_factory=dict)
    """Claim envelope id -> proven false."""
    tested: dict[bytes, tuple[PetClaim, Ciphertext, tuple[Point, ...]]] = field(
        default_factory=dict)
    """Strict tables: claim envelope id -> (claim, slot ciphertext, excluded cards), to
    check a false-fact accusation from the parts it carries."""
    lie_parts: list[tuple[int, bytes]] = field(default_factory=list)
    """The parts of a claim I found false (what my accuse shows)."""
    proofs: int = 0
    """Strict tables: claim proofs checked."""


@dataclass(slots=True)
class CloseRecord:
    """Reveals, the audit and the checkpoint (written by :mod:`.closing`)."""

    revealed: set[int] = field(default_factory=set)
    reveal_seq: dict[int, int] = field(default_factory=dict)
    """holder index -> seq of its reveal (its cut in the checkpoint)."""
    secrets: dict[int, bytes] = field(default_factory=dict)
    openings: dict[int, bytes] = field(default_factory=dict)
    audited: bool = False
    faces: tuple[int, ...] = ()
    """Card index per token, from the audit."""
    heads: tuple[int, ...] = ()
    """The checkpoint's cut."""
    checkpoint: Checkpoint | None = None
    signed: set[int] = field(default_factory=set)
    agreed: list[int] = field(default_factory=list)
    """Seats whose good checkpoint signature I hold, and in ``cert`` those envelopes."""
    cert: list[bytes] = field(default_factory=list)
    forked_good: set[int] = field(default_factory=set)
    """Holders whose good signature came with a fork."""
    forks_seen: int = 0
    """transcript.equivocations looked at for a good signature."""
    endorsed: bytes | None = None
    """The checkpoint id I endorsed the commit of (its id is a hash: made once)."""


@dataclass(slots=True)
class VoteRecord:
    """Time-out votes and seens of the hand (written by :mod:`.timeouts`)."""

    votes: dict[Step, set[int]] = field(default_factory=dict)
    """step -> holders (indices) that voted its time out."""
    seens: set[Step] = field(default_factory=set)
    responded: dict[Step, set[int]] = field(default_factory=dict)
    """step -> holders that voted on it or said they saw its envelope."""
    timed_out: set[int] = field(default_factory=set)
    defaulted: set[Step] = field(default_factory=set)
    """Decision steps given the default."""
    taken: set[bytes] = field(default_factory=set)
    """Ids of the timeout and seen envelopes taken."""
    silent_key: tuple[int, ...] | None = None
    """The vote counts the last silent sets (``silent``) were found from."""
    silent: frozenset[int] = frozenset()
    deciding: frozenset[int] = frozenset()
    """Holders in silent sets by a decision alone: its default, not a time-out."""
    movers: dict[int, frozenset[Step]] = field(default_factory=dict)
    """Holders whose chain holds an envelope after this hand: the steps each voted."""
    movers_version: int = -1
    to_answer: list[Step] = field(default_factory=list)
    """Steps I answer with a seen."""
    answered: set[Step] = field(default_factory=set)
    scanned: dict[int, int] = field(default_factory=dict)
    """member -> next seq to read ahead of consumption."""
    scan_version: int = -1
    expired: set[int] = field(default_factory=set)
    """The void round: seats whose accuse (a buyer's disclosure) I waited for longer than
    my limit, so a verdict may time them out here."""


@dataclass(frozen=True, slots=True)
class Accuse:
    """What one accuse says (a holder's, or a version another holder carried)."""

    id: bytes
    accusations: tuple[msg.Accusation, ...]
    disclosed: list[tuple[int, msg.ShareEntry, bytes | None]]
    opened: list[tuple[int, msg.ShareEntry]]
    parts: list[tuple[int, bytes]]
    cause: bytes | None
    root: bytes | None
    """The accuse it cites, carried (its bytes)."""
    agreed: bool
    """Its author signed the hand's checkpoint before it."""
    seen: tuple[bytes | None, ...] = ()
    """Per key holder, the id of its accuse the author held as it wrote this one."""

    @property
    def rooted(self) -> bool:
        """It carries the accuse it cites."""
        return self.root is not None


@dataclass(slots=True)
class VoidRecord:
    """A stopped hand's void round (docs/protocol.md II.11.1). The accuses are written by
    :mod:`.accusations` (``voiding`` up to ``counted``), the verdict's inputs by
    :mod:`.verdict` (``echoed``)."""

    voiding: bool = False
    """The hand's agreement decided its void: the void round runs."""
    stopping: bool = False
    """A fault found or an accuse taken: this node wants the hand voided, and makes no
    move in it but its accuse."""
    mine: list[msg.Accusation] = field(default_factory=list)
    """What my accuse will say."""
    accuses: dict[int, tuple[msg.Accusation, ...]] = field(default_factory=dict)
    """holder index -> its accusations."""
    disclosed: dict[int, list[tuple[int, msg.ShareEntry, bytes | None]]] = field(
        default_factory=dict)
    """holder index (or keyless_index of a buyer) -> the boxes its accuse discloses."""
    opened: dict[int, list[tuple[int, msg.ShareEntry]]] = field(default_factory=dict)
    parts: dict[int, list[tuple[int, bytes]]] = field(default_factory=dict)
    taken: set[bytes] = field(default_factory=set)
    """Ids of the accuse envelopes taken."""
    cause: bytes | None = None
    """Why I joined a void round I did not start: the id of the accuse I cite, and in
    ``root`` the bytes I carry of it (II.11.1)."""
    root: bytes | None = None
    accuse_ids: dict[int, bytes] = field(default_factory=dict)
    causes: dict[int, tuple[bytes | None, bool]] = field(default_factory=dict)
    """Per accuser: its cause, and whether it carried the cited accuse."""
    cited: dict[int, dict[bytes, bytes]] = field(default_factory=dict)
    """holder -> {id: bytes} of its accuses that others carried as their cause."""
    counted: dict[int, bytes] = field(default_factory=dict)
    """holder -> id of the accuse of it that counts."""
    accuse_wires: dict[bytes, bytes] = field(default_factory=dict)
    seen: dict[bytes, tuple[bytes | None, ...]] = field(default_factory=dict)
    """accuse id -> per key holder the id of its accuse that accuse's author held."""
    echoed: set[tuple[int, bytes | None, bytes | None]] = field(default_factory=set)
    """(holder, its accuse id named in a verdict, mine) of the versions I passed on."""


class Hand:
    """One hand as this node knows it: who holds a key, and a record per concern."""

    __slots__ = ("claims", "close", "ctx", "deck", "forwards", "holders", "me", "number",
                 "play", "seals", "shares", "snapshot", "timeouts", "void")

    def __init__(self, number: int, ctx: HandContext, holders: tuple[int, ...],
                 me: int | None, snapshot: GameSnapshot) -> None:
        self.number = number
        self.ctx = ctx
        self.holders = holders
        """Table seats in turn order; a holder's index here is its protocol seat."""
        self.me = me
        """My holder index, None if I hold no key."""
        self.snapshot = snapshot
        """The game before this hand's deal."""
        self.deck = DeckRecord()
        self.shares = ShareRecord()
        self.seals = SealRecord()
        self.forwards = ForwardRecord()
        self.play = PlayRecord()
        self.claims = ClaimRecord()
        self.close = CloseRecord()
        self.timeouts = VoteRecord()
        self.void = VoidRecord()

    def protocol_seat(self, seat: int) -> int | None:
        """The holder index of table seat ``seat``; None if it holds no key here."""
        try:
            return self.holders.index(seat)
        except ValueError:
            return None
