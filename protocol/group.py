"""Ristretto255 through rbcl: the one module that touches the group.

Two value types, :class:`Scalar` and :class:`Point`, each holding its 32
canonical bytes. Everything read from outside goes through ``from_bytes``,
which validates (canonical, in the group, not the identity, reduced); values
computed here are trusted and never re-validated, which keeps a 42-card
shuffle close to the bare cost of its multiplications.

Invariant: a :class:`Point` is never the identity. The identity has no use in
this protocol (ElGamal ciphertexts, keys and card encodings are all
non-identity) and is exactly what a crafted input would aim for (a zero key,
a ciphertext that decrypts to whatever the next share says). An operation
whose result would be the identity raises :class:`DegenerateResult`, a
:class:`RemoteProtocolError`, because only peer-chosen inputs can produce it.

rbcl raises a bare ``RuntimeError`` for a zero scalar or an identity result
and silently returns zeros for some invalid inputs; both are caught here so a
peer's bytes can only ever raise the remote error type.
"""

from __future__ import annotations

import ctypes
import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, wait
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import rbcl
from rbcl._sodium import _sodium as _libsodium

from protocol.domain import hash64
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.rng import Rng

__all__ = [
    "GROUP_ORDER",
    "POINT_BYTES",
    "SCALAR_BYTES",
    "BytesLike",
    "DegenerateResult",
    "OpCounter",
    "Point",
    "Scalar",
    "Workers",
    "counters",
    "differences",
    "ed25519_verify",
    "mult_sum",
    "mult_sums",
    "products",
    "share_results",
]

#: l, the prime order of ristretto255 (RFC 9496, section 4).
GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493
POINT_BYTES = 32
SCALAR_BYTES = 32
_IDENTITY = bytes(32)
BytesLike = bytes | bytearray | memoryview

_rb_base_mult = rbcl.crypto_scalarmult_ristretto255_base
_rb_var_mult = rbcl.crypto_scalarmult_ristretto255
_rb_add = rbcl.crypto_core_ristretto255_add
_rb_sub = rbcl.crypto_core_ristretto255_sub
_rb_is_valid = rbcl.crypto_core_ristretto255_is_valid_point
_from_hash = rbcl.crypto_core_ristretto255_from_hash
_reduce = rbcl.crypto_core_ristretto255_scalar_reduce
_s_add = rbcl.crypto_core_ristretto255_scalar_add
_s_sub = rbcl.crypto_core_ristretto255_scalar_sub
_s_mul = rbcl.crypto_core_ristretto255_scalar_mul
_s_neg = rbcl.crypto_core_ristretto255_scalar_negate


def _as_bytes(data: object, what: str) -> bytes:
    # Decoders take what a transport hands over; anything not bytes-like is refused as remote.
    if type(data) is bytes:
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    raise InvalidEncoding(f"{what} must be bytes, got {type(data).__name__}")


class DegenerateResult(RemoteProtocolError):
    """A group operation on peer-supplied values gave the identity or used a zero scalar."""


@dataclass(slots=True)
class OpCounter:
    """How many group operations ran since the last :meth:`reset` (for cost reports)."""

    base_mults: int = 0
    var_mults: int = 0
    adds: int = 0
    decodes: int = 0
    hashes_to_group: int = 0

    @property
    def scalar_mults(self) -> int:
        return self.base_mults + self.var_mults

    def reset(self) -> None:
        self.base_mults = self.var_mults = self.adds = self.decodes = 0
        self.hashes_to_group = 0

    def snapshot(self) -> dict[str, int]:
        return {
            "base_mults": self.base_mults,
            "var_mults": self.var_mults,
            "adds": self.adds,
            "decodes": self.decodes,
            "hashes_to_group": self.hashes_to_group,
        }


#: The module's counter; callers read and reset it around the work they measure.
counters = OpCounter()


@dataclass(frozen=True, slots=True)
class Scalar:
    """An integer modulo the group order, as 32 little-endian canonical bytes."""

    data: bytes

    def __post_init__(self) -> None:
        if type(self.data) is not bytes or len(self.data) != SCALAR_BYTES:
            raise LocalProtocolError(f"Scalar needs {SCALAR_BYTES} bytes, got {self.data!r}")

    # -- construction -------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: BytesLike, *, allow_zero: bool = False) -> Scalar:
        """Validate a scalar from outside: 32 bytes, reduced, and non-zero unless allowed."""
        data = _as_bytes(data, "scalar")
        if len(data) != SCALAR_BYTES:
            raise InvalidEncoding(
                f"scalar must be {SCALAR_BYTES} bytes, got {len(data)}", evidence=data
            )
        value = int.from_bytes(data, "little")
        if value >= GROUP_ORDER:
            raise InvalidEncoding("scalar is not reduced modulo the group order", evidence=data)
        if value == 0 and not allow_zero:
            raise InvalidEncoding("scalar is zero where zero is meaningless", evidence=data)
        return cls(data)

    @classmethod
    def fromhex(cls, text: str, *, allow_zero: bool = False) -> Scalar:
        try:
            raw = bytes.fromhex(text)
        except ValueError as exc:
            raise InvalidEncoding(f"scalar hex {text!r} is not hex") from exc
        return cls.from_bytes(raw, allow_zero=allow_zero)

    @classmethod
    def from_int(cls, value: int) -> Scalar:
        """The scalar ``value mod l`` (for constants and tests)."""
        return cls((value % GROUP_ORDER).to_bytes(SCALAR_BYTES, "little"))

    @classmethod
    def from_wide(cls, data: bytes) -> Scalar:
        """Reduce 64 uniform bytes modulo l (negligible bias)."""
        if len(data) != 64:
            raise LocalProtocolError(f"wide reduction needs 64 bytes, got {len(data)}")
        return _scalar(_reduce(data))

    @classmethod
    def from_hash(cls, purpose: str, *parts: bytes) -> Scalar:
        """``SHA-512(encode(label(purpose), *parts))`` reduced modulo l."""
        return _scalar(_reduce(hash64(purpose, *parts)))

    @classmethod
    def random(cls, rng: Rng) -> Scalar:
        """A uniform non-zero scalar from 64 bytes of ``rng``."""
        while True:
            raw = _reduce(rng.randbytes(64))
            if raw != _IDENTITY:
                return cls(raw)

    # -- arithmetic (all in libsodium) --------------------------------------
    def __add__(self, other: Scalar) -> Scalar:
        return _scalar(_s_add(self.data, other.data))

    def __sub__(self, other: Scalar) -> Scalar:
        return _scalar(_s_sub(self.data, other.data))

    def __mul__(self, other: Scalar) -> Scalar:
        return _scalar(_s_mul(self.data, other.data))

    def __neg__(self) -> Scalar:
        return _scalar(_s_neg(self.data))

    @property
    def is_zero(self) -> bool:
        return self.data == _IDENTITY

    def to_bytes(self) -> bytes:
        return self.data

    def hex(self) -> str:
        return self.data.hex()

    def __repr__(self) -> str:
        return f"Scalar.fromhex({self.data.hex()!r}, allow_zero=True)"


@dataclass(frozen=True, slots=True)
class Point:
    """A non-identity ristretto255 element, as its 32-byte canonical encoding.

    ``Point(data)`` trusts ``data`` (it only checks the length); bytes from
    outside must go through :meth:`from_bytes`.
    """

    data: bytes

    GENERATOR: ClassVar[Point]

    def __post_init__(self) -> None:
        if type(self.data) is not bytes or len(self.data) != POINT_BYTES:
            raise LocalProtocolError(f"Point needs {POINT_BYTES} bytes, got {self.data!r}")

    # -- construction -------------------------------------------------------
    @classmethod
    def from_bytes(cls, data: BytesLike) -> Point:
        """Validate an encoding from outside: length, canonical, in the group, not identity."""
        data = _as_bytes(data, "point")
        if len(data) != POINT_BYTES:
            raise InvalidEncoding(
                f"point must be {POINT_BYTES} bytes, got {len(data)}", evidence=data
            )
        counters.decodes += 1
        if data == _IDENTITY:
            raise InvalidEncoding("point is the identity", evidence=data)
        if not _is_valid(data):
            raise InvalidEncoding("bytes are not a canonical ristretto255 encoding", evidence=data)
        return cls(data)

    @classmethod
    def many_from_bytes(
        cls, data: BytesLike, *, workers: Workers | None = None
    ) -> tuple[Point, ...]:
        """Validate a concatenation of point encodings (a deck, a proof) in one tight loop.

        ``workers`` splits the checks between threads (from
        :data:`MIN_PARALLEL_DECODES` points on); the result, or the error (the
        first invalid point's), is the same without.
        """
        data = _as_bytes(data, "points")
        if len(data) % POINT_BYTES:
            raise InvalidEncoding(
                f"{len(data)} bytes are not a whole number of points", evidence=data[:256]
            )
        chunks = [data[i:i + POINT_BYTES] for i in range(0, len(data), POINT_BYTES)]
        if workers is None or workers.count == 1 or len(chunks) < MIN_PARALLEL_DECODES:
            found = [_first_invalid(list(enumerate(chunks)))]
        else:
            found = _chunked(_first_invalid, list(enumerate(chunks)), workers, True)
        for bad in found:
            if bad >= 0:
                raise InvalidEncoding(f"point {bad} is invalid", evidence=chunks[bad])
        counters.decodes += len(chunks)
        return tuple(map(_point, chunks))

    @classmethod
    def fromhex(cls, text: str) -> Point:
        try:
            raw = bytes.fromhex(text)
        except ValueError as exc:
            raise InvalidEncoding(f"point hex {text!r} is not hex") from exc
        return cls.from_bytes(raw)

    @classmethod
    def from_uniform(cls, data: bytes) -> Point:
        """RFC 9496's one-way map from 64 uniform bytes (``from_hash`` in libsodium)."""
        if len(data) != 64:
            raise LocalProtocolError(f"hash-to-group needs 64 bytes, got {len(data)}")
        counters.hashes_to_group += 1
        out = _from_hash(data)
        if out == _IDENTITY:
            raise DegenerateResult("hash-to-group gave the identity", evidence=data)
        return _point(out)

    @classmethod
    def from_hash(cls, purpose: str, *parts: bytes) -> Point:
        """Hash-to-group: the one-way map of ``hash64(purpose, *parts)``."""
        return cls.from_uniform(hash64(purpose, *parts))

    @classmethod
    def base_mult(cls, scalar: Scalar) -> Point:
        """``scalar * G``, the generator's fast path."""
        counters.base_mults += 1
        try:
            return _point(_base_mult(scalar.data))
        except RuntimeError as exc:
            raise DegenerateResult("base multiplication by a zero scalar") from exc

    # -- arithmetic ---------------------------------------------------------
    def __mul__(self, scalar: Scalar) -> Point:
        if self.data == _GENERATOR_BYTES:
            return Point.base_mult(scalar)
        counters.var_mults += 1
        try:
            return _point(_var_mult(scalar.data, self.data))
        except RuntimeError as exc:
            raise DegenerateResult(
                f"scalar multiplication of {self.data.hex()} gave the identity",
                evidence=self.data,
            ) from exc

    def __add__(self, other: Point) -> Point:
        counters.adds += 1
        out = _add(self.data, other.data)
        if out == _IDENTITY:
            raise DegenerateResult(
                f"{self.data.hex()} + {other.data.hex()} is the identity", evidence=other.data
            )
        return _point(out)

    def __sub__(self, other: Point) -> Point:
        counters.adds += 1
        out = _sub(self.data, other.data)
        if out == _IDENTITY:
            raise DegenerateResult(
                f"{self.data.hex()} - {other.data.hex()} is the identity", evidence=other.data
            )
        return _point(out)

    def __neg__(self) -> Point:
        # -P = (l - 1) * P would cost a multiplication; P - 2P costs two additions.
        return self - (self + self)

    @staticmethod
    def sum(points: list[Point] | tuple[Point, ...]) -> Point:
        """The sum of one or more points."""
        if not points:
            raise LocalProtocolError("sum of no points is the identity")
        acc = points[0].data
        for p in points[1:]:
            counters.adds += 1
            acc = _add(acc, p.data)
        if acc == _IDENTITY:
            raise DegenerateResult("sum of points is the identity")
        return _point(acc)

    def to_bytes(self) -> bytes:
        return self.data

    def hex(self) -> str:
        return self.data.hex()

    def __repr__(self) -> str:
        return f"Point.fromhex({self.data.hex()!r})"


_new = object.__new__
_set = object.__setattr__


# -- results shared between the peers of one process -----------------------------------
# A simulated table runs every peer in one process, and every peer checks the same proofs
# and signatures: the same products, sums and point checks, n times over. With sharing on,
# each raw result is computed once and then looked up (a dict keyed by the whole input;
# only results, never a failure, are kept). The counters are untouched: they count what
# each peer's protocol asks for, in the calling code above. Off by default: a real peer
# is alone in its process and would only hold its own secrets' products longer.

_SHARED_MAX = 1 << 17
"""Entries kept before the table is emptied (about 30 MB): a whole hand's checks fit."""
_shared: dict[bytes, bytes] | None = None


def share_results(on: bool) -> None:
    """Keep raw group results for the other peers of this process (``True``: the
    simulator and the test suite) or not (``False``, the default; a benchmark that times
    peers turns it off, as each peer must pay for its own checks)."""
    global _shared  # noqa: PLW0603 -- one switch for the process: every peer shares it
    _shared = {} if on else None


def _recall(key: bytes) -> bytes | None:
    memo = _shared
    return None if memo is None else memo.get(key)


def _keep(key: bytes, value: bytes) -> bytes:
    memo = _shared
    if memo is not None:
        if len(memo) >= _SHARED_MAX:
            memo.clear()
        memo[key] = value
    return value


def _base_mult(scalar: bytes) -> bytes:
    if _shared is None:
        return _rb_base_mult(scalar)  # type: ignore[no-any-return]
    key = b"b" + scalar
    return _recall(key) or _keep(key, _rb_base_mult(scalar))


def _var_mult(scalar: bytes, point: bytes) -> bytes:
    if _shared is None:
        return _rb_var_mult(scalar, point)  # type: ignore[no-any-return]
    key = b"m" + scalar + point
    return _recall(key) or _keep(key, _rb_var_mult(scalar, point))


def _add(a: bytes, b: bytes) -> bytes:
    if _shared is None:
        return _rb_add(a, b)  # type: ignore[no-any-return]
    key = b"a" + a + b
    return _recall(key) or _keep(key, _rb_add(a, b))


def _sub(a: bytes, b: bytes) -> bytes:
    if _shared is None:
        return _rb_sub(a, b)  # type: ignore[no-any-return]
    key = b"s" + a + b
    return _recall(key) or _keep(key, _rb_sub(a, b))


def _is_valid(data: bytes) -> bool:
    if _shared is None:
        return bool(_rb_is_valid(data))
    key = b"v" + data
    if _recall(key) is not None:
        return True
    if not _rb_is_valid(data):
        return False
    _keep(key, b"")
    return True


def _point(data: bytes) -> Point:
    # Point(data) for 32 bytes rbcl just computed or validated: without the length check.
    p = _new(Point)
    _set(p, "data", data)
    return p


def _scalar(data: bytes) -> Scalar:
    # Scalar(data) for 32 bytes libsodium just computed: without the length check.
    k = _new(Scalar)
    _set(k, "data", data)
    return k


def _first_invalid(chunks: list[tuple[int, bytes]]) -> int:
    # Runs in pool threads: the index of the first encoding that is not a point, or -1.
    for i, chunk in chunks:
        if chunk == _IDENTITY or not _is_valid(chunk):
            return i
    return -1


_ONE_BYTES = (1).to_bytes(32, "little")
_GENERATOR_BYTES = _base_mult(_ONE_BYTES)
Point.GENERATOR = Point(_GENERATOR_BYTES)


# -- multiplications side by side ------------------------------------------------------------

#: Fewest point encodings worth validating on several threads (a check costs about a third
#: of an addition; a deck has 84, a 42-card shuffle proof 131).
MIN_PARALLEL_DECODES = 48

#: Fewest terms worth handing to threads: below it a chunk's work is no longer large
#: next to the cost of handing it over and collecting it (measured by bench.strict_ops).
MIN_PARALLEL_TERMS = 64

_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass(frozen=True, slots=True)
class Workers:
    """Threads that run independent multiplications side by side.

    rbcl calls libsodium through ctypes, which lets go of the GIL for each call,
    so on a machine with several idle cores the chunks of a large sum run at the
    same time (on a machine already busy, threads only add hand-over costs).
    The caller owns ``pool`` (protocol/ never creates threads) and must not call
    :func:`mult_sum` from one of ``pool``'s own threads: it waits for the pool,
    which would then wait for itself. ``count`` is how many chunks a large sum
    is split into, usually the number of cores: the calling thread runs one
    chunk itself and the pool the ``count - 1`` others (any the pool has not
    started when the caller is done with its own, the caller takes back).
    """

    pool: Executor
    count: int

    def __post_init__(self) -> None:
        if not isinstance(self.pool, Executor):
            raise LocalProtocolError(f"Workers needs an Executor, got {self.pool!r}")
        if type(self.count) is not int or self.count < 1:
            raise LocalProtocolError(f"Workers needs a count of at least 1, got {self.count!r}")


def _bounds(weights: Sequence[int], parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous, non-empty ranges of ``weights`` with near-equal sums.

    An item goes to the range in which its middle falls (so the first range, the
    calling thread's, is never the larger for an item that straddles the line).
    """
    total, n = sum(weights), len(weights)
    out: list[tuple[int, int]] = []
    start = acc = 0
    for i, wt in enumerate(weights):
        k = len(out)
        if k < parts - 1 and i > start and (
            n - i == parts - k - 1 or (2 * acc + wt) * parts > 2 * total * (k + 1)
        ):
            out.append((start, i))
            start = i
        acc += wt
    out.append((start, n))
    return out


def _chunked(
    work: Callable[[list[_T]], _R], items: list[_T], workers: Workers | None, parallel: bool,
    weights: Sequence[int] | None = None,
) -> list[_R]:
    """``work`` on contiguous chunks of ``items``: several at once if ``parallel`` and ``workers``.

    Chunks are balanced by ``weights`` (one per item; default equal). The
    calling thread runs the first chunk itself while the pool runs the others;
    then it takes back and runs any chunk the pool has not started yet (on a
    machine whose other cores are busy, a pool thread may wait long to be
    scheduled: the work is then done one chunk after another, as without
    threads, instead of waiting for it). No chunk is still running when this
    returns or raises, and an error is the one of the first failing chunk, so
    the result, or the error, is the one a single pass over ``items`` in order
    gives.
    """
    if not parallel or workers is None or workers.count == 1 or len(items) < 2:
        return [work(items)]
    parts = min(workers.count, len(items))
    ranges = _bounds([1] * len(items) if weights is None else weights, parts)
    futures: list[Future[_R]] = [
        workers.pool.submit(work, items[a:b]) for a, b in ranges[1:]
    ]
    a, b = ranges[0]
    try:
        out = [work(items[a:b])]
        for f, (a, b) in zip(futures, ranges[1:], strict=True):
            out.append(work(items[a:b]) if f.cancel() else f.result())
    except BaseException:
        # A cancelled chunk never runs; wait for those that did start.
        wait([f for f in futures if not f.cancel()])
        raise
    return out


# A job is (scalar, point): ``None`` for the point means the generator (base-mult fast
# path), ``None`` for the scalar means one (the point itself, no multiplication).
_Job = tuple[bytes | None, bytes | None]


def _mult(scalar: bytes | None, point: bytes | None) -> bytes:
    # Runs in pool threads: raw rbcl calls only, no counters (``+=`` from two threads loses counts).
    if scalar is None:
        return _GENERATOR_BYTES if point is None else point
    if point is None:
        try:
            out: bytes = _base_mult(scalar)
        except RuntimeError as exc:
            raise DegenerateResult("base multiplication by a zero scalar") from exc
        return out
    try:
        out = _var_mult(scalar, point)
    except RuntimeError as exc:
        raise DegenerateResult(
            f"scalar multiplication of {point.hex()} gave the identity", evidence=point
        ) from exc
    return out


def _cost(job: _Job) -> int:
    # A job's time in additions (about 18 us here): a variable-base product costs three,
    # a base-point one one, and adding the result one more.
    scalar, point = job
    return 1 if scalar is None else 2 if point is None else 4


def _sum_chunk(jobs: list[_Job]) -> bytes:
    # A partial sum is raw bytes and may be the identity; only the caller's total is checked.
    k, p = jobs[0]
    acc = _mult(k, p)
    for k, p in jobs[1:]:
        acc = _add(acc, _mult(k, p))
    return acc


def _job(p: Point, k: Scalar) -> tuple[bytes, bytes | None]:
    """``k * P`` as a job: the generator takes the base-mult fast path."""
    return (k.data, None if p.data == _GENERATOR_BYTES else p.data)


def _count(jobs: Sequence[_Job]) -> None:
    # Counted in the calling thread, before any work: the same whether threads run or not.
    for k, p in jobs:
        if k is None:
            continue  # a scalar one: added, not multiplied
        if p is None:
            counters.base_mults += 1
        else:
            counters.var_mults += 1


def _jobs(terms: Sequence[tuple[Point, Scalar]], *, ones: bool) -> list[_Job]:
    """The terms as jobs, zero scalars left out (and scalars one, if ``ones``, not multiplied)."""
    jobs: list[_Job] = [(None, p.data) if ones and k.data == _ONE_BYTES else _job(p, k)
                        for p, k in terms if k.data != _IDENTITY]
    _count(jobs)
    if jobs:
        counters.adds += len(jobs) - 1
    return jobs


def mult_sum(terms: Sequence[tuple[Point, Scalar]], workers: Workers | None = None) -> Point:
    """``sum k_i P_i``; the generator's terms take the base-mult fast path.

    A term with a zero scalar adds nothing and costs nothing. The result is the
    one ``Point.sum([P * k for P, k in terms if k])`` gives, and so are the errors:
    :class:`DegenerateResult` if the total is the identity (also when no term is
    left), as :meth:`Point.sum` raises; partial sums may be the identity. With
    ``workers`` and at least :data:`MIN_PARALLEL_TERMS` terms, ``workers.count``
    contiguous chunks of about equal cost are multiplied and summed side by side
    (the calling thread does one, see ``_chunked``) and the caller adds their
    sums. The counters count every multiplication and addition as the
    single-threaded sum does.
    """
    jobs = _jobs(terms, ones=False)
    if not jobs:
        raise DegenerateResult("sum of points is the identity (every scalar is zero)")
    partial = _chunked(_sum_chunk, jobs, workers, len(jobs) >= MIN_PARALLEL_TERMS,
                       [_cost(job) for job in jobs])
    acc = partial[0]
    for part in partial[1:]:
        acc = _add(acc, part)
    if acc == _IDENTITY:
        raise DegenerateResult("sum of points is the identity")
    return _point(acc)


def _sums_chunk(sums: list[list[_Job]]) -> list[bytes]:
    out = []
    for jobs in sums:
        if not jobs:
            raise DegenerateResult("sum of points is the identity (every scalar is zero)")
        total = _sum_chunk(jobs)
        if total == _IDENTITY:
            raise DegenerateResult("sum of points is the identity")
        out.append(total)
    return out


def mult_sums(
    sums: Sequence[Sequence[tuple[Point, Scalar]]], workers: Workers | None = None
) -> list[Point]:
    """``[mult_sum(terms) for terms in sums]``, the small sums split between ``workers``.

    For many independent small sums, each too small to split on its own:
    re-masking a deck (``C1 + r G`` is the sum ``[(C1, 1), (G, r)]``) or a
    proof's commitments. A term whose scalar is one is added without a
    multiplication (nor is one counted). Results and errors are those of the
    comprehension: the first sum in order that fails raises. The pool is used
    once the sums hold :data:`MIN_PARALLEL_TERMS` terms in all.
    """
    all_jobs = [_jobs(terms, ones=True) for terms in sums]
    if workers is None or workers.count == 1:
        # One thread: no chunks to balance (the audit's re-masking, at every hand).
        return [_point(b) for b in _sums_chunk(all_jobs)]
    size = sum(len(jobs) for jobs in all_jobs)
    weights = [sum(_cost(job) for job in jobs) for jobs in all_jobs]
    parts = _chunked(_sums_chunk, all_jobs, workers, size >= MIN_PARALLEL_TERMS, weights)
    return [_point(b) for part in parts for b in part]


#: Least work, in additions' time (see ``_cost``: 3 per variable-base product, 1 per
#: base-point one), worth splitting a list of single products between threads. Measured by
#: ``bench.strict_ops --threads 2`` (median of 15 rounds): handing work over and back costs
#: about 30 us. On 2 idle cores, 4 products (weight 10: a decryption share's or a PET
#: response's check) took 225 us split and 260 us not, 8 (weight 22) 370 and 550, 29 (a PET
#: claim's, weight 85) 1290 and 2750; with another process on one core, every split lost
#: 35 to 170 us. So only work well above a proof-of-share check is split.
MIN_PARALLEL_PRODUCTS = 16


def _products_chunk(jobs: list[_Job]) -> list[bytes]:
    return [_mult(k, p) for k, p in jobs]


def products(
    pairs: Sequence[tuple[Point, Scalar]], workers: Workers | None = None
) -> list[Point]:
    """``[P * k for P, k in pairs]``: independent products, split between ``workers``.

    For the products of one proof's check or making. Results, errors and
    counters are those of the comprehension, except that every product is
    counted before any runs (an error leaves the later ones counted too): a
    zero scalar or an identity result raises :class:`DegenerateResult` with the
    message ``P * k`` gives, the first in order that fails. The generator takes
    the base-mult fast path. The pool is used once the products are worth
    :data:`MIN_PARALLEL_PRODUCTS` additions.
    """
    jobs: list[_Job] = [_job(p, k) for p, k in pairs]
    _count(jobs)
    weights = [_cost(job) - 1 for job in jobs]
    parts = _chunked(_products_chunk, jobs, workers, sum(weights) >= MIN_PARALLEL_PRODUCTS,
                     weights)
    return [_point(b) for part in parts for b in part]


# A difference job: (a, P, b, Q) for ``a P - b Q``, ``None`` for a point meaning the generator.
_Diff = tuple[bytes, bytes | None, bytes, bytes | None]


def _differences_chunk(jobs: list[_Diff]) -> list[bytes]:
    out = []
    for a, p, b, q in jobs:
        x, y = _mult(a, p), _mult(b, q)
        d = _sub(x, y)
        if d == _IDENTITY:
            raise DegenerateResult(f"{x.hex()} - {y.hex()} is the identity", evidence=y)
        out.append(d)
    return out


def differences(
    terms: Sequence[tuple[Point, Scalar, Point, Scalar]], workers: Workers | None = None
) -> list[Point]:
    """``[P * a - Q * b for P, a, Q, b in terms]``, split between ``workers``.

    For a Schnorr-style check's commitments (``z G - c X``). Results, errors and
    counters are those of the comprehension, except that every operation is
    counted before any runs: a zero scalar or an identity product raises what
    the product raises, an identity difference what ``Point.__sub__`` raises,
    the first in order that fails. The pool is used once the products are worth
    :data:`MIN_PARALLEL_PRODUCTS` additions.
    """
    pairs = [(_job(p, a), _job(q, b)) for p, a, q, b in terms]
    _count([job for pair in pairs for job in pair])
    jobs: list[_Diff] = [(a, p, b, q) for (a, p), (b, q) in pairs]
    counters.adds += len(jobs)
    weights = [(1 if p is None else 3) + (1 if q is None else 3) + 1 for _, p, _, q in jobs]
    parts = _chunked(_differences_chunk, jobs, workers,
                     sum(weights) - len(jobs) >= MIN_PARALLEL_PRODUCTS, weights)
    return [_point(d) for part in parts for d in part]


# -- Ed25519 verification (libsodium) ---------------------------------------------------
# Every envelope is checked by every peer, so this is on every message's path: libsodium's
# verifier, from the copy rbcl bundles and has initialised, took 60 us here against
# OpenSSL's 130-200 us, measured side by side. Signing stays with ``cryptography``.
_ed_verify = _libsodium.crypto_sign_ed25519_verify_detached
_ed_verify.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p)
_ed_verify.restype = ctypes.c_int


def ed25519_verify(signature: bytes, message: bytes, public: bytes) -> bool:
    """RFC 8032 Ed25519 verification as libsodium does it (docs/protocol.md 10.3).

    Cofactorless (``[S]B = R + [k]A``), ``S < L``, ``R`` compared as bytes with the
    canonical encoding of ``[S]B - [k]A``, and refused when ``R`` or ``A`` encodes a point
    of small order or ``A`` is not canonical. Wrong sizes are ``False``, never an error.
    """
    if type(signature) is not bytes or type(message) is not bytes or type(public) is not bytes:
        raise LocalProtocolError("ed25519_verify takes bytes")
    if len(signature) != 64 or len(public) != 32:
        return False
    if _shared is None:
        return bool(_ed_verify(signature, message, len(message), public) == 0)
    key = b"e" + signature + public + hashlib.blake2b(message, digest_size=32).digest()
    if _recall(key) is not None:
        return True
    if _ed_verify(signature, message, len(message), public) != 0:
        return False
    _keep(key, b"")
    return True
