"""Zero-knowledge proof of a correct shuffle (Terelius-Wikstrom, as specified by Haenni et al.).

A shuffle step turns ``deck_in`` (ciphertexts ``e_j = (a_j, b_j)``) into
``deck_out`` with ``e'_i = e_{pi(i)} + r_i (G, H)``. This module proves, without
revealing ``pi`` or ``r``, that such ``pi`` and ``r`` exist. The construction is
the proof of a shuffle of Terelius and Wikstrom (AFRICACRYPT 2010) in the
step-by-step form of Haenni, Locher, Koenig and Dubuis, "Pseudo-code algorithms
for verifiable re-encryption mix-nets" (FC 2017 workshops), GenShuffleProof and
CheckShuffleProof, written additively for ristretto255:

- generators ``h_i = H2G("shuffle-generators", u64(N), u64(i))`` for
  ``i < N`` and the chain base ``h_N`` (same label, index ``N``);
- permutation commitment ``c_{pi(i)} = rho_{pi(i)} G + h_i``;
- challenges ``u_j = Hs("shuffle-proof-u", d, C, u64(j))`` where ``d`` digests
  the statement (context, ``G``, ``H``, both decks) and ``C`` is the commitment;
- chain ``c^_{-1} = h_N``, ``c^_i = rhat_i G + u_{pi(i)} c^_{i-1}``;
- a Schnorr-style proof of the five linear relations, with challenge
  ``c = Hs("shuffle-proof-c", d, C, C^, t1..t4b, T^)``.

The verifier checks all ``N + 5`` relations as one random linear combination
(weights from ``"shuffle-proof-batch"``) in which terms with equal bases are
merged, so each distinct point costs one multiplication and one addition:
``8N + 6`` of each for a step. :func:`verify_shuffles` puts several steps in
one combination, where a deck that is one step's output and the next one's
input is multiplied once; on failure it names the first bad step.

Soundness: computational, under the discrete-logarithm assumption in the
random-oracle model; zero-knowledge: honest-verifier, made non-interactive by
Fiat-Shamir over the whole statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from protocol.deck import (
    MAX_CARDS,
    Ciphertext,
    ShuffleContext,
    ShuffleStep,
    ShuffleWitness,
    encode_deck,
    shuffle_step,
)
from protocol.domain import encode, hash32
from protocol.errors import InvalidEncoding, InvalidProof, LocalProtocolError
from protocol.group import (
    GROUP_ORDER,
    POINT_BYTES,
    SCALAR_BYTES,
    DegenerateResult,
    Point,
    Scalar,
    Workers,
    mult_sum,
    mult_sums,
)
from protocol.keys import u64
from protocol.rng import Rng

__all__ = [
    "BadShuffleProof",
    "ShuffleProof",
    "ShuffleStatement",
    "proof_size",
    "prove_shuffle",
    "shuffle_generators",
    "shuffle_with_proof",
    "verify_shuffle",
    "verify_shuffles",
]

G = Point.GENERATOR
_ZERO = Scalar.from_int(0)
_ONE = Scalar.from_int(1)


class BadShuffleProof(InvalidProof):
    """A shuffle proof that does not verify; the message names the failed check.

    ``seat`` and ``step`` name the step to blame (``None`` only if a batch of
    proofs failed as a whole but each proof alone verifies, which an honest
    verifier never sees).
    """

    def __init__(
        self, reason: str, *, seat: int | None = None, step: int | None = None,
        evidence: bytes = b"",
    ) -> None:
        super().__init__(reason, evidence=evidence)
        self.seat = seat
        self.step = step


def proof_size(cards: int) -> int:
    """Bytes of a proof for ``cards`` cards: ``3N + 5`` points and ``2N + 4`` scalars."""
    return (3 * cards + 5) * POINT_BYTES + (2 * cards + 4) * SCALAR_BYTES


@lru_cache(maxsize=8)
def shuffle_generators(cards: int) -> tuple[Point, ...]:
    """``h_0 .. h_{N-1}`` and the chain base ``h_N``, hashed to the group from public labels."""
    if not 1 <= cards <= MAX_CARDS:
        raise LocalProtocolError(f"no shuffle generators for {cards} cards")
    return tuple(
        Point.from_hash("shuffle-generators", u64(cards), u64(i)) for i in range(cards + 1)
    )


@dataclass(frozen=True, slots=True)
class ShuffleProof:
    """The proof for an ``N``-card shuffle.

    Wire (``proof_size(N)`` bytes, in this order): ``commitments`` (N points),
    ``chain`` (N points), ``t`` = t1, t2, t3, t4a, t4b (5 points), ``chain_t``
    (N points), ``s`` = s1, s2, s3, s4 (4 scalars), ``chain_s`` (N scalars),
    ``perm_s`` (N scalars).
    """

    commitments: tuple[Point, ...]
    chain: tuple[Point, ...]
    t: tuple[Point, Point, Point, Point, Point]
    chain_t: tuple[Point, ...]
    s: tuple[Scalar, Scalar, Scalar, Scalar]
    chain_s: tuple[Scalar, ...]
    perm_s: tuple[Scalar, ...]

    @property
    def cards(self) -> int:
        return len(self.commitments)

    def to_bytes(self) -> bytes:
        points = (*self.commitments, *self.chain, *self.t, *self.chain_t)
        scalars = (*self.s, *self.chain_s, *self.perm_s)
        return b"".join(p.data for p in points) + b"".join(x.data for x in scalars)

    @classmethod
    def from_bytes(
        cls, data: bytes | bytearray | memoryview, cards: int, *, workers: Workers | None = None
    ) -> ShuffleProof:
        """Parse and validate a proof for ``cards`` cards; anything malformed is remote.

        ``workers`` splits the point checks between threads; the proof, or the
        error, is the same without."""
        if not 1 <= cards <= MAX_CARDS:
            raise InvalidEncoding(f"no shuffle proof for {cards} cards")
        size = proof_size(cards)
        if isinstance(data, bytearray | memoryview):
            data = bytes(data)
        if type(data) is not bytes:
            raise InvalidEncoding(f"shuffle proof must be bytes, got {type(data).__name__}")
        if len(data) != size:
            raise InvalidEncoding(
                f"shuffle proof for {cards} cards must be {size} bytes, got {len(data)}",
                evidence=data[:256],
            )
        n = cards
        split = (3 * n + 5) * POINT_BYTES
        points = Point.many_from_bytes(data[:split], workers=workers)
        scalars = tuple(
            Scalar.from_bytes(data[k:k + SCALAR_BYTES])
            for k in range(split, size, SCALAR_BYTES)
        )
        t = points[2 * n:2 * n + 5]
        s = scalars[:4]
        return cls(
            commitments=points[:n],
            chain=points[n:2 * n],
            t=(t[0], t[1], t[2], t[3], t[4]),
            chain_t=points[2 * n + 5:],
            s=(s[0], s[1], s[2], s[3]),
            chain_s=scalars[4:4 + n],
            perm_s=scalars[4 + n:],
        )

    def __repr__(self) -> str:
        return f"ShuffleProof(<{self.cards} cards, {proof_size(self.cards)} bytes>)"


# -- Fiat-Shamir ---------------------------------------------------------------


def _statement(
    ctx: ShuffleContext, joint: Point, deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
) -> bytes:
    # Each deck is hashed once here; every challenge below includes this digest.
    return hash32(
        "shuffle-proof-statement", *ctx.parts(), G.data, joint.data, u64(len(deck_in)),
        encode_deck(deck_in), encode_deck(deck_out),
    )


def _challenges_u(digest: bytes, commitments: Sequence[Point]) -> list[Scalar]:
    blob = b"".join(p.data for p in commitments)
    return [
        Scalar.from_hash("shuffle-proof-u", digest, blob, u64(j)) for j in range(len(commitments))
    ]


def _challenge_c(
    digest: bytes, commitments: Sequence[Point], chain: Sequence[Point],
    t: Sequence[Point], chain_t: Sequence[Point],
) -> Scalar:
    return Scalar.from_hash(
        "shuffle-proof-c", digest,
        b"".join(p.data for p in commitments), b"".join(p.data for p in chain),
        b"".join(p.data for p in t), b"".join(p.data for p in chain_t),
    )


# -- prover --------------------------------------------------------------------


def _merged(terms: Sequence[tuple[Point, Scalar]]) -> list[tuple[Point, Scalar]]:
    """The terms of ``sum k_i P_i`` with equal bases merged (the prover's have distinct bases)."""
    merged: dict[bytes, tuple[Point, Scalar]] = {}
    for p, k in terms:
        prev = merged.get(p.data)
        merged[p.data] = (p, k if prev is None else prev[1] + k)
    if all(k.is_zero for _, k in merged.values()):
        raise LocalProtocolError("sum of no points is the identity")
    return list(merged.values())


def prove_shuffle(
    ctx: ShuffleContext,
    joint: Point,
    deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
    witness: ShuffleWitness,
    rng: Rng,
    *,
    workers: Workers | None = None,
) -> ShuffleProof:
    """Prove that ``deck_out`` is ``deck_in`` permuted and re-masked by ``witness`` under ``joint``.

    The witness must be the one that produced ``deck_out`` (``apply_witness``);
    with any other the proof is made but does not verify. ``workers`` only
    makes it faster: the proof's bytes are the same with or without.
    """
    n = len(deck_in)
    if len(deck_out) != n or len(witness.permutation) != n or not 1 <= n <= MAX_CARDS:
        raise LocalProtocolError(
            f"decks of {n} and {len(deck_out)} cards, witness for {len(witness.permutation)}"
        )
    digest = _statement(ctx, joint, deck_in, deck_out)
    # Hedged secrets: a weak rng alone cannot reveal the permutation or the masks.
    seed = hash32("shuffle-proof-nonce", witness.to_bytes(), rng.randbytes(32), digest)
    return _prove(joint, deck_out, digest, witness.permutation, witness.scalars, seed, workers)


def _prove(
    joint: Point,
    deck_out: Sequence[Ciphertext],
    digest: bytes,
    mapping: Sequence[int],
    r: Sequence[Scalar],
    seed: bytes,
    workers: Workers | None = None,
) -> ShuffleProof:
    # ``mapping`` is a permutation for every honest caller; the tests pass other maps
    # to show that a prover following these steps for a non-permutation is caught.
    n = len(mapping)
    gens = shuffle_generators(n)

    def secret(kind: int, i: int) -> Scalar:
        return Scalar.from_hash("shuffle-proof-nonce", seed, u64(kind), u64(i))

    # Permutation commitment: column j commits to the h_i with mapping[i] == j.
    rho = [secret(0, j) for j in range(n)]
    preimages: list[list[int]] = [[] for _ in range(n)]
    for i, j in enumerate(mapping):
        preimages[j].append(i)
    commitments = tuple(mult_sums(
        [[(G, rho[j]), *((gens[i], _ONE) for i in preimages[j])] for j in range(n)], workers
    ))

    u = _challenges_u(digest, commitments)
    u_perm = [u[j] for j in mapping]

    # Commitment chain to the product of the permuted challenges, c^_i = rhat_i G + u'_i c^_{i-1}
    # from c^_{-1} = h_N, written out as c^_i = a_i G + b_i h_N (a_i = u'_i a_{i-1} + rhat_i,
    # b_i = u'_i b_{i-1}): the same points, each its own two-term sum, so none waits for
    # the one before.
    rhat = [secret(1, i) for i in range(n)]
    a_coef: list[Scalar] = []
    b_coef: list[Scalar] = []
    a_prev, b_prev = _ZERO, _ONE
    for i in range(n):
        a_prev = a_prev * u_perm[i] + rhat[i]
        b_prev = b_prev * u_perm[i]
        a_coef.append(a_prev)
        b_coef.append(b_prev)

    r_bar = _ZERO
    r_tilde = _ZERO
    for j in range(n):
        r_bar = r_bar + rho[j]
        r_tilde = r_tilde + rho[j] * u[j]
    r_prime = _ZERO
    for i in range(n):
        r_prime = r_prime + r[i] * u_perm[i]
    r_hat = _ZERO
    v = _ONE
    for i in range(n - 1, -1, -1):
        r_hat = r_hat + rhat[i] * v
        v = v * u_perm[i]

    w = [secret(2, k) for k in range(4)]
    w_hat = [secret(3, i) for i in range(n)]
    w_prime = [secret(4, i) for i in range(n)]
    neg_w4 = -w[3]
    h_n = gens[n]
    # t^_i = w^_i G + w'_i c^_{i-1} = (w^_i + w'_i a_{i-1}) G + (w'_i b_{i-1}) h_N.
    chain_t_sums = [
        [(G, w_hat[i] if i == 0 else w_hat[i] + w_prime[i] * a_coef[i - 1]),
         (h_n, w_prime[i] if i == 0 else w_prime[i] * b_coef[i - 1])]
        for i in range(n)
    ]
    # Every product left is independent: one batch, the large sums spread between the
    # small ones so that contiguous chunks of it cost about the same.
    out = mult_sums([
        [(G, w[2]), *zip(gens[:n], w_prime, strict=True)],
        _merged([(G, neg_w4), *((e.c1, k) for e, k in zip(deck_out, w_prime, strict=True))]),
        *([(G, a), (h_n, b)] for a, b in zip(a_coef, b_coef, strict=True)),
        *chain_t_sums,
        _merged([(joint, neg_w4), *((e.c2, k) for e, k in zip(deck_out, w_prime, strict=True))]),
        [(G, w[0])],
        [(G, w[1])],
    ], workers)
    t3, t4a = out[0], out[1]
    chain = tuple(out[2:n + 2])
    chain_t = tuple(out[n + 2:2 * n + 2])
    t4b, t1, t2 = out[2 * n + 2:]
    t = (t1, t2, t3, t4a, t4b)

    c = _challenge_c(digest, commitments, chain, t, chain_t)
    s = (w[0] + c * r_bar, w[1] + c * r_hat, w[2] + c * r_tilde, w[3] + c * r_prime)
    chain_s = tuple(w_hat[i] + c * rhat[i] for i in range(n))
    perm_s = tuple(w_prime[i] + c * u_perm[i] for i in range(n))
    return ShuffleProof(commitments, chain, t, chain_t, s, chain_s, perm_s)


# -- verifier ------------------------------------------------------------------


class _Combination:
    """A linear combination of points, one coefficient (an int mod l) per distinct encoding.

    Coefficients are Python ints: a few hundred multiply-adds per check cost less
    as ints than as libsodium calls, and only the final ones become scalars.
    """

    __slots__ = ("terms",)

    def __init__(self) -> None:
        self.terms: dict[bytes, int] = {}

    def add(self, p: Point, k: int) -> None:
        terms = self.terms
        terms[p.data] = terms.get(p.data, 0) + k

    def value(self, workers: Workers | None = None) -> Point:
        g = self.terms.pop(G.data, 0) % GROUP_ORDER
        # Products come first and the generator's fast path last; zero terms vanish.
        terms = []
        for b, coef in self.terms.items():
            k = coef % GROUP_ORDER
            if k:
                terms.append((Point(b), Scalar(k.to_bytes(SCALAR_BYTES, "little"))))
        if g:
            terms.append((G, Scalar(g.to_bytes(SCALAR_BYTES, "little"))))
        if not terms:
            raise DegenerateResult("every coefficient of the combination is zero")
        return mult_sum(terms, workers)


def _check_shape(
    ctx: ShuffleContext, deck_in: Sequence[Ciphertext], deck_out: Sequence[Ciphertext],
    proof: ShuffleProof,
) -> int:
    n = len(deck_in)
    if len(deck_out) != n or proof.cards != n:
        raise BadShuffleProof(
            f"shuffle of {n} cards into {len(deck_out)} with a proof for {proof.cards}",
            seat=ctx.seat, step=ctx.step,
        )
    if not 1 <= n <= MAX_CARDS or not (
        len(proof.chain) == len(proof.chain_t) == len(proof.chain_s) == len(proof.perm_s) == n
    ):
        raise BadShuffleProof(f"malformed proof for {n} cards", seat=ctx.seat, step=ctx.step)
    return n


def _add_equations(
    acc: _Combination,
    ctx: ShuffleContext,
    joint: Point,
    deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
    proof: ShuffleProof,
    gamma: int,
) -> None:
    """Add ``gamma`` times the weighted sum of the proof's equations (``lhs - rhs``) minus t1.

    Each equation holds for an honest proof, so the sum of what is added here
    equals ``gamma * t1``: the caller compares. Checks (challenge ``c``, challenges ``u``):
    ``s1 G = t1 + c (sum c_j - sum h_i)``; ``s2 G = t2 + c (c^_{N-1} - (prod u) h_N)``;
    ``s3 G + sum s'_i h_i = t3 + c sum u_j c_j``;
    ``sum s'_i e'_i - s4 (G, H) = (t4a, t4b) + c sum u_j e_j``;
    and for each i ``s^_i G + s'_i c^_{i-1} = t^_i + c c^_i`` (``c^_{-1} = h_N``).
    """
    n = _check_shape(ctx, deck_in, deck_out, proof)
    gens = shuffle_generators(n)
    digest = _statement(ctx, joint, deck_in, deck_out)
    u_scalars = _challenges_u(digest, proof.commitments)
    c = _challenge_c(digest, proof.commitments, proof.chain, proof.t, proof.chain_t)
    # The weights are the verifier's: derived from everything the prover sent, so
    # they are fixed only after the proof is, as random weights would be.
    weights_seed = hash32("shuffle-proof-batch", digest, proof.to_bytes())
    q = GROUP_ORDER
    weights = [
        gamma * _int(Scalar.from_hash("shuffle-proof-batch", weights_seed, u64(k))) % q
        for k in range(n + 4)
    ]
    b2, b3, b4a, b4b = weights[:4]
    alpha = weights[4:]
    s1, s2, s3, s4 = (_int(x) for x in proof.s)
    chain_s = [_int(x) for x in proof.chain_s]
    perm_s = [_int(x) for x in proof.perm_s]
    u = [_int(x) for x in u_scalars]
    ci = _int(c)
    _, t2, t3, t4a, t4b = proof.t
    gc = gamma * ci % q

    prod_u = 1
    for x in u:
        prod_u = prod_u * x % q

    g_coef = gamma * s1 + b2 * s2 + b3 * s3 - b4a * s4
    for i in range(n):
        g_coef += alpha[i] * chain_s[i]
    acc.add(G, g_coef)
    acc.add(joint, -b4b * s4)
    b3c, b4ac, b4bc = b3 * ci % q, b4a * ci % q, b4b * ci % q
    for i in range(n):
        acc.add(gens[i], gc + b3 * perm_s[i])
    acc.add(gens[n], b2 * ci % q * prod_u + alpha[0] * perm_s[0])
    for j in range(n):
        uj = u[j]
        acc.add(proof.commitments[j], -gc - b3c * uj)
        acc.add(deck_in[j].c1, -b4ac * uj)
        acc.add(deck_in[j].c2, -b4bc * uj)
    for i in range(n):
        si = perm_s[i]
        acc.add(deck_out[i].c1, b4a * si)
        acc.add(deck_out[i].c2, b4b * si)
        nxt = -b2 * ci if i == n - 1 else alpha[i + 1] * perm_s[i + 1]
        acc.add(proof.chain[i], nxt - alpha[i] * ci)
        acc.add(proof.chain_t[i], -alpha[i])
    acc.add(t2, -b2)
    acc.add(t3, -b3)
    acc.add(t4a, -b4a)
    acc.add(t4b, -b4b)


def _int(x: Scalar) -> int:
    return int.from_bytes(x.data, "little")


def verify_shuffle(
    ctx: ShuffleContext,
    joint: Point,
    deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext],
    proof: ShuffleProof,
    *,
    workers: Workers | None = None,
) -> None:
    """Raise :class:`BadShuffleProof` unless ``proof`` shows ``deck_out`` shuffles ``deck_in``.

    All ``N + 5`` equations are checked at once as a random linear combination
    (see :func:`_add_equations`); a failure names the seat and the step.
    ``workers`` splits the combination's multiplications between threads; the
    verdict and any error are the same without.
    """
    acc = _Combination()
    _add_equations(acc, ctx, joint, deck_in, deck_out, proof, 1)
    what = f"shuffle proof of seat {ctx.seat}, step {ctx.step}"
    evidence = proof.to_bytes()[:256]
    try:
        _conclude(
            acc, proof.t[0], what, seat=ctx.seat, step=ctx.step, evidence=evidence,
            workers=workers,
        )
    except BadShuffleProof as exc:
        # Only a bad proof gets here: checking each equation alone names the one that fails.
        failed = _failed_check(ctx, joint, deck_in, deck_out, proof)
        raise BadShuffleProof(
            f"{what} does not verify: {failed}", seat=ctx.seat, step=ctx.step, evidence=evidence
        ) from exc


def _holds(terms: Sequence[tuple[Point, int]]) -> bool:
    """Whether ``sum k P`` is the identity (the equation ``lhs - rhs = 0`` holds)."""
    acc = _Combination()
    for p, k in terms:
        acc.add(p, k)
    try:
        acc.value()
    except DegenerateResult:
        return True
    return False


def _failed_check(
    ctx: ShuffleContext, joint: Point, deck_in: Sequence[Ciphertext],
    deck_out: Sequence[Ciphertext], proof: ShuffleProof,
) -> str:
    """The first of the equations E1, E2, E3, E4a, E4b, chain link i that fails, by name."""
    n = proof.cards
    gens = shuffle_generators(n)
    digest = _statement(ctx, joint, deck_in, deck_out)
    u = [_int(x) for x in _challenges_u(digest, proof.commitments)]
    c = _int(_challenge_c(digest, proof.commitments, proof.chain, proof.t, proof.chain_t))
    s1, s2, s3, s4 = (_int(x) for x in proof.s)
    perm_s = [_int(x) for x in proof.perm_s]
    t1, t2, t3, t4a, t4b = proof.t
    prod_u = 1
    for x in u:
        prod_u = prod_u * x % GROUP_ORDER
    checks: list[tuple[str, list[tuple[Point, int]]]] = [
        ("E1 (the commitments do not hold each generator once)",
         [(G, s1), (t1, -1), *((cj, -c) for cj in proof.commitments),
          *((h, c) for h in gens[:n])]),
        ("E2 (the chain does not end at the product of the challenges: not a permutation)",
         [(G, s2), (t2, -1), (proof.chain[-1], -c), (gens[n], c * prod_u)]),
        ("E3 (the commitments do not open to the permuted challenges)",
         [(G, s3), (t3, -1), *zip(gens[:n], perm_s, strict=True),
          *((cj, -c * uj) for cj, uj in zip(proof.commitments, u, strict=True))]),
        ("E4a (the C1s are not a permutation and re-masking of the input)",
         [(G, -s4), (t4a, -1), *((e.c1, k) for e, k in zip(deck_out, perm_s, strict=True)),
          *((e.c1, -c * uj) for e, uj in zip(deck_in, u, strict=True))]),
        ("E4b (the C2s are not a permutation and re-masking under the joint key)",
         [(joint, -s4), (t4b, -1), *((e.c2, k) for e, k in zip(deck_out, perm_s, strict=True)),
          *((e.c2, -c * uj) for e, uj in zip(deck_in, u, strict=True))]),
    ]
    for i in range(n):
        prev = gens[n] if i == 0 else proof.chain[i - 1]
        checks.append((f"chain link {i}", [
            (G, _int(proof.chain_s[i])), (prev, perm_s[i]), (proof.chain_t[i], -1),
            (proof.chain[i], -c),
        ]))
    for name, terms in checks:
        if not _holds(terms):
            return name
    return "the batched equations (each holds alone)"


def _conclude(
    acc: _Combination, expected: Point, what: str, *, seat: int | None, step: int | None,
    evidence: bytes, workers: Workers | None = None,
) -> None:
    try:
        total = acc.value(workers)
    except DegenerateResult as exc:
        raise BadShuffleProof(
            f"{what}: degenerate combination", seat=seat, step=step, evidence=evidence
        ) from exc
    if total != expected:
        raise BadShuffleProof(
            f"{what} does not verify (the batched permutation, chain and re-masking "
            f"equations fail)", seat=seat, step=step, evidence=evidence,
        )


@dataclass(frozen=True, slots=True)
class ShuffleStatement:
    """One step to check in :func:`verify_shuffles`: its context, decks and proof."""

    context: ShuffleContext
    deck_in: tuple[Ciphertext, ...]
    deck_out: tuple[Ciphertext, ...]
    proof: ShuffleProof


def verify_shuffles(
    joint: Point, statements: Sequence[ShuffleStatement], *, workers: Workers | None = None
) -> None:
    """Check several proofs at once; on failure find and name the first bad step.

    Each proof's equations get one more random weight and all go into one
    combination. Points shared between proofs (step k's output deck is step
    k+1's input) then cost one multiplication instead of two, which saves about
    a quarter of the work for a chain of steps. If the combination fails, each
    proof is checked alone and the first that fails is raised, so blame is exact.
    ``workers`` splits the multiplications between threads; the verdict and any
    error are the same without.
    """
    if not statements:
        return
    if len(statements) == 1:
        st = statements[0]
        verify_shuffle(st.context, joint, st.deck_in, st.deck_out, st.proof, workers=workers)
        return
    for st in statements:
        _check_shape(st.context, st.deck_in, st.deck_out, st.proof)
    seed = hash32(
        "shuffle-proof-batch", joint.data,
        *(encode(*st.context.parts(), st.proof.to_bytes()) for st in statements),
    )
    acc = _Combination()
    first = statements[0]
    for k, st in enumerate(statements):
        gamma = 1 if k == 0 else _int(Scalar.from_hash("shuffle-proof-batch", seed, u64(k)))
        _add_equations(acc, st.context, joint, st.deck_in, st.deck_out, st.proof, gamma)
        if k:
            acc.add(st.proof.t[0], -gamma)
    try:
        _conclude(acc, first.proof.t[0], f"{len(statements)} shuffle proofs",
                  seat=None, step=None, evidence=b"", workers=workers)
    except BadShuffleProof:
        for st in statements:
            verify_shuffle(
                st.context, joint, st.deck_in, st.deck_out, st.proof, workers=workers
            )
        raise


def shuffle_with_proof(
    deck_in: Sequence[Ciphertext], joint: Point, ctx: ShuffleContext, rng: Rng,
    *, workers: Workers | None = None,
) -> tuple[ShuffleStep, ShuffleWitness, ShuffleProof]:
    """A shuffle step (as :func:`protocol.deck.shuffle_step`) and its proof.

    ``workers`` splits the multiplications between threads; the step, witness
    and proof are the same bytes without.
    """
    step, witness = shuffle_step(deck_in, joint, ctx, rng, workers=workers)
    proof = prove_shuffle(ctx, joint, deck_in, step.deck, witness, rng, workers=workers)
    return step, witness, proof
