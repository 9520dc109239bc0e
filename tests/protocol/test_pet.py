"""protocol.pet: proved answers. Completeness, a false claim caught, forgeries, replay,
fuzzing, privacy against one key holder, op counts and the vectors."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import domain, pet
from protocol.deck import Ciphertext, Deck, mask, remask
from protocol.errors import InvalidEncoding, LocalProtocolError, RemoteProtocolError
from protocol.group import GROUP_ORDER, DegenerateResult, Point, Scalar, Workers, counters
from protocol.keys import HandContext, JointKey, KeyShare, joint_key
from protocol.pet import BadPet, PetClaim, PetContext, PetShare, pet_matches
from protocol.reveal import DleqProof
from protocol.rng import DeterministicRng
from protocol.vectors import VECTOR_DIR, dumps, generate, load

HAND = HandContext(b"table-pet", 4)
DECK = Deck(tuple(f"card-{i:02d}" for i in range(20)))
#: Twelve "answering" encodings (cards 8..19) and two "kille" encodings (cards 0, 1).
ANSWERING = tuple(DECK.encodings[8:20])
KILLE = tuple(DECK.encodings[0:2])


@dataclass
class Table:
    keys: list[KeyShare]
    joint: JointKey
    rng: DeterministicRng

    def ciphertext(self, card: int, remasks: int = 2) -> Ciphertext:
        ct = mask(DECK.encodings[card], Scalar.random(self.rng), self.joint.public)
        for _ in range(remasks):
            ct = remask(ct, Scalar.random(self.rng), self.joint.public)
        return ct

    def claim(
        self, ct: Ciphertext, excluded: Sequence[Point], ctx: PetContext | None = None
    ) -> PetClaim:
        ctx = ctx or PetContext(HAND, 3, 0, b"answer", 11)
        return PetClaim.make(ctx, ct, excluded, self.keys[ctx.prover], self.rng)

    def responses(self, claim: PetClaim) -> list[PetShare]:
        return [
            PetShare.make(claim, k, self.rng) for k in self.keys if k.seat != claim.context.prover
        ]

    def outcome(
        self, claim: PetClaim, ct: Ciphertext, excluded: Sequence[Point]
    ) -> tuple[int, ...]:
        """What every verifier does with the bytes: check the claim and each response, test."""
        claim = PetClaim.from_bytes(claim.context, claim.to_bytes(), len(excluded))
        claim.verify(ct, excluded, self.joint.share_of(claim.context.prover))
        shares = [PetShare.from_bytes(claim, s.seat, s.to_bytes()) for s in self.responses(claim)]
        for s in shares:
            s.verify(claim, self.joint.share_of(s.seat))
        return pet_matches(claim, shares, holders=self.joint.seats)


def make_table(holders: int, seed: bytes = b"pet") -> Table:
    rng = DeterministicRng(seed)
    keys = [KeyShare.generate(i, rng) for i in range(holders)]
    return Table(keys, joint_key(HAND, [k.announce(HAND, rng) for k in keys]), rng)


@pytest.fixture(scope="module")
def table() -> Table:
    return make_table(3)


def _own(claim: PetClaim) -> Point:
    """``D_p`` of a keyed claim."""
    assert claim.own is not None
    return claim.own


def _int(s: Scalar) -> int:
    return int.from_bytes(s.data, "little")


def _inverse(s: Scalar) -> Scalar:
    return Scalar.from_int(pow(_int(s), -1, GROUP_ORDER))


def _blind(key: KeyShare, ctx: PetContext, ct: Ciphertext, excluded: Sequence[Point],
           random: bytes) -> Scalar:
    """The prover's z, recomputed from the bytes its RNG gave (tests only)."""
    return Scalar.from_hash(
        "pet-blind", key.secret.data, random, *ctx.parts(), ct.c1.data, ct.c2.data,
        b"".join(b.data for b in excluded),
    )


# -- completeness and soundness -------------------------------------------------


@given(
    holders=st.integers(2, 9),
    seed=st.binary(min_size=1, max_size=8),
    card=st.integers(2, 7),
    prover=st.integers(0, 8),
    kille=st.booleans(),
)
def test_honest_claims_pass(holders: int, seed: bytes, card: int, prover: int,
                            kille: bool) -> None:
    t = make_table(holders, seed)
    ct = t.ciphertext(card, remasks=1 + seed[0] % 3)
    excluded = KILLE if kille else ANSWERING
    ctx = PetContext(HAND, 6, prover % holders, b"disclose" if kille else b"answer", len(seed))
    claim = t.claim(ct, excluded, ctx)
    assert t.outcome(claim, ct, excluded) == ()


@given(
    holders=st.integers(2, 9),
    seed=st.binary(min_size=1, max_size=8),
    k=st.integers(0, 11),
    prover=st.integers(0, 8),
)
def test_a_claim_for_an_excluded_card_is_caught(
    holders: int, seed: bytes, k: int, prover: int
) -> None:
    t = make_table(holders, seed)
    ct = t.ciphertext(8 + k)
    ctx = PetContext(HAND, 2, prover % holders, b"answer", 1)
    claim = t.claim(ct, ANSWERING, ctx)
    # The proof is valid (a lie is made like the truth); the test names the card.
    assert t.outcome(claim, ct, ANSWERING) == (k,)


def test_kille_given_is_caught(table: Table) -> None:
    ct = table.ciphertext(1)
    claim = table.claim(ct, KILLE, PetContext(HAND, 0, 2, b"disclose", 40))
    assert table.outcome(claim, ct, KILLE) == (1,)


def test_round_trip_and_sizes(table: Table) -> None:
    ct = table.ciphertext(3)
    for excluded in (ANSWERING, KILLE):
        claim = table.claim(ct, excluded)
        raw = claim.to_bytes()
        assert len(raw) == PetClaim.size(len(excluded)) == 32 * len(excluded) + 160
        again = PetClaim.from_bytes(claim.context, bytearray(raw), len(excluded))
        assert again == claim
        assert again.digest() == claim.digest()
        namespace = {"PetClaim": PetClaim, "PetContext": PetContext, "HandContext": HandContext,
                     "Point": Point, "Scalar": Scalar}
        assert eval(repr(claim), namespace) == claim
        share = table.responses(claim)[0]
        assert len(share.to_bytes()) == PetShare.SIZE
        assert PetShare.from_bytes(claim, share.seat, memoryview(share.to_bytes())) == share
        namespace |= {"PetShare": PetShare, "DleqProof": DleqProof}
        assert eval(repr(share), namespace) == share
    assert PetClaim.size(12) == 544
    assert PetClaim.size(2) == 224


# -- a prover trying its best -----------------------------------------------------


def _forged_claim(
    t: Table, ctx: PetContext, ct: Ciphertext, excluded: Sequence[Point], *,
    z_a: Scalar, z_e: Sequence[Scalar], x_own: Scalar, x_proof: Scalar,
) -> PetClaim:
    """A claim built like the honest one but with free choices: ``A = z_a C1``,
    ``E_k = z_e[k] (C2 - B_k)``, ``D_p = x_own A``; the proof uses ``z_a`` and ``x_proof``
    and the real challenge function, i.e. the best a cheater without a hash break can do."""
    key = t.keys[ctx.prover]
    a = ct.c1 * z_a
    diffs = [ct.c2 - b for b in excluded]
    e = tuple(d * z for d, z in zip(diffs, z_e, strict=True))
    own = a * x_own
    w, v = Scalar.random(t.rng), Scalar.random(t.rng)
    commitments = [ct.c1 * w, *(d * w for d in diffs)]
    u1, u2 = Point.base_mult(v), a * v
    c = pet._claim_challenge(ctx, ct, excluded, key.public, a, e, own, commitments, u1, u2)
    return PetClaim(ctx, a, e, own, c, w + c * z_a, v + c * x_proof)


def test_forger_builds_an_honest_claim_when_choices_are_honest(table: Table) -> None:
    # The forging helper is faithful: with honest choices its claim verifies and is caught.
    ct = table.ciphertext(9)
    ctx = PetContext(HAND, 3, 0, b"answer", 11)
    z = Scalar.random(table.rng)
    x = table.keys[0].secret
    forged = _forged_claim(table, ctx, ct, ANSWERING, z_a=z, z_e=[z] * 12, x_own=x, x_proof=x)
    assert table.outcome(forged, ct, ANSWERING) == (1,)


def test_different_blind_for_the_matching_value_is_rejected(table: Table) -> None:
    ct = table.ciphertext(9)  # B_1
    ctx = PetContext(HAND, 3, 0, b"answer", 11)
    z, other = Scalar.random(table.rng), Scalar.random(table.rng)
    x = table.keys[0].secret
    z_e = [z] * 12
    z_e[1] = other  # E_1 != S now, so the lie would pass the test if the proof did
    forged = _forged_claim(table, ctx, ct, ANSWERING, z_a=z, z_e=z_e, x_own=x, x_proof=x)
    shares = table.responses(forged)
    assert pet_matches(forged, shares, holders=3) == ()  # what an unchecked claim would give
    with pytest.raises(BadPet) as info:
        forged.verify(ct, ANSWERING, table.joint.share_of(0))
    assert info.value.seat == 0
    # Proving with the E_k's blind instead fails on A.
    forged2 = _forged_claim(table, ctx, ct, ANSWERING, z_a=z, z_e=[other] * 12, x_own=x,
                            x_proof=x)
    with pytest.raises(BadPet):
        forged2.verify(ct, ANSWERING, table.joint.share_of(0))


def test_own_share_not_x_p_a_is_rejected(table: Table) -> None:
    ct = table.ciphertext(9)
    ctx = PetContext(HAND, 3, 0, b"answer", 11)
    z = Scalar.random(table.rng)
    x = table.keys[0].secret
    wrong = Scalar.random(table.rng)
    for x_own, x_proof in ((wrong, wrong), (wrong, x), (x + Scalar.from_int(1), x)):
        forged = _forged_claim(table, ctx, ct, ANSWERING, z_a=z, z_e=[z] * 12,
                               x_own=x_own, x_proof=x_proof)
        assert pet_matches(forged, table.responses(forged), holders=3) == ()
        with pytest.raises(BadPet):
            forged.verify(ct, ANSWERING, table.joint.share_of(0))
    honest = table.claim(ct, ANSWERING, ctx)
    shifted = replace(honest, own=_own(honest) + Point.GENERATOR)
    with pytest.raises(BadPet):
        shifted.verify(ct, ANSWERING, table.joint.share_of(0))


def test_reordered_or_shortened_set_is_rejected(table: Table) -> None:
    ct = table.ciphertext(9)
    ctx = PetContext(HAND, 3, 0, b"answer", 11)
    swapped = (ANSWERING[1], ANSWERING[0], *ANSWERING[2:])
    claim = table.claim(ct, swapped, ctx)
    with pytest.raises(BadPet):
        claim.verify(ct, ANSWERING, table.joint.share_of(0))
    short = table.claim(ct, ANSWERING[2:], ctx)
    with pytest.raises(InvalidEncoding):
        PetClaim.from_bytes(ctx, short.to_bytes(), len(ANSWERING))
    with pytest.raises(LocalProtocolError, match="excluded"):
        short.verify(ct, ANSWERING, table.joint.share_of(0))


def test_wrong_responses_are_rejected(table: Table) -> None:
    ct = table.ciphertext(9)
    claim = table.claim(ct, ANSWERING)
    share = table.responses(claim)[0]
    seat = share.seat
    share.verify(claim, table.joint.share_of(seat))
    impostor = KeyShare.generate(seat, table.rng)
    bad = [
        replace(share, value=share.value + Point.GENERATOR),
        PetShare.make(claim, impostor, table.rng),  # a key other than the announced one
        replace(share, proof=DleqProof(Scalar.from_int(0), Scalar.from_int(1))),
    ]
    for b in bad:
        with pytest.raises(BadPet) as info:
            b.verify(claim, table.joint.share_of(seat))
        assert info.value.seat == seat
    # A wrong share would have hidden the lie: the test needs every share verified.
    others = [s for s in table.responses(claim) if s.seat != seat]
    assert pet_matches(claim, [bad[0], *others], holders=3) == ()
    assert pet_matches(claim, [share, *others], holders=3) == (1,)
    with pytest.raises(BadPet):
        share.verify(claim, table.joint.share_of(0))  # checked against another seat's key


def test_claim_on_another_slots_ciphertext_is_rejected(table: Table) -> None:
    """Why the claim is bound to the slot: answered unchecked, it is a decryption oracle."""
    mine, theirs = table.ciphertext(3), table.ciphertext(15)
    ctx = PetContext(HAND, 3, 0, b"answer", 11)
    rng = DeterministicRng(b"oracle")
    twin = DeterministicRng(b"oracle")
    claim = PetClaim.make(ctx, theirs, ANSWERING, table.keys[0], rng)
    z = _blind(table.keys[0], ctx, theirs, ANSWERING, twin.randbytes(32))
    assert claim.a == theirs.c1 * z
    with pytest.raises(BadPet) as info:
        claim.verify(mine, ANSWERING, table.joint.share_of(0))
    assert info.value.seat == 0
    # Had seats 1 and 2 answered it, the prover would open the other slot's card.
    shares = table.responses(claim)
    total = Point.sum([_own(claim), *(s.value for s in shares)])
    assert DECK.index_of(theirs.c2 - total * _inverse(z)) == 15


@pytest.mark.parametrize(
    "change",
    [
        {"hand": HandContext(b"table-pet", 5)},
        {"hand": HandContext(b"table-other", 4)},
        {"slot": 4},
        {"prover": 1},
        {"purpose": b"disclose"},
        {"sequence": 12},
    ],
)
def test_replay_under_another_context_is_rejected(table: Table, change: dict[str, Any]) -> None:
    ct = table.ciphertext(3)
    claim = table.claim(ct, ANSWERING)
    claim.verify(ct, ANSWERING, table.joint.share_of(0))
    moved_ctx = replace(claim.context, **change)
    moved = PetClaim.from_bytes(moved_ctx, claim.to_bytes(), 12)
    assert moved.digest() != claim.digest()
    with pytest.raises(BadPet):
        moved.verify(ct, ANSWERING, table.joint.share_of(moved_ctx.prover))
    with pytest.raises(BadPet):
        moved.verify(ct, ANSWERING, table.joint.share_of(0))
    # A response to the original, replayed to the moved claim, fails too.
    share = table.responses(claim)[-1]
    replayed = PetShare.from_bytes(moved, share.seat, share.to_bytes())
    with pytest.raises(BadPet):
        replayed.verify(moved, table.joint.share_of(share.seat))


def test_response_replayed_to_another_claim_or_seat_is_rejected(table: Table) -> None:
    ct = table.ciphertext(3)
    first = table.claim(ct, ANSWERING)
    second = table.claim(ct, ANSWERING)  # same context, fresh blind: another claim
    assert first.a != second.a
    share = table.responses(first)[0]
    with pytest.raises(BadPet):
        PetShare.from_bytes(second, share.seat, share.to_bytes()).verify(
            second, table.joint.share_of(share.seat)
        )
    with pytest.raises(BadPet):
        PetShare.from_bytes(first, 2, share.to_bytes()).verify(first, table.joint.share_of(2))
    with pytest.raises(LocalProtocolError, match="another claim"):
        share.verify(second, table.joint.share_of(share.seat))


def test_bare_card_encoding_as_ciphertext(table: Table) -> None:
    ct = Ciphertext(table.ciphertext(3).c1, ANSWERING[4])
    ctx = PetContext(HAND, 3, 0, b"answer", 11)
    with pytest.raises(DegenerateResult):
        table.claim(ct, ANSWERING, ctx)
    # Whatever bytes a prover sends for it, the claim is refused.
    other = table.claim(table.ciphertext(3), ANSWERING, ctx)
    with pytest.raises(BadPet, match="cannot hold"):
        other.verify(ct, ANSWERING, table.joint.share_of(0))


# -- fuzzing ----------------------------------------------------------------------


def _claim_rejected(ctx: PetContext, data: object, ct: Ciphertext, public: Point) -> None:
    with pytest.raises(RemoteProtocolError):
        PetClaim.from_bytes(ctx, data, 12).verify(ct, ANSWERING, public)  # type: ignore[arg-type]


def test_every_byte_of_a_claim_matters(table: Table) -> None:
    ct = table.ciphertext(3)
    claim = table.claim(ct, ANSWERING)
    raw = claim.to_bytes()
    public = table.joint.share_of(0)
    for i in range(len(raw)):
        tampered = bytearray(raw)
        tampered[i] ^= 1 << (i % 8)
        _claim_rejected(claim.context, bytes(tampered), ct, public)
    for data in (raw[:-1], raw + b"\x00", b"", "text", None, 7):
        _claim_rejected(claim.context, data, ct, public)


def test_every_bit_of_a_response_matters(table: Table) -> None:
    claim = table.claim(table.ciphertext(3), ANSWERING)
    share = table.responses(claim)[1]
    raw = share.to_bytes()
    public = table.joint.share_of(share.seat)
    for bit in range(len(raw) * 8):
        tampered = bytearray(raw)
        tampered[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(RemoteProtocolError):
            PetShare.from_bytes(claim, share.seat, bytes(tampered)).verify(claim, public)
    for data in (raw[:-1], raw + b"\x00", b"", "text", None):
        with pytest.raises(RemoteProtocolError):
            PetShare.from_bytes(claim, share.seat, data).verify(  # type: ignore[arg-type]
                claim, public
            )


_FUZZ_TABLE = make_table(3, b"fuzz")
_FUZZ_CT = _FUZZ_TABLE.ciphertext(3)
_FUZZ_CLAIM = _FUZZ_TABLE.claim(_FUZZ_CT, ANSWERING)
_FUZZ_SHARE = _FUZZ_TABLE.responses(_FUZZ_CLAIM)[0]


@given(data=st.binary(max_size=700), splice=st.integers(0, 600), count=st.integers(1, 16))
def test_random_claim_bytes_only_raise_remote_errors(data: bytes, splice: int,
                                                    count: int) -> None:
    raw = _FUZZ_CLAIM.to_bytes()
    candidates = [data, raw[:splice] + data[:8] + raw[splice + len(data[:8]):]]
    for candidate in candidates:
        try:
            claim = PetClaim.from_bytes(_FUZZ_CLAIM.context, candidate, count)
            claim.verify(_FUZZ_CT, ANSWERING[:count] if count <= 12 else ANSWERING,
                         _FUZZ_TABLE.joint.share_of(0))
        except RemoteProtocolError:
            continue
        except LocalProtocolError:
            assert count != 12  # only a count that disagrees with the set is a local mistake
            continue
        assert candidate == raw
        assert count == 12


@given(data=st.binary(max_size=120))
def test_random_response_bytes_only_raise_remote_errors(data: bytes) -> None:
    try:
        PetShare.from_bytes(_FUZZ_CLAIM, 1, data).verify(
            _FUZZ_CLAIM, _FUZZ_TABLE.joint.share_of(1)
        )
    except RemoteProtocolError:
        return
    assert data == _FUZZ_SHARE.to_bytes()


# -- privacy ----------------------------------------------------------------------


def test_public_data_and_one_key_cannot_test_a_guess() -> None:
    """Seat 1 holds x_1 and sees everything public; the card is 3, the wrong guess 5.

    With the blind z (the prover's secret) the test ``E_k - S == z (M_g - B_k)`` is
    exact and tells the guesses apart, so the quantities below are the right ones. Without
    z, every test the attacker can compute gives the same kind of answer for both guesses:
    a non-identity point that is no card and equals nothing in the view. Deciding it is
    deciding whether (C1, A, M_g - B_k, E_k - S) is a DDH tuple.
    """
    t = make_table(3, b"privacy")
    ct = t.ciphertext(3)
    ctx = PetContext(HAND, 3, 0, b"answer", 11)
    rng, twin = DeterministicRng(b"claim"), DeterministicRng(b"claim")
    claim = PetClaim.make(ctx, ct, ANSWERING, t.keys[0], rng)
    z = _blind(t.keys[0], ctx, ct, ANSWERING, twin.randbytes(32))
    assert claim.a == ct.c1 * z
    shares = t.responses(claim)
    assert pet_matches(claim, shares, holders=3) == ()
    x1 = t.keys[1].secret
    total = Point.sum([_own(claim), *(s.value for s in shares)])
    view = {claim.a.data, _own(claim).data, total.data, *(e.data for e in claim.e),
            *(s.value.data for s in shares), ct.c1.data, ct.c2.data}
    true_card, guess = DECK.encodings[3], DECK.encodings[5]

    # With z the guess test is exact: it accepts the card and refuses every other card,
    # and no public value is z times a card or a card's difference with B_k but the card's own.
    for j, m in enumerate(DECK.encodings):
        assert (m * z).data not in view
        for b, ek in zip(ANSWERING, claim.e, strict=True):
            if m != b:
                assert (ek - total == (m - b) * z) == (j == 3)

    def attacker_tests(m: Point) -> list[Point]:
        own_share = ct.c1 * x1
        out = [ct.c2 - total, ct.c2 - Point.sum([own_share, _own(claim), shares[1].value])]
        for b, ek in zip(ANSWERING, claim.e, strict=True):
            out += [(ek - total) - (m - b), ek - (m - b), (ek - total) - claim.a,
                    (ek + b) - total]
        return out

    for m in (true_card, guess):
        for point in attacker_tests(m):  # Point arithmetic raises on the identity
            assert DECK.index_of(point) is None
            assert point.data not in view
    # Two claims on the same slot share no value: the view cannot even be linked.
    again = PetClaim.make(replace(ctx, sequence=12), ct, ANSWERING, t.keys[0], rng)
    again_total = Point.sum([_own(again), *(s.value for s in t.responses(again))])
    first = {ek - total for ek in claim.e} | {claim.a, total}
    second = {ek - again_total for ek in again.e} | {again.a, again_total}
    assert not first & second


def test_a_broken_rng_still_blinds(table: Table) -> None:
    """The blind is hedged with x_p: two provers with the same (zero) randomness differ."""

    class Zero:
        def randbytes(self, n: int) -> bytes:
            return bytes(n)

    ct = table.ciphertext(3)
    a = PetClaim.make(PetContext(HAND, 3, 0, b"answer", 1), ct, KILLE, table.keys[0], Zero())
    b = PetClaim.make(PetContext(HAND, 3, 1, b"answer", 1), ct, KILLE, table.keys[1], Zero())
    assert a.a != b.a
    assert a.a != ct.c1  # z is not 1


# -- caller mistakes ----------------------------------------------------------------


def test_pet_matches_needs_every_other_holder_once(table: Table) -> None:
    ct = table.ciphertext(9)
    claim = table.claim(ct, ANSWERING)
    s1, s2 = table.responses(claim)
    assert pet_matches(claim, [s2, s1]) == (1,)
    for shares, holders in (([s1], 3), ([s1, s1], None), ([s1, s1], 3), ([s1, s2], 4),
                            ([s1, s2], 2), ([], 3)):
        with pytest.raises(LocalProtocolError, match="every seat"):
            pet_matches(claim, shares, holders=holders)
    own = replace(s1, seat=0)
    with pytest.raises(LocalProtocolError):
        pet_matches(claim, [own, s2])
    with pytest.raises(BadPet, match="own claim") as info:
        PetShare.from_bytes(claim, 0, s1.to_bytes())
    assert info.value.seat == 0
    foreign = table.responses(table.claim(ct, ANSWERING))[0]
    with pytest.raises(LocalProtocolError, match="another claim"):
        pet_matches(claim, [foreign, s2])


def test_local_mistakes_are_local(table: Table) -> None:
    ct = table.ciphertext(3)
    ctx = PetContext(HAND, 3, 0, b"answer", 11)
    with pytest.raises(LocalProtocolError, match="cannot claim"):
        PetClaim.make(ctx, ct, ANSWERING, table.keys[1], table.rng)
    for excluded in ((), (ANSWERING[0], ANSWERING[0]), (b"x" * 32,), DECK.encodings * 4):
        with pytest.raises(LocalProtocolError):
            PetClaim.make(ctx, ct, excluded, table.keys[0], table.rng)  # type: ignore[arg-type]
    claim = table.claim(ct, ANSWERING, ctx)
    with pytest.raises(LocalProtocolError, match="prover"):
        PetShare.make(claim, table.keys[0], table.rng)
    for count in (0, 65, "12"):
        with pytest.raises(LocalProtocolError):
            PetClaim.from_bytes(ctx, claim.to_bytes(), count)  # type: ignore[arg-type]
    for bad in ({"purpose": b""}, {"purpose": "answer"}, {"purpose": b"x" * 33},
                {"slot": -1}, {"prover": 2**64}, {"sequence": 1.5}, {"slot": True},
                {"hand": (b"table-pet", 4)}):
        with pytest.raises(LocalProtocolError):
            replace(ctx, **bad)
    with pytest.raises(LocalProtocolError):
        PetShare.from_bytes(claim, -1, table.responses(claim)[0].to_bytes())


# -- costs (the docs quote these counts) ---------------------------------------------


@pytest.mark.parametrize("m", [12, 2])
def test_group_operation_counts(table: Table, m: int) -> None:
    excluded = ANSWERING if m == 12 else KILLE
    ct = table.ciphertext(3)
    counters.reset()
    claim = table.claim(ct, excluded)
    assert counters.snapshot() == {"base_mults": 1, "var_mults": 2 * m + 4, "adds": m,
                                   "decodes": 0, "hashes_to_group": 0}
    counters.reset()
    PetClaim.from_bytes(claim.context, claim.to_bytes(), m).verify(
        ct, excluded, table.joint.share_of(0)
    )
    assert counters.snapshot() == {"base_mults": 1, "var_mults": 2 * m + 5, "adds": 2 * m + 3,
                                   "decodes": m + 2, "hashes_to_group": 0}
    counters.reset()
    share = PetShare.make(claim, table.keys[1], table.rng)
    assert counters.snapshot()["base_mults"] == 1
    assert counters.snapshot()["var_mults"] == 2
    counters.reset()
    PetShare.from_bytes(claim, 1, share.to_bytes()).verify(claim, table.joint.share_of(1))
    assert counters.snapshot() == {"base_mults": 1, "var_mults": 3, "adds": 2,
                                   "decodes": 1, "hashes_to_group": 0}
    shares = [share, PetShare.make(claim, table.keys[2], table.rng)]
    counters.reset()
    assert pet_matches(claim, shares, holders=3) == ()
    assert counters.snapshot() == {"base_mults": 0, "var_mults": 0, "adds": 2,
                                   "decodes": 0, "hashes_to_group": 0}
    counters.reset()


# -- vectors --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return load("pet")


def test_vectors_regenerate_byte_for_byte(doc: dict[str, Any]) -> None:
    fresh = generate("pet")
    assert fresh == doc
    assert (VECTOR_DIR / "pet.json").read_text("utf-8") == dumps(fresh)


@pytest.mark.parametrize("case", ["honest_claim", "false_claim", "keyless_claim"])
def test_vectors_check_from_the_file(doc: dict[str, Any], case: str) -> None:
    hand = HandContext(bytes.fromhex(doc["hand"]["table_id_hex"]), doc["hand"]["hand"])
    deck = Deck(tuple(doc["deck_labels"]))
    excluded = [Point.fromhex(h) for h in doc["excluded_hex"]]
    assert excluded == [deck.encodings[j] for j in doc["excluded_cards"]]
    for purpose, text in doc["labels"].items():
        assert text == f"p2pkille-protocol/v1/{purpose}"
    keys = {k["seat"]: KeyShare.from_secret(k["seat"], Scalar.fromhex(k["secret_hex"]))
            for k in doc["key_shares"]}
    for k in doc["key_shares"]:
        assert keys[k["seat"]].public.hex() == k["public_hex"]
    item = doc[case]
    c = item["context"]
    ctx = PetContext(hand, c["slot"], c["prover"], bytes.fromhex(c["purpose_hex"]), c["sequence"])
    assert [p.hex() for p in ctx.parts()] == c["parts_hex"]
    ct = Ciphertext.from_bytes(bytes.fromhex(item["ciphertext_hex"]))
    keyless = item["keyless"]
    assert keyless == (ctx.prover not in keys)
    claim = PetClaim.from_bytes(ctx, bytes.fromhex(item["wire_hex"]), len(excluded),
                                keyless=keyless)
    claim.verify(ct, excluded, None if keyless else keys[ctx.prover].public)
    assert claim.digest().hex() == item["digest_hex"]
    # The blind and the claim's values follow from the recorded randomness and the spec.
    statement = (*ctx.parts(), ct.c1.data, ct.c2.data, b"".join(b.data for b in excluded))
    blind_random = bytes.fromhex(item["blind_random_hex"])
    fresh = bytes.fromhex(item["nonce_random_hex"])
    if keyless:
        z = Scalar.from_hash("pet-blind", blind_random, *statement)
        w = Scalar.from_hash("pet-claim-nonce", z.data, fresh, *statement, b"z")
        assert (claim.own, claim.response_x) == (None, None)
        assert (item["own_share_hex"], item["response_x_hex"]) == (None, None)
    else:
        z = _blind(keys[ctx.prover], ctx, ct, excluded, blind_random)
        x_p = keys[ctx.prover].secret
        assert claim.own == claim.a * x_p
        w = Scalar.from_hash("pet-claim-nonce", x_p.data, z.data, fresh, *statement, b"z")
        v = Scalar.from_hash("pet-claim-nonce", x_p.data, z.data, fresh, *statement, b"x")
        assert claim.response_x == v + claim.challenge * x_p
    assert z.hex() == item["blind_hex"]
    assert claim.a == ct.c1 * z
    assert [e.hex() for e in claim.e] == [((ct.c2 - b) * z).hex() for b in excluded]
    assert claim.response_z == w + claim.challenge * z
    assert claim.digest() == domain.hash32("pet-digest", *ctx.parts(), claim.to_bytes())
    shares = []
    for r in item["responses"]:
        share = PetShare.from_bytes(claim, r["seat"], bytes.fromhex(r["wire_hex"]))
        share.verify(claim, keys[r["seat"]].public)
        x_i = keys[r["seat"]].secret
        assert share.value == claim.a * x_i
        nonce = Scalar.from_hash(
            "pet-share-nonce", x_i.data, bytes.fromhex(r["nonce_random_hex"]),
            claim.digest(), r["seat"].to_bytes(8, "big"), share.value.data,
        )
        assert share.proof.response == nonce + share.proof.challenge * x_i
        shares.append(share)
    assert list(pet_matches(claim, shares, holders=len(keys))) == item["matches"]
    card = item["card"]
    expected = [doc["excluded_cards"].index(card)] if card in doc["excluded_cards"] else []
    assert item["matches"] == expected


def test_benchmark_runs_and_counts() -> None:
    from bench.pet_ops import measure

    raw, rows = measure(rounds=1, scale=1, holders=(3,))
    assert set(raw) == {"base_mults", "var_mults", "adds", "decodes", "hashes_to_group"}
    assert all(cost > 0 for cost in raw.values())
    by_name = {row.name: row for row in rows}
    assert by_name["make claim m=12,n=3"].counts == {"base_mults": 1, "var_mults": 28,
                                                    "adds": 12}
    assert by_name["check claim m=2,n=3"].counts == {"base_mults": 1, "var_mults": 9,
                                                    "adds": 7, "decodes": 4}
    assert by_name["one peer's answer m=12,n=3"].counts["var_mults"] == 34
    assert all(row.seconds > 0 and row.priced > 0 and row.ratio > 0 for row in rows)


def _loop_verdict(claim: PetClaim, items: list[tuple[PetShare, Point]]) -> str | None:
    for share, public in items:
        try:
            share.verify(claim, public)
        except (BadPet, LocalProtocolError) as exc:
            return f"{type(exc).__name__}: {exc}"
    return None


@given(hows=st.lists(st.sampled_from(["good", "good", "value", "proof", "key", "degenerate",
                                      "other-claim"]), max_size=6))
def test_a_batch_of_responses_gives_the_loop_s_verdict(hows: list[str]) -> None:
    table = make_table(7, seed=b"pet-batch")
    claim = table.claim(table.ciphertext(9), ANSWERING)
    other = table.claim(table.ciphertext(9), ANSWERING)
    responses = table.responses(claim)
    items: list[tuple[PetShare, Point]] = []
    for k, how in enumerate(hows):
        share = responses[k]
        public = table.joint.share_of(share.seat)
        if how == "value":
            share = replace(share, value=share.value + Point.GENERATOR)
        elif how == "proof":
            share = replace(share, proof=DleqProof(share.proof.challenge,
                                                   share.proof.response + Scalar.from_int(1)))
        elif how == "key":
            public = table.joint.share_of((share.seat + 1) % 7)
        elif how == "degenerate":  # s = c x: s G - c X is the identity
            c = share.proof.challenge
            share = replace(share, proof=DleqProof(c, c * table.keys[share.seat].secret))
        elif how == "other-claim":
            share = PetShare.make(other, table.keys[share.seat], table.rng)
        items.append((share, public))
    want = _loop_verdict(claim, items)
    with ThreadPoolExecutor(1) as pool:
        for workers in (None, Workers(pool, 2)):
            try:
                pet.verify_pet_shares(claim, items, workers=workers)
                got = None
            except (BadPet, LocalProtocolError) as exc:
                got = f"{type(exc).__name__}: {exc}"
            assert got == want


# -- a prover without a key (a buyer) ------------------------------------------------


def _keyless_outcome(t: Table, claim: PetClaim, ct: Ciphertext,
                     excluded: Sequence[Point]) -> tuple[int, ...]:
    """A verifier's path for a keyless claim: parse as keyless, verify without a key share,
    take a response from every key holder."""
    claim = PetClaim.from_bytes(claim.context, claim.to_bytes(), len(excluded), keyless=True)
    claim.verify(ct, excluded, None)
    shares = [PetShare.from_bytes(claim, k.seat, PetShare.make(claim, k, t.rng).to_bytes())
              for k in t.keys]
    for s in shares:
        s.verify(claim, t.joint.share_of(s.seat))
    return pet_matches(claim, shares, holders=t.joint.seats)


@given(
    holders=st.integers(2, 7),
    seed=st.binary(min_size=1, max_size=8),
    card=st.integers(0, 19),
)
def test_a_keyless_claim_is_true_exactly_when_the_card_is_not_excluded(
    holders: int, seed: bytes, card: int
) -> None:
    t = make_table(holders, seed)
    ct = t.ciphertext(card)
    ctx = PetContext(HAND, 5, holders + 3, b"answer", 9)
    claim = PetClaim.make(ctx, ct, ANSWERING, None, t.rng)
    assert claim.keyless
    assert len(claim.to_bytes()) == PetClaim.size(12, keyless=True) == 12 * 32 + 96
    want = (card - 8,) if card >= 8 else ()
    assert _keyless_outcome(t, claim, ct, ANSWERING) == want


def test_a_keyless_claim_needs_every_holders_response(table: Table) -> None:
    ct = table.ciphertext(9)
    claim = PetClaim.make(PetContext(HAND, 5, 3, b"answer", 9), ct, ANSWERING, None, table.rng)
    shares = [PetShare.make(claim, k, table.rng) for k in table.keys]
    # Without seat 0's share the lie (card 9 is excluded) would look true.
    with pytest.raises(LocalProtocolError, match=r"every seat of 0\.\.2 for a keyless"):
        pet_matches(claim, shares[1:], holders=3)
    assert pet_matches(claim, shares, holders=3) == (1,)
    # A keyless prover must not be a key holder: its context would let a holder skip its share.
    at_seat = PetClaim.make(PetContext(HAND, 5, 1, b"answer", 9), ct, ANSWERING, None, table.rng)
    with pytest.raises(LocalProtocolError, match="keyless"):
        pet_matches(at_seat, [PetShare.make(at_seat, k, table.rng) for k in table.keys
                              if k.seat != 1], holders=3)


def test_keyed_and_keyless_claims_are_never_taken_for_each_other(table: Table) -> None:
    ct = table.ciphertext(3)
    keyed = table.claim(ct, ANSWERING)
    keyless = PetClaim.make(PetContext(HAND, 3, 7, b"answer", 11), ct, ANSWERING, None,
                            table.rng)
    with pytest.raises(InvalidEncoding, match="keyless claim excluding 12 must be 480"):
        PetClaim.from_bytes(keyless.context, keyed.to_bytes(), 12, keyless=True)
    with pytest.raises(InvalidEncoding, match="claim excluding 12 must be 544"):
        PetClaim.from_bytes(keyed.context, keyless.to_bytes(), 12)
    with pytest.raises(LocalProtocolError, match="keyless claim checked as the other kind"):
        keyless.verify(ct, ANSWERING, table.joint.share_of(0))
    with pytest.raises(LocalProtocolError, match="keyed claim checked as the other kind"):
        keyed.verify(ct, ANSWERING, None)


def test_a_forged_keyless_claim_is_refused(table: Table) -> None:
    ct = table.ciphertext(9)  # excluded: the forger wants E_k that never match S
    ctx = PetContext(HAND, 3, 7, b"answer", 11)
    honest = PetClaim.make(ctx, ct, ANSWERING, None, table.rng)
    one = Scalar.from_int(1)
    for forged in (
        replace(honest, e=(honest.e[0] + Point.GENERATOR, *honest.e[1:])),
        replace(honest, e=(*honest.e[:1], honest.e[1] * Scalar.from_int(2), *honest.e[2:])),
        replace(honest, a=honest.a + Point.GENERATOR),
        replace(honest, response_z=honest.response_z + one),
        replace(honest, context=replace(ctx, slot=4)),
        replace(honest, context=replace(ctx, prover=8)),
    ):
        with pytest.raises(BadPet, match="does not verify") as info:
            forged.verify(ct, ANSWERING, None)
        assert info.value.seat == forged.context.prover
    # Another slot's ciphertext: the claim is bound to the slot the rules name.
    with pytest.raises(BadPet, match="does not verify"):
        honest.verify(table.ciphertext(2), ANSWERING, None)
