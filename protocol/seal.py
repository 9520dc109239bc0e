"""Sealing a payload (a decryption share) to one recipient's X25519 key.

``seal``: a fresh ephemeral X25519 key ``e``; ``ss = X25519(e, R)``;
``k = HKDF-SHA256(ikm=ss, salt="", info=encode(label("seal-key"), E, R), 32)``;
``box = E || ChaCha20-Poly1305(k, nonce=0^12, aad=encode(label("seal-aad"), header), pt)``.
The key is used once, so the all-zero nonce is safe. The header (the share's
context) is bound as associated data: a box moved to another context fails.

The sender's signed envelope also carries ``sealed_digest(header, pt)``. A
recipient whose box fails to open, or opens to a share that does not verify,
accuses; the sender answers by publishing ``pt`` and the box's ephemeral private
key ``e`` openly. Anyone then opens the box itself (:func:`open_disclosed`): a box
that does not open with ``e``, or holds anything but ``pt``, blames the sender; a
box that opens to a matching, valid ``pt`` proves the accusation false. ``e`` is
fresh per box, so disclosing it shows this one box and nothing else.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from protocol.deck import Ciphertext
from protocol.domain import encode, hash32, label
from protocol.errors import InvalidEncoding, RemoteProtocolError
from protocol.group import Point
from protocol.keys import DeliveryKeyPair, delivery_public_key
from protocol.reveal import BadShare, DecryptionShare, RevealContext
from protocol.rng import Rng

__all__ = [
    "SEAL_OVERHEAD",
    "SealError",
    "check_disclosed_share",
    "open_disclosed",
    "open_sealed",
    "open_share",
    "seal",
    "seal_share",
    "sealed_digest",
]

_NONCE = bytes(12)
#: Bytes a sealed box adds to its plaintext: ephemeral key and Poly1305 tag.
SEAL_OVERHEAD = 32 + 16
MAX_SEALED = 4096


class SealError(RemoteProtocolError):
    """A sealed box that does not open: wrong key, wrong header or tampered bytes."""


def _key(shared: bytes, ephemeral: bytes, recipient: bytes) -> bytes:
    hkdf = HKDF(
        algorithm=hashes.SHA256(),
        length=32,
        salt=None,
        info=encode(label("seal-key"), ephemeral, recipient),
    )
    return hkdf.derive(shared)


def _aad(header: bytes) -> bytes:
    return encode(label("seal-aad"), header)


def seal(recipient_public: bytes, header: bytes, plaintext: bytes, rng: Rng, *,
         ephemeral: DeliveryKeyPair | None = None) -> bytes:
    """Encrypt ``plaintext`` to ``recipient_public`` bound to ``header`` (``ephemeral``:
    the box's one-time key, drawn from ``rng`` when not given; keep it to answer a
    dispute with :func:`open_disclosed`)."""
    recipient = delivery_public_key(recipient_public)
    if ephemeral is None:
        ephemeral = DeliveryKeyPair.generate(rng)
    try:
        shared = ephemeral.private_key().exchange(recipient)
    except ValueError as exc:
        raise InvalidEncoding(
            "recipient X25519 key is a low-order point", evidence=recipient_public
        ) from exc
    key = _key(shared, ephemeral.public, recipient_public)
    return ephemeral.public + ChaCha20Poly1305(key).encrypt(_NONCE, plaintext, _aad(header))


def open_sealed(recipient: DeliveryKeyPair, header: bytes, box: bytes) -> bytes:
    """Decrypt a box sealed to ``recipient``; any failure is :class:`SealError`."""
    if not SEAL_OVERHEAD <= len(box) <= MAX_SEALED:
        raise SealError(f"sealed box of {len(box)} bytes is out of range", evidence=box[:256])
    ephemeral = box[:32]
    try:
        shared = recipient.private_key().exchange(delivery_public_key(ephemeral))
    except ValueError as exc:
        raise SealError("ephemeral key is a low-order point", evidence=box) from exc
    key = _key(shared, ephemeral, recipient.public)
    try:
        return ChaCha20Poly1305(key).decrypt(_NONCE, box[32:], _aad(header))
    except InvalidTag as exc:
        raise SealError("sealed box does not authenticate", evidence=box) from exc


def open_disclosed(ephemeral_private: bytes, recipient_public: bytes, header: bytes,
                   box: bytes) -> bytes:
    """Open a box with the ephemeral private key its sender disclosed (a dispute).

    :class:`SealError` if the key is not the box's or the box does not open: the
    sender's fault, as only it chose both."""
    if not SEAL_OVERHEAD <= len(box) <= MAX_SEALED or len(ephemeral_private) != 32:
        raise SealError("disclosed box or key of the wrong size", evidence=box[:256])
    ephemeral = DeliveryKeyPair.from_private(ephemeral_private)
    if ephemeral.public != box[:32]:
        raise SealError("the disclosed key is not the box's ephemeral key", evidence=box)
    try:
        shared = ephemeral.private_key().exchange(delivery_public_key(recipient_public))
    except ValueError as exc:
        raise SealError("recipient key is a low-order point", evidence=box) from exc
    key = _key(shared, ephemeral.public, recipient_public)
    try:
        return ChaCha20Poly1305(key).decrypt(_NONCE, box[32:], _aad(header))
    except InvalidTag as exc:
        raise SealError("sealed box does not open with its disclosed key", evidence=box) from exc


def sealed_digest(header: bytes, plaintext: bytes) -> bytes:
    """What the sender's envelope signs about a sealed payload: ``hash32("sealed", header, pt)``."""
    return hash32("sealed", header, plaintext)


def seal_share(share: DecryptionShare, recipient_public: bytes, rng: Rng, *,
               ephemeral: DeliveryKeyPair | None = None) -> tuple[bytes, bytes]:
    """Seal a share to its recipient: ``(box, digest)``; the envelope signs the digest."""
    header = share.context.header()
    plaintext = share.to_bytes()
    return (seal(recipient_public, header, plaintext, rng, ephemeral=ephemeral),
            sealed_digest(header, plaintext))


def open_share(recipient: DeliveryKeyPair, ctx: RevealContext, box: bytes) -> DecryptionShare:
    """Open a sealed share and parse it (the caller still verifies its proof)."""
    return DecryptionShare.from_bytes(ctx, open_sealed(recipient, ctx.header(), box))


def check_disclosed_share(
    ctx: RevealContext, plaintext: bytes, digest: bytes, public: Point, ct: Ciphertext, *,
    sealer: int,
) -> DecryptionShare:
    """Settle an accusation: the plaintext ``sealer`` published must match the digest its
    envelope signed and carry a valid share; otherwise ``sealer`` is to blame
    (:class:`SealError` for a digest mismatch, :class:`BadShare` naming ``sealer`` for a
    bad proof).

    ``sealer`` is the author of the envelope that carried the box. It differs from
    ``ctx.sender`` for a forwarded share (which keeps its maker's context): a bad one is
    the forwarder's fault, since it could check the share when it received it, and a
    bad share's bytes prove nothing about its maker (anyone can write them)."""
    if sealed_digest(ctx.header(), plaintext) != digest:
        raise SealError("disclosed plaintext does not match the signed digest", evidence=plaintext)
    share = DecryptionShare.from_bytes(ctx, plaintext)
    try:
        share.verify(public, ct)
    except BadShare as exc:
        if sealer == ctx.sender:
            raise
        raise BadShare(
            sealer, f"forwarded share of seat {ctx.sender} does not verify",
            evidence=exc.evidence,
        ) from exc
    return share
