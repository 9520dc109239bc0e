"""Ed25519 identities: RFC 8032 known answers, labelled signatures, strict public keys."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.exceptions import InvalidSignature as CryptoInvalidSignature
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import identity as identity_module
from protocol.domain import encode, hash32, label
from protocol.errors import InvalidEncoding, InvalidSignature, LocalProtocolError
from protocol.group import ed25519_verify
from protocol.identity import Identity, PublicKey, fingerprint
from protocol.rng import DeterministicRng

# RFC 8032 section 7.1, TEST 1, 2 and 3: (secret key, public key, message, signature).
RFC8032 = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555f"
     "b8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da08"
     "5ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18"
     "ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
]

P = 2**255 - 19


def _compress(point: tuple[int, int, int, int]) -> bytes:
    x, y, z, _ = point
    zi = pow(z, -1, P)
    x, y = x * zi % P, y * zi % P
    return (y | (x & 1) << 255).to_bytes(32, "little")


@pytest.mark.parametrize(("seed", "public", "message", "signature"), RFC8032)
def test_rfc8032_known_answers(seed: str, public: str, message: str, signature: str) -> None:
    person = Identity.from_seed(bytes.fromhex(seed))
    assert person.public.raw.hex() == public
    assert person.private_bytes().hex() == seed
    # The raw scheme underneath our labelled signatures is RFC 8032 Ed25519: signing
    # the RFC's message through the private key object gives the RFC's signature.
    raw_sig = person._key.sign(bytes.fromhex(message))
    assert raw_sig.hex() == signature


def test_signatures_are_over_the_label_never_the_raw_message() -> None:
    person = Identity.from_seed(bytes.fromhex(RFC8032[0][0]))
    sig = person.sign("envelope", b"m")
    assert sig == person._key.sign(encode(label("envelope"), b"m"))
    person.public.verify("envelope", b"m", sig)
    with pytest.raises(InvalidSignature) as info:
        person.public.verify("checkpoint", b"m", sig, evidence=b"EV")
    assert info.value.evidence == b"EV"
    with pytest.raises(InvalidSignature):
        person.public.verify("envelope", b"m", person._key.sign(b"m"))


@given(st.integers(0, 64 * 8 - 1))
def test_any_flipped_signature_bit_fails_closed(bit: int) -> None:
    person = Identity.generate(DeterministicRng(b"flip"))
    sig = bytearray(person.sign("envelope", b"hello"))
    sig[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(InvalidSignature):
        person.public.verify("envelope", b"hello", bytes(sig))


@pytest.mark.parametrize("size", [0, 63, 65])
def test_wrong_signature_length(size: int) -> None:
    person = Identity.generate(DeterministicRng(b"len"))
    with pytest.raises(InvalidSignature, match=f"{size} bytes"):
        person.public.verify("envelope", b"x", bytes(size))


def test_keys_from_injected_randomness_are_reproducible() -> None:
    a = Identity.generate(DeterministicRng(b"seed"))
    b = Identity.generate(DeterministicRng(b"seed"))
    c = Identity.generate(DeterministicRng(b"other"))
    assert a.public == b.public != c.public
    assert a.private_bytes() == DeterministicRng(b"seed").randbytes(32)


def test_text_round_trip_repr_and_fingerprint() -> None:
    key = Identity.from_seed(bytes.fromhex(RFC8032[1][0])).public
    assert PublicKey.from_text(str(key)) == key
    assert eval(repr(key), {"PublicKey": PublicKey}) == key
    assert key.fingerprint == hash32("identity-fingerprint", key.raw)[:8].hex()
    assert len(key.fingerprint) == 16
    assert fingerprint(key.raw) == key.fingerprint
    assert key.fingerprint in repr(Identity.from_seed(bytes.fromhex(RFC8032[1][0])))


def test_the_identity_point_forges_in_openssl_so_we_refuse_it() -> None:
    # With A = identity, R = identity and S = 0 satisfy [S]B = R + [k]A for every
    # message: OpenSSL accepts that, which is why PublicKey validates points itself.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    ident = bytes([1]) + bytes(31)
    Ed25519PublicKey.from_public_bytes(ident).verify(ident + bytes(32), b"anything")
    with pytest.raises(InvalidEncoding, match="identity"):
        PublicKey.from_bytes(ident)


def test_small_order_mixed_order_and_non_canonical_keys_are_refused() -> None:
    base = identity_module._decompress(bytes.fromhex(RFC8032[0][1]))
    order4 = identity_module._decompress(bytes(32))  # y = 0: a point of order 4
    assert base is not None
    assert order4 is not None
    mixed = _compress(identity_module._add(base, order4))
    bad = {
        "order 4": bytes(32),
        "order 2 (y = -1)": (P - 1).to_bytes(32, "little"),
        "mixed order": mixed,
        "y = p": P.to_bytes(32, "little"),
        "x = 0 with sign bit": (1 | 1 << 255).to_bytes(32, "little"),
        "not on the curve": (2).to_bytes(32, "little"),
        "short": bytes(31),
    }
    for name, raw in bad.items():
        with pytest.raises(InvalidEncoding) as info:
            PublicKey.from_bytes(raw)
        assert info.value.evidence == raw, name
    # The compression helper is right: it round-trips an honest key.
    assert _compress(base) == bytes.fromhex(RFC8032[0][1])


def test_seed_must_be_32_bytes() -> None:
    with pytest.raises(LocalProtocolError):
        Identity.from_seed(bytes(31))


def test_signature_whose_r_is_the_identity_is_refused_however_encoded() -> None:
    # The author can make R the identity: S = k * a gives [S]B - [k]A = identity.
    # OpenSSL accepts it encoded canonically (y = 1); libsodium, which checks here,
    # refuses a small-order R (docs 10.3), and nobody may accept the non-canonical
    # y = p + 1 (R is compared as bytes), or implementations would disagree.
    seed = bytes(range(32))
    digest = hashlib.sha512(seed).digest()
    a = int.from_bytes(digest[:32], "little") & ((1 << 254) - 8) | (1 << 254)
    signer = Identity.from_seed(seed)
    order = 2**252 + 27742317777372353535851937790883648493
    signed = encode(label("envelope"), b"message")
    for r_y in (1, P + 1):
        r = r_y.to_bytes(32, "little")
        k = int.from_bytes(hashlib.sha512(r + signer.public.raw + signed).digest(), "little")
        signature = r + (k * a % order).to_bytes(32, "little")
        if r_y == 1:  # OpenSSL's rule, which the docs no longer follow here
            signer._key.public_key().verify(signature, signed)
        with pytest.raises(InvalidSignature):
            signer.public.verify("envelope", b"message", signature)


@settings(max_examples=60, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), message=st.binary(max_size=300),
       flip=st.one_of(st.none(), st.integers(0, 511)))
def test_libsodium_and_openssl_agree_on_signatures_honest_signers_make(
    seed: bytes, message: bytes, flip: int | None
) -> None:
    # Honest signatures (and any bit flipped in one) are judged alike by both rules; they
    # differ only on a small-order R, which needs the signer's key (test above).
    signer = Identity.from_seed(seed)
    signature = bytearray(signer.sign("envelope", message))
    if flip is not None:
        signature[flip // 8] ^= 1 << (flip % 8)
    signed = encode(label("envelope"), message)
    try:
        signer._key.public_key().verify(bytes(signature), signed)
        openssl = True
    except CryptoInvalidSignature:
        openssl = False
    assert ed25519_verify(bytes(signature), signed, signer.public.raw) is openssl
    assert openssl is (flip is None)
