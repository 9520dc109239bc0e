"""docs/protocol.md Part II names everything the table's code uses: every envelope kind and
body field (II.2), every entry field, every fact type and field, every label Part II hashes
with, every purpose of a node's secrets (II.9) and every stage, as the Part I labels test
does for Part I. Part III does the same for p2pkille/net: every lobby kind and field, roster
member field, handshake message and field, TXT key, label, prefix, topic, frame kind and
limit. The code is read through its public names (and, for labels and secret
purposes, its source text under p2pkille/runtime and p2pkille/engine), so it holds however
those modules are split."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from p2pkille.engine.facts import FACT_TYPES
from p2pkille.net import discovery, guard, lobby, mesh, mqtt, peer
from p2pkille.net.framing import MAX_FRAME
from p2pkille.runtime import messages as msg
from p2pkille.runtime.faults import FaultKind
from p2pkille.runtime.node import Stage
from protocol import canonical
from protocol.errors import InvalidEncoding

ROOT = Path(__file__).resolve().parents[2]
# The table protocol's code: the runtime and the rules engine (the lobby and the
# transports of p2pkille/net carry its bytes and are not part of it).
SOURCES = ("p2pkille/runtime", "p2pkille/engine")


@functools.cache
def _spec() -> str:
    return (ROOT / "docs" / "protocol.md").read_text("utf-8")


def _section(start: str, end: str) -> str:
    spec = _spec()
    assert spec.count(start) == 1, start
    return spec.split(start, 1)[1].split(end, 1)[0]


def _rows(text: str) -> list[list[str]]:
    """The cells of every table row in ``text`` (header and rule lines included)."""
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _source() -> str:
    return "\n".join(path.read_text("utf-8") for folder in SOURCES
                     for path in sorted((ROOT / folder).rglob("*.py")))


def _body_table() -> dict[str, set[str]]:
    """II.2's first table: kind -> the body fields it lists."""
    table = _section("## II.2 Envelopes and facts", "Entries of the lists:")
    fields: dict[str, set[str]] = {}
    for cells in _rows(table):
        kinds = _names(cells[0])
        if len(cells) < 4 or len(kinds) != 1:
            continue
        fields.setdefault(kinds[0], set()).update(_names(cells[1]))
    return fields


def test_every_envelope_kind_and_body_field_is_in_the_table() -> None:
    listed = _body_table()
    assert set(listed) == set(msg.KINDS)
    for kind, (need, may) in msg.FIELDS.items():
        assert listed[kind] - {"hand"} == (need | may) - {"hand"}, kind


def test_every_kind_says_who_sends_it_and_when() -> None:
    table = _section("Who sends each kind, and when", "The mode decides the rest")
    listed = {name for cells in _rows(table) for name in _names(cells[0])}
    assert listed == set(msg.KINDS)


def _entry_table() -> dict[str, set[str]]:
    table = _section("Entries of the lists:", "Who sends each kind, and when")
    fields: dict[str, set[str]] = {}
    for cells in _rows(table)[2:]:
        fields.setdefault(cells[0], set()).update(_names(cells[1]))
    return fields


# A plausible value per entry field, to build entries from the document's field lists.
_VALUES: dict[str, object] = {
    "by": 0, "for": 1, "token": 0, "accused": 0, "kind": "audit", "reason": "why",
    "share": canonical.b64encode(bytes(96)), "key": canonical.b64encode(bytes(32)),
    "box": canonical.b64encode(bytes(144)), "digest": canonical.b64encode(bytes(32)),
    "evidence": canonical.b64encode(b"evidence"),
}
# Each entry of the table, the body field that holds a list of it, and its parser.
_PARSERS = {
    "share entry": ("shares", msg.get_shares),
    "box entry": ("boxes", msg.get_boxes),
    "accusation entry": ("accusations", msg.get_accusations),
    "disclosed entry": ("disclosed", msg.get_disclosed),
    "opened entry": ("opened", msg.get_opened),
    "part entry": ("parts", msg.get_parts),
}


def _parses(entry: str, fields: set[str]) -> bool:
    key, parse = _PARSERS[entry]
    try:
        parse({key: [{f: _VALUES.get(f, 0) for f in fields}]}, b"")
    except InvalidEncoding:
        return False
    return True


@pytest.mark.parametrize("entry", sorted(_PARSERS))
def test_every_entry_is_exactly_the_fields_the_table_lists(entry: str) -> None:
    listed = _entry_table()[entry]
    optional = {name for cells in _rows(_section("Entries of the lists:", "Who sends"))
                if cells[0] == entry and "optional" in cells[3] for name in _names(cells[1])}
    # The table's fields parse, with or without the optional ones; without any other
    # one, or with a field it does not list, the code refuses the entry.
    assert _parses(entry, listed)
    assert _parses(entry, listed - optional)
    for field in listed - optional:
        assert not _parses(entry, listed - {field}), (entry, field)
    assert not _parses(entry, listed | {"x"})


def test_the_entry_encoders_write_the_fields_the_table_lists() -> None:
    listed = _entry_table()
    assert set(msg.ShareEntry(0, None, bytes(96)).to_json()) == listed["share entry"]
    assert set(msg.BoxEntry(0, 0, None, b"x", bytes(32)).to_json()) == listed["box entry"]
    assert set(msg.Accusation(0, "audit", "", b"x").to_json()) == listed["accusation entry"]


def test_every_field_inside_the_vector_bodies_is_in_a_table() -> None:
    doc = json.loads((ROOT / "protocol" / "vectors" / "table.json").read_text("utf-8"))
    documented = set().union(*_entry_table().values())
    seen: set[str] = set()
    for game in doc["games"]:
        for wire in game["envelopes"]:
            body = canonical.decode_object(wire.encode())["body"]
            assert isinstance(body, dict)
            for value in body.values():
                if isinstance(value, list):
                    seen.update(k for item in value if isinstance(item, dict) for k in item)
    assert seen
    assert seen <= documented, seen - documented


def test_every_fact_type_and_field_is_in_the_fact_table() -> None:
    table = _section("**Facts.**", "**The fact count**")
    listed = {}
    for cells in _rows(table):
        names = _names(cells[0])
        if len(cells) == 4 and len(names) == 1 and names[0] != "type":
            listed[names[0]] = set(_names(cells[1]))
    assert set(listed) == {cls.TYPE for cls in FACT_TYPES}
    for cls in FACT_TYPES:
        fields = set(cls.__slots__)
        # A field named in the table's prose column: only the fact's own fields count.
        assert fields <= listed[cls.TYPE], cls.TYPE
    doc = json.loads((ROOT / "protocol" / "vectors" / "table.json").read_text("utf-8"))
    assert {f["type"] for f in doc["facts"]} == set(listed)


def test_every_label_the_table_code_uses_is_in_a_label_table() -> None:
    used = set(re.findall(r'(?:hash32|hash64|from_hash|label)\(\s*"([a-z0-9-]+)"', _source()))
    assert {"genesis-commit", "table-seed", "table-genesis", "table-state", "runtime-secret",
            "hand-key"} <= used, used
    part_two = _section("Labels Part II adds", "## II.1 ")
    listed = {name for cells in _rows(part_two)[2:] for name in _names(cells[0])}
    assert used <= listed, used - listed
    doc = json.loads((ROOT / "protocol" / "vectors" / "table.json").read_text("utf-8"))
    assert set(doc["labels"]) == listed


def test_every_secret_purpose_is_in_the_secrets_table() -> None:
    source = _source()
    literal = set(re.findall(r'\b(?:rng|secret)\(\s*"([a-z][a-z-]*[a-z])"', source))
    literal |= set(re.findall(r'\bshare\([^()]*"([a-z-]+)"\)', source))
    assert {"genesis-nonce", "hand-key", "key-proof", "shuffle", "open", "draw"} <= literal
    # Composed purposes: the deal's per slot, its seal's, and a claim's per purpose.
    assert 'f"deal-{' in source
    assert '"seal-" + ' in source
    assert '"pet-" + ' in source
    table = _section("## II.9 Secrets", "## II.10 ")
    listed = {name for cells in _rows(table)[2:] for name in _names(cells[0])}
    expected = literal | {"deal-j", "seal-deal-j", "pet-answer", "pet-disclose"}
    assert expected <= listed, expected - listed


@pytest.mark.parametrize("stage", list(Stage))
def test_every_stage_value_is_in_the_document(stage: Stage) -> None:
    stages = _section("**Stages.**", "Vector: `stages`")
    assert f"`{stage.name.lower()}` {int(stage)}" in stages


def test_every_fault_kind_is_named_in_the_document() -> None:
    for kind in FaultKind:
        assert f"`{kind.value}`" in _spec(), kind


# -- Part III: finding and joining a table (p2pkille/net) ----------------------------------

NET = ROOT / "p2pkille" / "net"


def _net_source() -> str:
    return "\n".join(path.read_text("utf-8") for path in sorted(NET.glob("*.py")))


def _field_table(start: str, end: str) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """A table of rows ``| kind | field | type | value |``: kind -> fields, and kind ->
    the fields whose value says ``optional``."""
    fields: dict[str, set[str]] = {}
    optional: dict[str, set[str]] = {}
    for cells in _rows(_section(start, end)):
        kinds, names = _names(cells[0]), _names(cells[1]) if len(cells) > 1 else []
        if len(cells) != 4 or len(kinds) != 1 or len(names) != 1:
            continue
        fields.setdefault(kinds[0], set()).update(names)
        if cells[3].startswith("optional"):
            optional.setdefault(kinds[0], set()).update(names)
    return fields, optional


def test_every_lobby_kind_and_body_field_is_in_the_lobby_table() -> None:
    listed, optional = _field_table("## III.5 The lobby", "(Every kind also has `type`")
    assert set(listed) == set(lobby._KINDS)
    for kind, fields in lobby._KINDS.items():
        assert listed[kind] | {"type"} == set(fields) | set(lobby._OPTIONAL[kind]), kind
        assert optional.get(kind, set()) == set(lobby._OPTIONAL[kind]), kind


def test_every_roster_member_field_is_in_the_member_table() -> None:
    table = _section("A **member entry**", "**Display names.**")
    rows = [cells for cells in _rows(table)[2:] if len(cells) == 3]
    assert {name for cells in rows for name in _names(cells[0])} == \
        set(lobby._MEMBER) | set(lobby._MEMBER_OPTIONAL)
    assert {name for cells in rows if cells[2].startswith("optional")
            for name in _names(cells[0])} == set(lobby._MEMBER_OPTIONAL)


def test_every_handshake_message_and_field_is_in_the_handshake_table() -> None:
    listed, _ = _field_table("**Handshake.**", "where the transcript is")
    assert listed == {"mesh-hello": set(mesh.HELLO_FIELDS),
                      "mesh-welcome": set(mesh.WELCOME_FIELDS),
                      "mesh-auth": set(mesh.AUTH_FIELDS)}
    kinds = set(re.findall(r'"type": "(mesh-[a-z]+)"', (NET / "mesh.py").read_text("utf-8")))
    assert kinds == set(listed)


def test_every_txt_key_is_in_the_txt_table() -> None:
    table = _section("- **TXT record**", "`A` is the canonical JSON")
    listed = [name for cells in _rows(table)[2:] for name in _names(cells[0])]
    assert listed == list(discovery._KEYS)
    assert f"`{discovery.SERVICE_TYPE}`" in table or discovery.SERVICE_TYPE in _spec()


def test_every_label_and_tag_the_net_code_uses_is_in_part_three() -> None:
    source = _net_source()
    used = set(re.findall(r'(?:hash32|hash64)\(\s*"([a-z0-9-]+)"', source))
    used |= set(re.findall(r'^\w*PURPOSE: Final = "([a-z0-9-]+)"', source, re.M))
    assert {"table-channel", "table-roster", "table-lobby", "table-advert",
            "mesh-handshake", "transport-sync"} <= used, used
    table = _section("Labels Part III adds", "## III.1 ")
    listed = {name for cells in _rows(table)[2:] for name in _names(cells[0])}
    assert used == listed, used ^ listed
    doc = json.loads((ROOT / "protocol" / "vectors" / "lobby.json").read_text("utf-8"))
    assert set(doc["labels"]) == listed
    tags = set(re.findall(r'encode\(b"([a-z]+/v[0-9]+)"', source))
    assert tags == {"mesh/v1", "sync/v1"}
    for tag in tags:
        assert f'`b"{tag}"`' in _section("Labels Part III adds", "## III.1 "), tag


def test_every_prefix_topic_and_frame_kind_is_in_part_three() -> None:
    part = _section("# Part III: finding and joining a table", "## III.10 Vectors")
    for prefix in (lobby.PREFIX, guard.PREFIX):
        text = prefix.decode().replace("\n", "\\n")  # as the document writes it
        assert f"`{text}`" in part, prefix
    head = mqtt.topic_prefix(b"\xff").removesuffix(canonical.b64encode(b"\xff"))
    assert f'P = "{head}" || b64(channel)' in part
    source = (NET / "mqtt.py").read_text("utf-8")
    levels = set(re.findall(r'f"\{(?:self\.)?prefix\}/([a-z]+)/', source))
    assert levels == {"all", "to", "presence"}
    for level in levels:
        assert f"`P/{level}/" in part, level
    for payload in (mqtt.ONLINE, mqtt.OFFLINE):
        assert f"`{payload.decode()}`" in part
    for kind in (mesh._DATA, mesh._KEEPALIVE):
        assert f"`0x{kind.hex()}`" in part


@pytest.mark.parametrize(("what", "value"), [
    ("MAX_PAYLOAD", mqtt.MAX_PAYLOAD), ("MAX_PACKET", mqtt.MAX_PACKET),
    ("MAX_MESSAGE", lobby.MAX_MESSAGE), ("MAX_HANDSHAKE_FRAME", mesh.MAX_HANDSHAKE_FRAME),
    ("MAX_FRAME + 1", MAX_FRAME + 1), ("MAX_SEATS", lobby.MAX_SEATS),
    ("MAX_PLAYER_NAME", lobby.MAX_PLAYER_NAME), ("MAX_OFFERS", lobby.MAX_OFFERS),
    ("MAX_PENDING", lobby.MAX_PENDING), ("MAX_SIGHTINGS", discovery.MAX_SIGHTINGS),
    ("MAX_RESOLVING", discovery.MAX_RESOLVING), ("DIAL_ATTEMPTS", peer.DIAL_ATTEMPTS),
    ("REPLAY_WINDOW (s)", guard.REPLAY_WINDOW // 10**9),
])
def test_every_limit_of_the_net_code_is_in_the_limits_table(what: str, value: int) -> None:
    limits = _section("## III.8 Limits", "## III.9 ")
    assert re.search(rf"(?<![0-9,]){value:,}(?![0-9,])", limits), (what, value)
