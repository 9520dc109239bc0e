"""Canonical JSON: one byte string per value, so signatures and hashes are unambiguous.

The canonical form of a value (``docs/protocol.md``, "10.2 Canonical encoding"):

- UTF-8, no byte order mark, no insignificant whitespace (``,`` and ``:`` bare);
- objects with string keys sorted by their code points (the same order as their
  UTF-8 bytes), no duplicate keys;
- integers only, in decimal, no leading zero, no ``-0``, within
  ``[-(2**53 - 1), 2**53 - 1]`` (I-JSON's range, exact in every JSON library);
  no floats, no exponent, no ``NaN``/``Infinity``;
- ``true``, ``false``, ``null``;
- strings escape only ``"``, ``\\`` and the controls U+0000..U+001F (as ``\\b``,
  ``\\t``, ``\\n``, ``\\f``, ``\\r`` or ``\\u00xx`` with lowercase hex); every other
  character is written as itself in UTF-8. Lone surrogates are refused. Strings are
  NOT Unicode-normalised: NFC depends on the Unicode version of each
  implementation, which would make validity differ between peers; since the
  received bytes must already be canonical (below), no normalisation is needed
  for signatures to be unambiguous. Applications that compare names should
  normalise them before encoding;
- bytes travel as strings in base64url without padding (RFC 4648 section 5),
  canonical (unused trailing bits zero); the schema of each message says which
  fields are bytes.

The decoder is strict: it requires the received bytes to BE the canonical
encoding of what they decode to (decode, re-encode, compare). We chose that over
"verify the signature over a re-encoding" so that every accepted message has
exactly one byte form: a relay cannot make a second, differently hashed copy of a
signed message, duplicate detection by bytes is exact, and the bytes we store as
evidence are the bytes that were signed.
"""

from __future__ import annotations

import binascii
import json
import re
from collections.abc import Mapping, Sequence
from typing import Final, TypeAlias, cast

from protocol.errors import InvalidEncoding, LocalProtocolError

JsonValue: TypeAlias = (
    "dict[str, JsonValue] | list[JsonValue] | str | int | bool | None"
)
JsonObject: TypeAlias = "dict[str, JsonValue]"

MAX_SIZE: Final = 65536
"""Default size limit of one encoded message, in bytes."""
MAX_DEPTH: Final = 32
"""Deepest nesting of arrays and objects the decoder accepts."""
MAX_INT: Final = 2**53 - 1
"""Largest magnitude of an integer; larger numbers travel as bytes."""

_MAX_INT_DIGITS: Final = len(str(MAX_INT)) + 1  # room for a minus sign
# base64url to standard base64, and the standard-only "+", "/" and padding "=" to a byte
# outside both alphabets, which strict decoding refuses.
_TO_STD: Final = bytes.maketrans(b"-_+/=", b"+/!!!")
# The last character of a text whose length is 2 or 3 modulo 4 carries 4 or 2 unused
# low bits; canonical text has them zero.
_B64_VALUE: Final = {c: v for v, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}
_SPARE_BITS: Final = {2: 0xF, 3: 0x3}
_TO_URL: Final = bytes.maketrans(b"+/", b"-_")
_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS: Final = re.compile(rb"[\[\]{}]")


class _Reject(Exception):
    """A value that has no canonical form (internal; mapped to the right public error)."""


def encode(value: object) -> bytes:
    """The canonical encoding of a JSON value built by this process.

    Raises :class:`LocalProtocolError` if the value has no canonical form (a float, a
    non-string key, an integer out of range, a lone surrogate, nesting too deep).
    """
    try:
        return _encode(value)
    except _Reject as exc:
        raise LocalProtocolError(f"no canonical encoding: {exc}") from None


def decode(data: bytes, *, max_size: int = MAX_SIZE) -> JsonValue:
    """Decode canonical JSON from a peer; anything else raises :class:`InvalidEncoding`.

    The error's ``evidence`` is ``data`` as received.
    """
    if not isinstance(data, bytes | bytearray):
        raise InvalidEncoding(f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) > max_size:
        raise InvalidEncoding(
            f"message of {len(data)} bytes exceeds the limit of {max_size}", evidence=data
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEncoding(f"not UTF-8: {exc.reason} at byte {exc.start}",
                              evidence=data) from None
    # Counting brackets first skips the scan for nearly every message.
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and (depth := _depth(data)) > MAX_DEPTH:
        raise InvalidEncoding(f"nesting depth {depth} exceeds {MAX_DEPTH}", evidence=data)
    try:
        value = json.loads(
            text,
            object_pairs_hook=_object,
            parse_float=_no_float,
            parse_int=_int,
            parse_constant=_no_constant,
        )
        # The hooks and the depth scan above already refused everything _check would
        # (floats, constants, integers out of range, deep nesting; keys are strings).
        canonical = _dump(value)
    except _Reject as exc:
        raise InvalidEncoding(f"not canonical JSON: {exc}", evidence=data) from None
    except (ValueError, RecursionError) as exc:
        # json.JSONDecodeError is a ValueError; RecursionError cannot happen below
        # MAX_DEPTH but is mapped anyway so peer input never escapes as a crash.
        raise InvalidEncoding(f"not JSON: {exc}", evidence=data) from None
    if canonical != data:
        raise InvalidEncoding("JSON is not in canonical form", evidence=data)
    return cast(JsonValue, value)


def decode_object(data: bytes, *, max_size: int = MAX_SIZE) -> JsonObject:
    """:func:`decode`, and the top level must be an object."""
    value = decode(data, max_size=max_size)
    if not isinstance(value, dict):
        raise InvalidEncoding(f"expected a JSON object, got {_kind(value)}", evidence=data)
    return value


def b64encode(raw: bytes) -> str:
    """Bytes as base64url text without padding."""
    return binascii.b2a_base64(raw, newline=False).translate(_TO_URL).rstrip(b"=").decode("ascii")


def b64decode(text: str, *, evidence: bytes = b"") -> bytes:
    """Strict base64url without padding; a non-canonical form raises :class:`InvalidEncoding`."""
    if not isinstance(text, str) or len(text) % 4 == 1:
        raise InvalidEncoding(f"not unpadded base64url: {text!r:.80}", evidence=evidence)
    try:
        std = text.encode("ascii").translate(_TO_STD) + b"=" * (-len(text) % 4)
        raw = binascii.a2b_base64(std, strict_mode=True)
    except (UnicodeEncodeError, binascii.Error, ValueError):
        raise InvalidEncoding(f"not unpadded base64url: {text!r:.80}", evidence=evidence) from None
    spare = _SPARE_BITS.get(len(text) % 4)
    if spare is not None and _B64_VALUE[text[-1]] & spare:
        raise InvalidEncoding(f"non-canonical base64url (trailing bits): {text!r:.80}",
                              evidence=evidence)
    return raw


# Field readers for message schemas: each raises InvalidEncoding naming the field, a
# missing one included (the object comes from a peer, so no KeyError may escape).


def _field(obj: Mapping[str, object], key: str, what: str, evidence: bytes) -> object:
    try:
        return obj[key]
    except KeyError:
        raise InvalidEncoding(f"{what}.{key}: missing", evidence=evidence) from None


def require_keys(obj: Mapping[str, object], keys: Sequence[str], *, what: str,
                 evidence: bytes = b"") -> None:
    """The object has exactly ``keys``: none missing, none extra."""
    have = set(obj)
    want = set(keys)
    if have != want:
        missing = sorted(want - have)
        extra = sorted(have - want)
        raise InvalidEncoding(f"{what}: missing fields {missing}, unexpected fields {extra}",
                              evidence=evidence)


def get_int(obj: Mapping[str, object], key: str, *, lo: int, hi: int, what: str,
            evidence: bytes = b"") -> int:
    value = _field(obj, key, what, evidence)
    # bool is an int subclass in Python; JSON true is not a number.
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InvalidEncoding(f"{what}.{key}: expected an integer in [{lo}, {hi}], "
                              f"got {value!r:.40}", evidence=evidence)
    return value


def get_str(obj: Mapping[str, object], key: str, *, what: str, pattern: re.Pattern[str],
            evidence: bytes = b"") -> str:
    value = _field(obj, key, what, evidence)
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise InvalidEncoding(f"{what}.{key}: expected a string matching {pattern.pattern}, "
                              f"got {value!r:.40}", evidence=evidence)
    return value


def get_bytes(obj: Mapping[str, object], key: str, *, what: str, size: int | None = None,
              min_size: int = 0, max_size: int | None = None, evidence: bytes = b"") -> bytes:
    value = _field(obj, key, what, evidence)
    if not isinstance(value, str):
        raise InvalidEncoding(f"{what}.{key}: expected base64url text, got {_kind(value)}",
                              evidence=evidence)
    raw = b64decode(value, evidence=evidence)
    lo, hi = (size, size) if size is not None else (min_size, max_size)
    if len(raw) < lo or (hi is not None and len(raw) > hi):
        raise InvalidEncoding(f"{what}.{key}: {len(raw)} bytes, expected "
                              f"{lo if lo == hi else f'{lo}..{hi}'}", evidence=evidence)
    return raw


def get_object(obj: Mapping[str, object], key: str, *, what: str,
               evidence: bytes = b"") -> JsonObject:
    value = _field(obj, key, what, evidence)
    if not isinstance(value, dict):
        raise InvalidEncoding(f"{what}.{key}: expected an object, got {_kind(value)}",
                              evidence=evidence)
    return cast(JsonObject, value)


def get_list(obj: Mapping[str, object], key: str, *, what: str,
             evidence: bytes = b"") -> list[JsonValue]:
    value = _field(obj, key, what, evidence)
    if not isinstance(value, list):
        raise InvalidEncoding(f"{what}.{key}: expected an array, got {_kind(value)}",
                              evidence=evidence)
    return cast(list[JsonValue], value)


def _kind(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "an integer", type(None): "null"}.get(type(value), type(value).__name__)


def _encode(value: object) -> bytes:
    _check(value, 0)
    return _dump(value)


def _dump(value: object) -> bytes:
    # With the tree checked, the C encoder yields exactly the canonical form:
    # sort_keys orders by code point, ensure_ascii=False escapes only '"', '\\' and
    # U+0000..U+001F (short forms, else lowercase \u00xx), separators drop spaces.
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                      allow_nan=False, check_circular=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Reject("a string holds a lone surrogate") from None


def _check(value: object, depth: int) -> None:
    if value is None or value is True or value is False or type(value) is str:
        return
    if isinstance(value, int):
        if not -MAX_INT <= value <= MAX_INT:
            raise _Reject(f"integer {value} outside +-(2**53 - 1)")
        return
    if isinstance(value, dict | list | tuple):
        if depth >= MAX_DEPTH:
            raise _Reject(f"nesting deeper than {MAX_DEPTH}")
        if isinstance(value, dict):
            for key, item in value.items():
                if type(key) is not str:
                    raise _Reject("an object key is not a string")
                _check(item, depth + 1)
        else:
            for item in value:
                _check(item, depth + 1)
        return
    raise _Reject(f"{type(value).__name__} is not a canonical JSON type")


def _depth(data: bytes) -> int:
    """Deepest bracket nesting outside strings, found without recursion."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(_STRING.sub(b"", data)):
        if match.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise _Reject(f"duplicate key {key!r:.40}")
        result[key] = value
    return result


def _int(text: str) -> int:
    if len(text) > _MAX_INT_DIGITS:
        raise _Reject(f"integer of {len(text)} digits")
    value = int(text)
    if not -MAX_INT <= value <= MAX_INT:
        raise _Reject(f"integer {value} outside +-(2**53 - 1)")
    return value


def _no_float(text: str) -> object:
    raise _Reject(f"number {text[:40]!r} is not an integer")


def _no_constant(text: str) -> object:
    raise _Reject(f"{text} is not JSON")
