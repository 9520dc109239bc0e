"""The vectors of finding and joining a table (docs/protocol.md Part III, III.9).

Three peers with fixed keys form a table called ``Köket`` over the real
:class:`~p2pkille.net.lobby.Lobby` state machines (a creator and two joiners bound to
it, one of them a bot), fed each other's messages on a lossless network with a made-up
clock. The file records what a second implementation needs to speak to them byte for
byte: the channel id, every lobby message (its body, the bytes signed, the signature and
the wire), the roster's digest and the configuration every member derives from it, two
signed discovery adverts (TXT record, instance and service names), one mesh connection
(the three handshake frames with fixed nonces, a data frame carrying a genesis
envelope, a lobby message's frame, a keepalive), a signed sync, and the MQTT topics.

Everything is deterministic: Ed25519 signatures are, and every other secret comes from
:class:`~protocol.rng.DeterministicRng` on a seed written into the file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from p2pkille.net import guard, lobby, mesh, mqtt
from p2pkille.net.discovery import PURPOSE as ADVERT_PURPOSE
from p2pkille.net.discovery import SERVICE_TYPE, TableAdvert
from p2pkille.net.framing import encode_frame
from p2pkille.net.lobby import Lobby, Offer, channel_id
from p2pkille.runtime import gapfill
from p2pkille.runtime.config import TableConfig
from p2pkille.runtime.io import Send
from protocol import canonical
from protocol.domain import encode, hash32, label
from protocol.envelope import ZERO_HASH, Envelope
from protocol.errors import RemoteProtocolError
from protocol.identity import Identity, PublicKey
from protocol.keys import DeliveryKeyPair
from protocol.rng import DeterministicRng

__all__ = ["ACCEPTOR_SEED", "LABELS", "SEED", "generate"]

SEED: Final = b"p2pkille lobby vectors v1"
"""Every key and nonce of the file is drawn from ``DeterministicRng`` on this seed plus
a suffix the file names."""
ACCEPTOR_SEED: Final = SEED + b"/acceptor"
"""The acceptor's nonce of the mesh handshake is the first 32 bytes of
``DeterministicRng`` on this seed (a :class:`Mesh` given that RNG draws the same)."""
TABLE_NAME: Final = "Köket"
STAMP: Final = 1_767_225_600_000_000_000
"""The signed sync's stamp: 2026-01-01T00:00:00Z in nanoseconds."""
#: Every purpose Part III signs or hashes with (domain separation, Part I section 1).
LABELS: Final = (lobby.PURPOSE, "table-roster", "table-channel", ADVERT_PURPOSE,
                 mesh.HANDSHAKE_PURPOSE, guard.PURPOSE)


@dataclass(frozen=True, slots=True)
class _Peer:
    role: str
    seed: bytes
    identity: Identity
    delivery: DeliveryKeyPair
    player: str
    bot: bool
    address: str

    def to_json(self) -> dict[str, object]:
        return {"role": self.role, "identity_seed_hex": self.seed.hex(),
                "identity": canonical.b64encode(self.identity.public.raw),
                "fingerprint": self.identity.public.fingerprint,
                "name": mesh.peer_name(self.identity.public),
                "delivery_private_hex": self.delivery.private.hex(),
                "delivery_public_hex": self.delivery.public.hex(),
                "player": self.player, "bot": self.bot, "address": self.address}


def _peers() -> list[_Peer]:
    rng = DeterministicRng(SEED + b"/keys")
    out = []
    for role, player, bot, address in (("creator", "Lisa", False, "192.0.2.1:7001"),
                                       ("joiner", "Ann", False, "192.0.2.2:7002"),
                                       ("joiner", "", True, "[2001:db8::3]:7003")):
        seed = rng.randbytes(32)
        out.append(_Peer(role, seed, Identity.from_seed(seed),
                         DeliveryKeyPair.from_private(rng.randbytes(32)), player, bot, address))
    return out


def _lobbies(peers: list[_Peer], table: bytes) -> list[Lobby]:
    creator, *joiners = peers
    made = [Lobby(creator.identity, creator.delivery.public,
                  Offer(TABLE_NAME, 3, "wikipedia", 1, 4), table=table,
                  address=creator.address, player=creator.player)]
    made += [Lobby(p.identity, p.delivery.public, Offer(TABLE_NAME, 3), address=p.address,
                   creator=creator.identity.public, player=p.player, bot=p.bot)
             for p in joiners]
    return made


class _Net:
    """Delivers every send at once, in order, and records each message the first time."""

    def __init__(self, lobbies: list[Lobby]) -> None:
        self.lobbies = lobbies
        self.seen: list[bytes] = []

    def run(self, sender: Lobby, sends: list[Send], now: float) -> None:
        queue = [(sender, s) for s in sends]
        while queue:
            src, send = queue.pop(0)
            if send.data not in self.seen:
                self.seen.append(send.data)
            for dst in self.lobbies:
                if dst is not src and send.to in (None, dst.name):
                    queue += [(dst, s) for s in dst.receive(src.name, send.data, now)]


def _form(peers: list[_Peer], table: bytes) -> tuple[list[Lobby], list[bytes]]:
    """The lobby run: offer, joins, roster, acceptances, and a ``need`` by a member that
    holds the roster before every acceptance."""
    lobbies = _lobbies(peers, table)
    creator, ann, bot = lobbies
    net = _Net([creator])  # the joiners hear nothing until both joins are in
    net.run(creator, creator.tick(0.0), 0.0)
    net.run(ann, ann.tick(0.0), 0.0)
    net.lobbies = [creator, ann]
    net.run(bot, bot.tick(0.0), 0.0)  # fills the table: the roster and the creator's accept
    net.lobbies = lobbies
    net.run(ann, ann.tick(1.0), 1.0)  # roster, Ann's accept, her need; answers flow
    net.run(bot, bot.tick(1.0), 1.0)
    for lob in lobbies:
        if not lob.formed:
            raise AssertionError(f"lobby vectors: {lob.name} is not formed")
    if len({canonical.encode(lob.config().to_json()) for lob in lobbies}) != 1:
        raise AssertionError("lobby vectors: the members derive different configurations")
    return lobbies, net.seen


def _message(wire: bytes, peers: list[_Peer]) -> dict[str, object]:
    message = lobby.decode_message(wire)
    body = canonical.encode(message.body)
    signer = next(i for i, p in enumerate(peers) if p.identity.public == message.key)
    outer = canonical.decode_object(wire[len(lobby.PREFIX):])
    return {"kind": message.kind, "signer": signer, "body": body.decode(),
            "signed_hex": encode(label(lobby.PURPOSE), body).hex(),
            "sig_hex": canonical.b64decode(str(outer["sig"])).hex(),
            "wire": wire.decode()}


def _lobby_part(peers: list[_Peer], table: bytes
                ) -> tuple[dict[str, object], TableConfig, list[bytes]]:
    lobbies, seen = _form(peers, table)
    kinds = [lobby.decode_message(w).kind for w in seen]
    for kind in ("offer", "join", "roster", "accept", "need"):
        if kind not in kinds:
            raise AssertionError(f"lobby vectors: no {kind} message was sent")
    roster = lobbies[0].roster
    assert roster is not None
    config = lobbies[0].config()
    channel_hash = hash32("table-channel", TABLE_NAME.encode())
    return {
        "table_name": TABLE_NAME, "table_name_utf8_hex": TABLE_NAME.encode().hex(),
        "channel_hash_hex": channel_hash.hex(), "channel_hex": channel_id(TABLE_NAME).hex(),
        "channel": canonical.b64encode(channel_id(TABLE_NAME)),
        "table_hex": table.hex(), "messages": [_message(w, peers) for w in seen],
        "roster_digest_hex": roster.digest.hex(), "config": config.to_json(),
        "config_canonical": canonical.encode(config.to_json()).decode(),
    }, config, seen


def _first(seen: list[bytes], kind: str) -> dict[str, Any]:
    return dict(next(m.body for w in seen if (m := lobby.decode_message(w)).kind == kind))


def _bad_signature(identity: Identity, body: dict[str, Any], other: dict[str, Any]) -> bytes:
    """``body`` under ``identity``'s signature over ``other``."""
    sig = identity.sign(lobby.PURPOSE, canonical.encode(other))
    return lobby.PREFIX + canonical.encode({
        "body": body, "key": canonical.b64encode(identity.public.raw),
        "sig": canonical.b64encode(sig)})


def _refusal_cases(peers: list[_Peer], seen: list[bytes]) -> list[tuple[str, int, int, bytes]]:
    """(what is wrong, receiver, sender, wire): receiver 0 is the creator, 1 the joiner
    Ann, both fresh; the sender is the transport's name for a peer (an index)."""
    creator, ann, bot = (p.identity for p in peers)
    offer, join, roster = (_first(seen, kind) for kind in ("offer", "join", "roster"))
    other = lobby.encode_message
    members = roster["members"]
    renamed = [dict(m, player="Anna") if m["identity"] == _b64_key(ann) else m
               for m in members]
    return [
        ("a signature over another body", 0, 1,
         _bad_signature(ann, join, dict(join, address=""))),
        ("a join sent by another peer than its signer", 0, 2, other(ann, join)),
        ("a join for another table name", 0, 1, other(ann, dict(
            join, channel=canonical.b64encode(channel_id(TABLE_NAME + " 2"))))),
        ("a field the kind does not have", 0, 1, other(ann, dict(join, seat=1))),
        ("a display name that is a pronoun", 0, 1, other(ann, dict(join, player="You"))),
        ("a display name with a space at its end", 0, 1, other(ann, dict(join, player="Ann "))),
        ("bot false (absent for a person)", 0, 1, other(ann, dict(join, bot=False))),
        ("a delivery key of low order", 0, 1, other(ann, dict(
            join, delivery=canonical.b64encode(bytes(32))))),
        ("an offer with more seats taken than it has", 1, 0, other(creator, dict(
            offer, taken=4))),
        ("a roster whose members are not in key order", 1, 0, other(creator, dict(
            roster, members=members[::-1]))),
        ("a roster signed by another member than the creator", 1, 2, other(bot, roster)),
        ("a roster that renames the receiver", 1, 0, other(creator, dict(
            roster, members=renamed))),
    ]


def _b64_key(identity: Identity) -> str:
    return canonical.b64encode(identity.public.raw)


def _refused(peers: list[_Peer], seen: list[bytes], table: bytes) -> list[dict[str, object]]:
    """Each case of :func:`_refusal_cases`, refused by a fresh lobby with the reason it
    gives (the lobby's log of each refusal is held back: these are expected)."""
    logger = logging.getLogger(lobby.__name__)
    was, logger.disabled = logger.disabled, True
    try:
        return [_refuse(peers, table, *case) for case in _refusal_cases(peers, seen)]
    finally:
        logger.disabled = was


def _refuse(peers: list[_Peer], table: bytes, case: str, receiver: int, sender: int,
            wire: bytes) -> dict[str, object]:
    lob = _lobbies(peers, table)[receiver]
    if lob.receive(mesh.peer_name(peers[sender].identity.public), wire, 0.0) \
            or lob.refusals != 1:
        raise AssertionError(f"lobby vectors: {case} was not refused")
    return {"case": case, "receiver": receiver, "sender": sender, "wire": wire.decode(),
            "reason": lob.refused[-1]}


def _advert(advert: TableAdvert, signer: Identity) -> dict[str, object]:
    signed = advert.signed(signer)
    txt = signed.to_txt()
    unsigned = {k: v for k, v in txt.items() if k not in ("key", "sig")}
    return {"service_type": SERVICE_TYPE, "instance": signed.instance,
            "service_name": signed.service_name, "txt": txt,
            "signed": canonical.encode(unsigned).decode(),
            "signed_hex": encode(label(ADVERT_PURPOSE), canonical.encode(unsigned)).hex()}


def _adverts(peers: list[_Peer], table: bytes) -> list[dict[str, object]]:
    creator, ann = peers[0].identity, peers[1].identity
    fp = creator.public.fingerprint
    lobby_time = TableAdvert(table, TABLE_NAME, "wikipedia", 1, 1, 3, fp)
    formed = TableAdvert(table, TABLE_NAME, "wikipedia", 1, 3, 3, ann.public.fingerprint,
                         creator=fp)
    return [_advert(lobby_time, creator), _advert(formed, ann)]


def _hello(key: Identity, nonce: bytes, table: bytes, welcome: bytes = b"") -> bytes:
    message: dict[str, object] = {
        "key": canonical.b64encode(key.public.raw), "nonce": canonical.b64encode(nonce),
        "table": canonical.b64encode(table), "type": "mesh-welcome" if welcome else "mesh-hello",
        "v": mesh.HANDSHAKE_VERSION}
    if welcome:
        message["sig"] = canonical.b64encode(welcome)
    return encode_frame(canonical.encode(message))


def _mesh(peers: list[_Peer], config: TableConfig, seen: list[bytes]) -> dict[str, object]:
    table = channel_id(TABLE_NAME)
    connector, acceptor = peers[1].identity, peers[0].identity
    nonce_c = DeterministicRng(SEED + b"/connector").randbytes(mesh.NONCE_SIZE)
    nonce_a = DeterministicRng(ACCEPTOR_SEED).randbytes(mesh.NONCE_SIZE)
    ends = (table, connector.public, acceptor.public, nonce_c, nonce_a)
    as_acceptor = mesh.handshake_transcript(b"acceptor", *ends)
    as_connector = mesh.handshake_transcript(b"connector", *ends)
    auth = {"sig": canonical.b64encode(connector.sign(mesh.HANDSHAKE_PURPOSE, as_connector)),
            "type": "mesh-auth"}
    nonce = DeterministicRng(SEED + b"/genesis-nonce").randbytes(32)
    envelope = Envelope.seal(connector, table=config.table_id, seq=1, prev=ZERO_HASH,
                             kind="commit", body={"commit": canonical.b64encode(
                                 hash32("genesis-commit", nonce)), "hand": 0})
    join = next(w for w in seen if lobby.decode_message(w).kind == "join")
    return {
        "table": canonical.b64encode(table), "connector": 1, "acceptor": 0,
        "nonce_c_hex": nonce_c.hex(), "acceptor_rng_seed_utf8": ACCEPTOR_SEED.decode(),
        "nonce_a_hex": nonce_a.hex(),
        "transcript_acceptor_hex": as_acceptor.hex(),
        "transcript_connector_hex": as_connector.hex(),
        "hello_frame_hex": _hello(connector, nonce_c, table).hex(),
        "welcome_frame_hex": _hello(acceptor, nonce_a, table, acceptor.sign(
            mesh.HANDSHAKE_PURPOSE, as_acceptor)).hex(),
        "auth_frame_hex": encode_frame(canonical.encode(auth)).hex(),
        "genesis_nonce_hex": nonce.hex(), "envelope": envelope.wire.decode(),
        "envelope_frame_hex": encode_frame(b"\x00" + envelope.wire).hex(),
        "lobby_frame_hex": encode_frame(b"\x00" + join).hex(),
        "keepalive_frame_hex": encode_frame(b"\x01").hex(),
        "refused_hellos": _refused_hellos(peers),
    }


def _hello_cases(peers: list[_Peer]) -> list[tuple[str, bool, bytes]]:
    """(what is wrong, whether only the members are admitted, payload) of hellos an
    acceptor refuses."""
    hello = canonical.decode_object(_hello(peers[1].identity, bytes(32), channel_id(
        TABLE_NAME))[4:])
    stranger = Identity.from_seed(DeterministicRng(SEED + b"/stranger").randbytes(32))

    def variant(**change: object) -> bytes:
        return canonical.encode({k: v for k, v in {**hello, **change}.items()
                                 if v is not None})

    return [
        ("version 2", False, variant(v=2)),
        ("another channel", False, variant(table=canonical.b64encode(channel_id(
            TABLE_NAME + " 2")))),
        ("a welcome where a hello is due", False, variant(type="mesh-welcome")),
        ("a field too many", False, variant(seat=1)),
        ("no nonce", False, variant(nonce=None)),
        ("a nonce of 31 bytes", False, variant(nonce=canonical.b64encode(bytes(31)))),
        ("the identity point as key", False, variant(key=canonical.b64encode(
            bytes([1]) + bytes(31)))),
        ("not canonical JSON", False, canonical.encode(hello).replace(b",", b", ", 1)),
        ("a key outside a formed table", True, variant(key=canonical.b64encode(
            stranger.public.raw))),
        ("a payload over 1,024 bytes", False, variant(pad="x" * 900)),
    ]


def _admit(members: set[bytes] | None) -> Callable[[PublicKey], bool]:
    """Whom an acceptor admits: anybody (``None``, a lobby) or the members."""
    return lambda key: members is None or key.raw in members


def _refused_hellos(peers: list[_Peer]) -> list[dict[str, object]]:
    members = {p.identity.public.raw for p in peers}
    out = []
    for case, formed, payload in _hello_cases(peers):
        try:
            mesh.check_hello(mesh.decode_handshake(payload, "mesh-hello", mesh.HELLO_FIELDS),
                             channel_id(TABLE_NAME), _admit(members if formed else None))
        except RemoteProtocolError as exc:
            out.append({"case": case, "members_only": formed, "payload": payload.decode(),
                        "reason": exc.reason})
        else:
            raise AssertionError(f"lobby vectors: a hello with {case} was not refused")
    return out


def _sync(peers: list[_Peer], config: TableConfig) -> dict[str, object]:
    member = peers[1].identity
    sync = gapfill.encode_sync((1, 0, 0))
    signed = guard.signed_sync(member, config.table_id, STAMP, sync)
    return {"member": 1, "table_hex": config.table_id.hex(), "sync": sync.decode(),
            "stamp": STAMP,
            "transcript_hex": encode(b"sync/v1", config.table_id, member.public.raw,
                                     STAMP.to_bytes(8, "big"), sync).hex(),
            "signed_sync_hex": signed.hex()}


def _mqtt(peers: list[_Peer]) -> dict[str, object]:
    prefix = mqtt.topic_prefix(channel_id(TABLE_NAME))
    author, to = (mesh.peer_name(p.identity.public) for p in peers[1::-1])
    return {"prefix": prefix, "broadcast": f"{prefix}/all/{author}",
            "direct": f"{prefix}/to/{to}/{author}", "presence": f"{prefix}/presence/{author}",
            "subscriptions": [f"{prefix}/all/+", f"{prefix}/to/{author}/+",
                              f"{prefix}/presence/+"],
            "online": mqtt.ONLINE.decode(), "offline": mqtt.OFFLINE.decode(),
            "max_packet": mqtt.MAX_PACKET}


def generate() -> dict[str, Any]:
    """The whole vector document (deterministic)."""
    peers = _peers()
    table = DeterministicRng(SEED + b"/table").randbytes(lobby.TABLE_ID_SIZE)
    formed, config, seen = _lobby_part(peers, table)
    return {
        "about": "docs/protocol.md Part III (III.9); made by python -m p2pkille.vectors",
        "seed_utf8": SEED.decode(),
        "labels": {purpose: label(purpose).decode() for purpose in sorted(LABELS)},
        "peers": [p.to_json() for p in peers],
        "lobby": formed, "refused": _refused(peers, seen, table),
        "adverts": _adverts(peers, table),
        "mesh": _mesh(peers, config, seen), "sync": _sync(peers, config),
        "mqtt": _mqtt(peers),
    }
