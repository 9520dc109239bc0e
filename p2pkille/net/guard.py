"""What a peer takes from the network besides signed envelopes, and what it sends back.

A gap-fill sync (``runtime.gapfill``) is unsigned and is answered with up to 64 envelopes:
taken from anybody, it makes every peer an amplifier. The :class:`Guard` sits between a
transport and the node's driver and holds three rules:

1. A sync is taken only from a member, over a channel that proves the member. On the mesh
   the link itself does (the handshake proved the key, and a formed table's mesh admits
   only members). On MQTT the author named by a topic is the broker's word only, so there
   a sync travels as a *signed sync*: :data:`PREFIX`, the member's Ed25519 signature (64
   bytes), an 8-byte big-endian stamp, then the node's sync bytes. The signature (purpose
   ``transport-sync``) covers ``encode(b"sync/v1", table id, member key, stamp, sync)``, so
   it is valid for one table and one member only; the stamp (the signer's clock in
   nanoseconds, kept increasing) lets a receiver refuse a replayed frame: a stamp seen
   before, or one older than :data:`REPLAY_WINDOW` behind the newest from that member.
   Everything else that says it is a sync (an unsigned one on MQTT, one from a
   non-member, a bad signature) is refused and counted, never answered.
2. What the node sends in answer to a sync is *repair* traffic: it is charged to a
   per-member budget (a token bucket of bytes), and beyond it dropped and counted; the
   member asks again with its next sync. Repair traffic also queues behind game traffic
   in every transport (``repair=True`` on ``send``).
3. What waits for the node is bounded per sender (:class:`Inbox`): a sender with more than
   ``per_sender`` bytes queued loses the newest (counted; gap fill brings what matters
   again), so one flooder cannot grow our memory or starve the members.
"""

from __future__ import annotations

import logging
import struct
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from p2pkille.runtime import gapfill
from protocol.domain import encode
from protocol.errors import RemoteProtocolError
from protocol.identity import SIGNATURE_SIZE, Identity, PublicKey

__all__ = [
    "PREFIX",
    "PURPOSE",
    "REPLAY_WINDOW",
    "Guard",
    "GuardStats",
    "Inbox",
    "SignedSyncError",
    "open_signed_sync",
    "signed_sync",
]

log = logging.getLogger(__name__)

PREFIX: Final = b"p2pkille-sync/1\n"
"""Marks a signed sync (envelopes start with ``{``, raw syncs with ``S``, lobby messages
with ``p2pkille-lobby/``)."""
PURPOSE: Final = "transport-sync"
REPLAY_WINDOW: Final = 30 * 10**9
"""Nanoseconds: a signed sync this much older than the newest one taken from its member is
refused as a replay (the last :data:`_RECENT` stamps are remembered against exact copies)."""
_STAMP: Final = struct.Struct(">Q")
_HEAD: Final = len(PREFIX) + SIGNATURE_SIZE + _STAMP.size
_MAX_SYNC: Final = 96 + 24 * 32  # gapfill.decode_sync's bound at the largest table
_RECENT: Final = 64


class SignedSyncError(RemoteProtocolError):
    """A signed sync that is malformed, not signed by the member it names, or a replay."""


def _transcript(table: bytes, key: PublicKey, stamp: int, sync: bytes) -> bytes:
    return encode(b"sync/v1", table, key.raw, _STAMP.pack(stamp), sync)


def signed_sync(identity: Identity, table: bytes, stamp: int, sync: bytes) -> bytes:
    """``sync`` signed by ``identity`` for ``table`` at ``stamp`` (see the module doc)."""
    signature = identity.sign(PURPOSE, _transcript(table, identity.public, stamp, sync))
    return PREFIX + signature + _STAMP.pack(stamp) + sync


def open_signed_sync(data: bytes, table: bytes, key: PublicKey) -> tuple[int, bytes]:
    """The stamp and the sync bytes of a signed sync by ``key``; raises the remote kind
    only: :class:`SignedSyncError` for a malformed frame, ``InvalidSignature`` for a
    signature that is not ``key``'s over this table, stamp and sync."""
    if not data.startswith(PREFIX) or not _HEAD < len(data) <= _HEAD + _MAX_SYNC:
        raise SignedSyncError(f"signed sync of {len(data)} bytes", evidence=data[:64])
    signature = data[len(PREFIX):len(PREFIX) + SIGNATURE_SIZE]
    (stamp,) = _STAMP.unpack_from(data, len(PREFIX) + SIGNATURE_SIZE)
    sync = data[_HEAD:]
    if not sync.startswith(gapfill.PREFIX):
        raise SignedSyncError("a signed sync that carries no sync", evidence=data[:64])
    key.verify(PURPOSE, _transcript(table, key, stamp, sync), signature, evidence=data[:64])
    return stamp, sync


def is_sync(data: bytes) -> bool:
    """Whether transport input claims to be a sync, signed or not."""
    return data.startswith((gapfill.PREFIX, PREFIX))


@dataclass(slots=True)
class GuardStats:
    """What the guard refused and held back, for the peer's report."""

    syncs_taken: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    """Syncs refused, by reason: ``unsigned``, ``non-member``, ``bad-signature``,
    ``replay``, ``rate`` (more a second than a member sends)."""
    repair_sent: int = 0
    """Bytes sent in answer to syncs."""
    repair_dropped: int = 0
    """Messages in answer to syncs dropped for being over the member's budget."""
    inbox_dropped: int = 0
    """Messages from the network dropped because their sender had too much queued."""

    def refuse(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1

    def text(self) -> str:
        refused = sum(self.refused.values())
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.refused.items()))
        return (f"{self.syncs_taken} syncs answered, {refused} refused"
                + (f" ({why})" if why else "")
                + f"; {self.repair_sent} bytes of gap fill sent, {self.repair_dropped} "
                f"over budget; {self.inbox_dropped} inbound messages dropped")


class _Buckets:
    """Token buckets by name: ``rate`` a second, holding at most ``burst``."""

    __slots__ = ("_state", "burst", "rate")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self._state: dict[str, tuple[float, float]] = {}  # name -> (tokens, at)

    def take(self, name: str, amount: float, now: float) -> bool:
        tokens, at = self._state.get(name, (self.burst, now))
        tokens = min(self.burst, tokens + max(0.0, now - at) * self.rate)
        if amount > tokens:
            self._state[name] = (tokens, now)
            return False
        self._state[name] = (tokens - amount, now)
        return True


class Guard:
    """The rules of the module doc for one peer at one table.

    ``members``: the table's keys (a sync from anybody else is refused); ``identity``: ours,
    to sign our syncs when ``signed``; ``signed``: syncs travel signed (MQTT), or bare over
    links that prove the member (the mesh). ``budget`` bytes per second of repair traffic
    per member, with bursts up to ``burst`` bytes; at most ``sync_rate`` syncs a second are
    looked at per member. ``clock`` (seconds) is the budgets', and ``stamp`` (nanoseconds)
    the signed syncs'.
    """

    def __init__(self, identity: Identity, table: bytes, members: Iterable[PublicKey], *,
                 signed: bool, budget: float = 512 << 10, burst: float = 2 << 20,
                 sync_rate: float = 20.0,
                 clock: Callable[[], float] = time.monotonic,
                 stamp: Callable[[], int] = time.time_ns) -> None:
        if not 0 < budget <= burst:
            raise ValueError(f"budget {budget!r}, burst {burst!r}: need 0 < budget <= burst")
        self.identity = identity
        self.table = bytes(table)
        self.members = {str(key): key for key in members}
        self.signed = signed
        self.budget = float(budget)
        self.burst = float(burst)
        self.clock = clock
        self.stamp = stamp
        self.stats = GuardStats()
        self._repair = _Buckets(self.budget, self.burst)
        self._syncs = _Buckets(sync_rate, 2 * sync_rate)
        self._newest: dict[str, int] = {}
        self._recent: dict[str, deque[int]] = {}
        self._last_stamp = 0

    # -- inbound ------------------------------------------------------------------------

    def take(self, sender: str, data: bytes) -> bytes | None:
        """What of ``data`` from ``sender`` the node may see: the input itself, the bare
        sync of a signed sync that checks out, or ``None`` for a refused sync."""
        if not is_sync(data):
            return data
        sync, reason = self._check(sender, data)
        if sync is not None:
            self.stats.syncs_taken += 1
            return sync
        self.stats.refuse(reason)
        total = sum(self.stats.refused.values())
        if total & (total - 1) == 0:  # 1, 2, 4, 8, ...: says so without flooding the log
            log.warning("guard: refused a sync from %.16s (%s); %d refused so far", sender,
                        reason, total)
        return None

    # One return per reason a sync is refused (counted apart).
    def _check(self, sender: str, data: bytes) -> tuple[bytes | None, str]:  # noqa: PLR0911
        """The sync in ``data``, or ``None`` and why not."""
        key = self.members.get(sender)
        if key is None:
            return None, "non-member"
        if data.startswith(gapfill.PREFIX) and self.signed:
            return None, "unsigned"
        if not self._syncs.take(sender, 1.0, self.clock()):
            # More syncs than any member sends (one a sync interval, and one back to each
            # peer that is ahead): not even worth checking a signature. (Forged frames
            # under a member's name can use up its rate: its gap fill waits meanwhile.)
            return None, "rate"
        if data.startswith(gapfill.PREFIX):
            return data, ""
        try:
            stamp, sync = open_signed_sync(data, self.table, key)
        except RemoteProtocolError:
            return None, "bad-signature"
        recent = self._recent.setdefault(sender, deque(maxlen=_RECENT))
        newest = self._newest.get(sender, 0)
        if stamp in recent or stamp + REPLAY_WINDOW < newest:
            return None, "replay"
        recent.append(stamp)
        self._newest[sender] = max(newest, stamp)
        return sync, ""

    # -- outbound -----------------------------------------------------------------------

    def wrap(self, data: bytes) -> bytes:
        """Our own outgoing message as it travels: a sync signed where syncs are."""
        if not self.signed or not data.startswith(gapfill.PREFIX):
            return data
        stamp = max(self.stamp(), self._last_stamp + 1)
        self._last_stamp = stamp
        return signed_sync(self.identity, self.table, stamp, data)

    def charge(self, to: str, size: int) -> bool:
        """Whether ``size`` more bytes of repair traffic may go to ``to`` now (and if so,
        they are counted against its budget)."""
        if not self._repair.take(to, float(size), self.clock()):
            self.stats.repair_dropped += 1
            return False
        self.stats.repair_sent += size
        return True


class Inbox:
    """Input waiting for the node, bounded per sender and in all (see the module doc):
    ``put`` says whether it was kept; ``pop`` takes the oldest."""

    def __init__(self, per_sender: int = 8 << 20, senders: int = 256,
                 total: int = 64 << 20) -> None:
        self.per_sender = per_sender
        self.senders = senders
        self.total = total
        self.dropped = 0
        self._items: deque[tuple[str, bytes]] = deque()
        self._bytes: dict[str, int] = {}
        self._held = 0

    @property
    def held(self) -> int:
        """Bytes waiting."""
        return self._held

    def __len__(self) -> int:
        return len(self._items)

    def put(self, sender: str, data: bytes, *, force: bool = False) -> bool:
        """Queue ``data`` unless ``sender`` is over its bound (``force``: our own input,
        always kept)."""
        held = self._bytes.get(sender)
        if not force and ((held is None and len(self._bytes) >= self.senders)
                          or (held or 0) + len(data) > self.per_sender
                          or self._held + len(data) > self.total):
            self.dropped += 1
            if self.dropped & (self.dropped - 1) == 0:
                log.warning("inbox: %.16s has %d bytes waiting; dropped a message (%d so "
                            "far; gap fill brings what was lost)", sender, held or 0,
                            self.dropped)
            return False
        self._bytes[sender] = (held or 0) + len(data)
        self._held += len(data)
        self._items.append((sender, data))
        return True

    def pop(self) -> tuple[str, bytes]:
        sender, data = self._items.popleft()
        self._held -= len(data)
        left = self._bytes[sender] - len(data)
        if left:
            self._bytes[sender] = left
        else:
            del self._bytes[sender]
        return sender, data
