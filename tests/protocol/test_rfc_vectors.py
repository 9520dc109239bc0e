"""Known answers from outside the project, so our own vectors rest on independent ones.

Sources (values copied from the published test suites, not recalled):
- RFC 9496 appendix A (ristretto255): small multiples, bad encodings, and the
  one-way map on SHA-512 of the appendix's sentences, as in gtank/ristretto255's
  ristretto255_test.go;
- RFC 8032 section 7.1 tests 1-3 (Ed25519), as in NSec's tests/Rfc/Ed25519Tests.cs;
- RFC 7748 sections 5.2 and 6.1 (X25519), as in pyca/cryptography's
  vectors/.../X25519/rfc7748.txt and NSec's X25519Tests.cs;
- RFC 8439 section 2.8.2 and appendix A.5 (ChaCha20-Poly1305), as in NSec's
  ChaCha20Poly1305Tests.cs;
- RFC 5869 appendix A.1-A.3 (HKDF-SHA256), as in pyca/cryptography's
  vectors/.../KDF/rfc-5869-HKDF-SHA256.txt.
"""

from __future__ import annotations

import hashlib
import hmac

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from protocol.errors import InvalidEncoding
from protocol.group import Point, Scalar

# -- RFC 9496 A.1: encodings of [0]B .. [15]B ------------------------------------
SMALL_MULTIPLES = [
    "0000000000000000000000000000000000000000000000000000000000000000",
    "e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76",
    "6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919",
    "94741f5d5d52755ece4f23f044ee27d5d1ea1e2bd196b462166b16152a9d0259",
    "da80862773358b466ffadfe0b3293ab3d9fd53c5ea6c955358f568322daf6a57",
    "e882b131016b52c1d3337080187cf768423efccbb517bb495ab812c4160ff44e",
    "f64746d3c92b13050ed8d80236a7f0007c3b3f962f5ba793d19a601ebb1df403",
    "44f53520926ec81fbd5a387845beb7df85a96a24ece18738bdcfa6a7822a176d",
    "903293d8f2287ebe10e2374dc1a53e0bc887e592699f02d077d5263cdd55601c",
    "02622ace8f7303a31cafc63f8fc48fdc16e1c8c8d234b2f0d6685282a9076031",
    "20706fd788b2720a1ed2a5dad4952b01f413bcf0e7564de8cdc816689e2db95f",
    "bce83f8ba5dd2fa572864c24ba1810f9522bc6004afe95877ac73241cafdab42",
    "e4549ee16b9aa03099ca208c67adafcafa4c3f3e4e5303de6026e3ca8ff84460",
    "aa52e000df2e16f55fb1032fc33bc42742dad6bd5a8fc0be0167436c5948501f",
    "46376b80f409b29dc2b5f6f0c52591990896e5716f41477cd30085ab7f10301e",
    "e0c418f7c8d9c4cdd7395b93ea124f3ad99021bb681dfc3302a9d99a2e53e64e",
]

# -- RFC 9496 A.2: invalid encodings ----------------------------------------------
BAD_ENCODINGS = [
    # non-canonical field encodings
    "00ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "f3ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    # negative field elements
    "0100000000000000000000000000000000000000000000000000000000000000",
    "01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "ed57ffd8c914fb201471d1c3d245ce3c746fcbe63a3679d51b6a516ebebe0e20",
    "c34c4e1826e5d403b78e246e88aa051c36ccf0aafebffe137d148a2bf9104562",
    "c940e5a4404157cfb1628b108db051a8d439e1a421394ec4ebccb9ec92a8ac78",
    "47cfc5497c53dc8e61c91d17fd626ffb1c49e2bca94eed052281b510b1117a24",
    "f1c6165d33367351b0da8f6e4511010c68174a03b6581212c71c0e1d026c3c72",
    "87260f7a2f12495118360f02c26a470f450dadf34a413d21042b43b9d93e1309",
    # non-square x^2
    "26948d35ca62e643e26a83177332e6b6afeb9d08e4268b650f1f5bbd8d81d371",
    "4eac077a713c57b4f4397629a4145982c661f48044dd3f96427d40b147d9742f",
    "de6a7b00deadc788eb6b6c8d20c0ae96c2f2019078fa604fee5b87d6e989ad7b",
    "bcab477be20861e01e4a0e295284146a510150d9817763caf1a6f4b422d67042",
    "2a292df7e32cababbd9de088d1d1abec9fc0440f637ed2fba145094dc14bea08",
    "f4a9e534fc0d216c44b218fa0c42d99635a0127ee2e53c712f70609649fdff22",
    "8268436f8c4126196cf64b3c7ddbda90746a378625f9813dd9b8457077256731",
    "2810e5cbc2cc4d4eece54f61c6f69758e289aa7ab440b3cbeaa21995c2f4232b",
    # negative xy value
    "3eb858e78f5a7254d8c9731174a94f76755fd3941c0ac93735c07ba14579630e",
    "a45fdc55c76448c049a1ab33f17023edfb2be3581e9c7aade8a6125215e04220",
    "d483fe813c6ba647ebbfd3ec41adca1c6130c2beeee9d9bf065c8d151c5f396e",
    "8a2e1d30050198c65a54483123960ccc38aef6848e1ec8f5f780e8523769ba32",
    "32888462f8b486c68ad7dd9610be5192bbeaf3b443951ac1a8118419d9fa097b",
    "227142501b9d4355ccba290404bde41575b037693cef1f438c47f8fbf35d1165",
    "5c37cc491da847cfeb9281d407efc41e15144c876e0170b499a96a22ed31e01e",
    "445425117cb8c90edcbc7c1cc0e74f747f2c1efa5630a967c64f287792a48a4b",
    # s = -1, which gives y = 0
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
]

# -- RFC 9496 A.3: one-way map of SHA-512(sentence) ---------------------------------
FROM_UNIFORM = [
    ("Ristretto is traditionally a short shot of espresso coffee",
     "3066f82a1a747d45120d1740f14358531a8f04bbffe6a819f86dfe50f44a0a46"),
    ("made with the normal amount of ground coffee but extracted with",
     "f26e5b6f7d362d2d2a94c5d0e7602cb4773c95a2e5c31a64f133189fa76ed61b"),
    ("about half the amount of water in the same amount of time",
     "006ccd2a9e6867e6a2c5cea83d3302cc9de128dd2a9a57dd8ee7b9d7ffe02826"),
    ("by using a finer grind.",
     "f8f0c87cf237953c5890aec3998169005dae3eca1fbb04548c635953c817f92a"),
    ("This produces a concentrated shot of coffee per volume.",
     "ae81e7dedf20a497e10c304a765c1767a42d6e06029758d2d7e8ef7cc4c41179"),
    ("Just pulling a normal shot short will produce a weaker shot",
     "e2705652ff9f5e44d3e841bf1c251cf7dddb77d140870d1ab2ed64f1a9ce8628"),
    ("and is not a Ristretto as some believe.",
     "80bd07262511cdde4863f8a7434cef696750681cb9510eea557088f76d9e5065"),
]


@pytest.mark.parametrize("i", range(1, 16))
def test_rfc9496_small_multiples(i: int) -> None:
    expected = SMALL_MULTIPLES[i]
    assert Point.base_mult(Scalar.from_int(i)).hex() == expected
    assert (Point.GENERATOR * Scalar.from_int(i)).hex() == expected
    assert Point.fromhex(expected).hex() == expected
    # the var-base path, from [1]B decoded as an ordinary point
    other = Point.base_mult(Scalar.from_int(3))
    assert (other * Scalar.from_int(i)).hex() == Point.base_mult(Scalar.from_int(3 * i)).hex()


def test_rfc9496_repeated_addition() -> None:
    acc = Point.GENERATOR
    for expected in SMALL_MULTIPLES[2:]:
        acc = acc + Point.GENERATOR
        assert acc.hex() == expected


def test_rfc9496_identity_is_rejected_as_input() -> None:
    with pytest.raises(InvalidEncoding):
        Point.fromhex(SMALL_MULTIPLES[0])


@pytest.mark.parametrize("encoding", BAD_ENCODINGS)
def test_rfc9496_bad_encodings(encoding: str) -> None:
    with pytest.raises(InvalidEncoding):
        Point.fromhex(encoding)


@pytest.mark.parametrize(("sentence", "expected"), FROM_UNIFORM)
def test_rfc9496_from_uniform_bytes(sentence: str, expected: str) -> None:
    uniform = hashlib.sha512(sentence.encode()).digest()
    assert Point.from_uniform(uniform).hex() == expected


# -- RFC 8032 7.1 tests 1..3 --------------------------------------------------------
ED25519 = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
     "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
     "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
]


@pytest.mark.parametrize(("sk", "pk", "msg", "sig"), ED25519)
def test_rfc8032_ed25519(sk: str, pk: str, msg: str, sig: str) -> None:
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(sk))
    assert key.public_key().public_bytes_raw().hex() == pk
    assert key.sign(bytes.fromhex(msg)).hex() == sig
    Ed25519PublicKey.from_public_bytes(bytes.fromhex(pk)).verify(
        bytes.fromhex(sig), bytes.fromhex(msg)
    )


# -- RFC 7748 5.2 and 6.1 ---------------------------------------------------------------
X25519 = [
    ("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
     "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
     "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
    ("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
     "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
     "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
    ("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
     "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f",
     "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"),
    ("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
     "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a",
     "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"),
]


@pytest.mark.parametrize(("scalar", "u", "out"), X25519)
def test_rfc7748_x25519(scalar: str, u: str, out: str) -> None:
    key = X25519PrivateKey.from_private_bytes(bytes.fromhex(scalar))
    peer = X25519PublicKey.from_public_bytes(bytes.fromhex(u))
    assert key.exchange(peer).hex() == out


def test_rfc7748_6_1_public_keys() -> None:
    alice = X25519PrivateKey.from_private_bytes(bytes.fromhex(X25519[2][0]))
    bob = X25519PrivateKey.from_private_bytes(bytes.fromhex(X25519[3][0]))
    assert alice.public_key().public_bytes_raw().hex() == X25519[3][1]
    assert bob.public_key().public_bytes_raw().hex() == X25519[2][1]


# -- RFC 8439 2.8.2 and A.5 -----------------------------------------------------------
AEAD = [
    (
        "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
        "070000004041424344454647",
        "50515253c0c1c2c3c4c5c6c7",
        b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
        b"the future, sunscreen would be it.".hex(),
        "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca96712"
        "82fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58"
        "fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116",
        "1ae10b594f09e26a7e902ecbd0600691",
    ),
    (
        "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
        "000000000102030405060708",
        "f33388860000000000004e91",
        "496e7465726e65742d4472616674732061726520647261667420646f63756d656e74732076616c69"
        "6420666f722061206d6178696d756d206f6620736978206d6f6e74687320616e64206d6179206265"
        "20757064617465642c207265706c616365642c206f72206f62736f6c65746564206279206f746865"
        "7220646f63756d656e747320617420616e792074696d652e20497420697320696e617070726f7072"
        "6961746520746f2075736520496e7465726e65742d447261667473206173207265666572656e6365"
        "206d6174657269616c206f7220746f2063697465207468656d206f74686572207468616e20617320"
        "2fe2809c776f726b20696e2070726f67726573732e2fe2809d",
        "64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb24c6cfc18755d43ee"
        "a09ee94e382d26b0bdb7b73c321b0100d4f03b7f355894cf332f830e710b97ce98c8a84abd0b9481"
        "14ad176e008d33bd60f982b1ff37c8559797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0"
        "f9f6157b53c867e4b9166c767b804d46a59b5216cde7a4e99040c5a40433225ee282a1b0a06c523e"
        "af4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a0bb2316053fa7699"
        "1955ebd63159434ecebb4e466dae5a1073a6727627097a1049e617d91d361094fa68f0ff77987130"
        "305beaba2eda04df997b714d6c6f2c29a6ad5cb4022b02709b",
        "eead9d67890cbb22392336fea1851f38",
    ),
]


@pytest.mark.parametrize(("key", "nonce", "aad", "pt", "ct", "tag"), AEAD)
def test_rfc8439_aead(key: str, nonce: str, aad: str, pt: str, ct: str, tag: str) -> None:
    aead = ChaCha20Poly1305(bytes.fromhex(key))
    sealed = aead.encrypt(bytes.fromhex(nonce), bytes.fromhex(pt), bytes.fromhex(aad))
    assert sealed.hex() == ct + tag
    assert aead.decrypt(bytes.fromhex(nonce), sealed, bytes.fromhex(aad)).hex() == pt


# -- RFC 5869 A.1..A.3 ---------------------------------------------------------------
HKDF_CASES = [
    ("0b" * 22, "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9", 42,
     "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
     "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
    (bytes(range(0x50)).hex(), bytes(range(0x60, 0xB0)).hex(),
     bytes(range(0xB0, 0x100)).hex(), 82,
     "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
     "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c6"
     "5e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
    ("0b" * 22, "", "", 42,
     "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
     "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
]


@pytest.mark.parametrize(("ikm", "salt", "info", "length", "prk", "okm"), HKDF_CASES)
def test_rfc5869_hkdf(ikm: str, salt: str, info: str, length: int, prk: str, okm: str) -> None:
    salt_b = bytes.fromhex(salt)
    # Extract with an empty salt is HMAC keyed with HashLen zeros (RFC 5869 2.2).
    assert hmac.new(salt_b or bytes(32), bytes.fromhex(ikm), "sha256").hexdigest() == prk
    derived = HKDF(
        algorithm=hashes.SHA256(), length=length, salt=salt_b or None, info=bytes.fromhex(info)
    ).derive(bytes.fromhex(ikm))
    assert derived.hex() == okm
