"""Who the player is, from one game to the next, and the names it has met.

A :class:`Profile` is the player's key and display name, kept in ``identity.json`` in the
user's configuration directory as :mod:`platformdirs` finds it on each system (on Linux
``$XDG_CONFIG_HOME/p2pkille``, by default ``~/.config/p2pkille``), or in another file the
player names (``p2pkille play --identity FILE``). :func:`open_profile` creates it on first
use; the file holds the key's secret seed, so it is made readable by its owner only (mode
0600, its default directory 0700), and a file that others may read, or that is not an
identity, is refused with a one-line :class:`IdentityError` rather than used or replaced.

:class:`KnownPlayers` remembers, beside the identity (``known-players.json`` in the same
directory), the name each key played under: trust on first use. :meth:`KnownPlayers.check`
says when a name known for one key comes with another key (somebody may be taking a
friend's name) and when a known key comes under a new name; bots are never remembered
(their keys are new every game), but a bot under a known person's name is reported too.
The store is bounded (:data:`MAX_KNOWN` keys, the least recently met dropped first); a file
that does not parse is left alone (reported in :attr:`KnownPlayers.problem`) and nothing is
remembered that session.

Files are replaced whole (written to a temporary file in the same directory, flushed to
disk, then renamed over the old one), so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import contextlib
import datetime
import enum
import getpass
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import platformdirs

from p2pkille.net.lobby import player_name_problem
from protocol.identity import Identity, PublicKey, fingerprint

__all__ = ["IDENTITY_FILE", "KNOWN_FILE", "MAX_KNOWN", "Clash", "IdentityError",
           "KnownPlayers", "Met", "Profile", "Seated", "config_dir", "default_name",
           "display_names", "open_profile"]

APP: Final = "p2pkille"
IDENTITY_FILE: Final = "identity.json"
KNOWN_FILE: Final = "known-players.json"
IDENTITY_FORMAT: Final = "p2pkille identity"
KNOWN_FORMAT: Final = "p2pkille known players"
VERSION: Final = 1
MAX_KNOWN: Final = 2000
"""Keys remembered; beyond them the least recently met is forgotten."""
MAX_FILE: Final = 1 << 20
"""Bytes read of either file (a known-players file of MAX_KNOWN keys is about 300 KB)."""
FALLBACK_NAME: Final = "Player"


class IdentityError(Exception):
    """An identity file that cannot be used; the message is one line naming the file."""


def config_dir() -> Path:
    """The user's configuration directory of p2pkille (not created here)."""
    return platformdirs.user_config_path(APP, appauthor=False)


def default_name() -> str:
    """A first name for a new identity: the login name if it makes a valid display name,
    else ``Player``."""
    with contextlib.suppress(Exception):  # getpass raises several kinds without a user
        login = getpass.getuser()
        if not player_name_problem(login):
            return login
    return FALLBACK_NAME


@dataclass(frozen=True, slots=True)
class Profile:
    """The player's identity and display name, and the file they are kept in."""

    identity: Identity
    name: str
    path: Path
    created: bool = False
    """Made by this :func:`open_profile` (the first use)."""
    renamed_from: str | None = None
    """The name the file held before this :func:`open_profile` changed it."""

    @property
    def fingerprint(self) -> str:
        return self.identity.public.fingerprint

    def known_players(self) -> KnownPlayers:
        """The names met so far, kept beside this identity."""
        return KnownPlayers(self.path.parent / KNOWN_FILE, self.identity.public)


def open_profile(path: Path | None = None, name: str | None = None) -> Profile:
    """The identity in ``path`` (default ``identity.json`` in :func:`config_dir`), created
    on first use with a fresh key and ``name`` (default :func:`default_name`). A ``name``
    other than the file's replaces it in the file. Raises :class:`IdentityError` for a
    file that is not an identity, is readable by others, or cannot be written."""
    if name is not None and player_name_problem(name):
        raise IdentityError(f"--name: {player_name_problem(name)}")
    if path is None:
        path = config_dir() / IDENTITY_FILE
        _private_dir(path.parent)
    try:
        raw = _read(path)
    except FileNotFoundError:
        return _create(path, name or default_name())
    identity, stored = _parse(path, raw)
    if name is None or name == stored:
        return Profile(identity, stored, path)
    _write(path, _identity_document(identity, name))
    return Profile(identity, name, path, renamed_from=stored)


def _private_dir(folder: Path) -> None:
    """Our own configuration directory, made (or made again) private to the user."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if os.name == "posix" and folder.stat().st_mode & 0o077:
            folder.chmod(0o700)
    except OSError as exc:
        raise IdentityError(f"cannot make the directory {str(folder)!r}: "
                            f"{exc.strerror or exc}") from None


def _read(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            if os.name == "posix":
                mode = os.fstat(f.fileno()).st_mode
                if not stat.S_ISREG(mode):
                    raise IdentityError(f"{str(path)!r} is not a regular file")
                if mode & 0o077:
                    raise IdentityError(
                        f"the identity file {str(path)!r} may be read by other users (mode "
                        f"{stat.S_IMODE(mode):04o}); it holds your secret key: run chmod 600 "
                        "on it")
            data = f.read(MAX_FILE + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise IdentityError(f"cannot read the identity file {str(path)!r}: "
                            f"{exc.strerror or exc}") from None
    if len(data) > MAX_FILE:
        raise IdentityError(f"{str(path)!r} is too large to be an identity file")
    return data


def _parse(path: Path, raw: bytes) -> tuple[Identity, str]:
    def bad(why: str) -> IdentityError:
        return IdentityError(f"the identity file {str(path)!r} is damaged or not an identity "
                             f"({why}); move it away to make a new identity, or give another "
                             "with --identity")

    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        text = raw.strip()
        if len(text) == 64 and all(c in b"0123456789abcdefABCDEF" for c in text):
            raise bad("it holds a bare key, as `p2pkille peer --key` keeps one") from None
        raise bad("not JSON") from None
    if not isinstance(doc, dict) or doc.get("format") != IDENTITY_FORMAT:
        raise bad(f"no \"format\": \"{IDENTITY_FORMAT}\"")
    if doc.get("version") != VERSION:
        raise bad(f"version {doc.get('version')!r:.20}, this program reads {VERSION}")
    if set(doc) != {"format", "version", "key", "name"}:
        raise bad(f"fields {sorted(doc)!r:.80}")
    key, name = doc["key"], doc["name"]
    try:
        seed = bytes.fromhex(key) if isinstance(key, str) else b""
    except ValueError:
        seed = b""
    if len(seed) != 32:
        raise bad("the key is not 64 hex digits")
    problem = player_name_problem(name)
    if problem:
        raise bad(f"the name: {problem}")
    assert isinstance(name, str)
    return Identity.from_seed(seed), name


def _identity_document(identity: Identity, name: str) -> bytes:
    return _document({"format": IDENTITY_FORMAT, "version": VERSION,
                      "key": identity.private_bytes().hex(), "name": name})


def _document(doc: object) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()


def _create(path: Path, name: str) -> Profile:
    """Write a new identity at ``path`` whole or not at all: a complete temporary file is
    linked to the name, which fails if another process made one first (then that one is
    used), so a crash never leaves a torn identity file."""
    identity = Identity.from_seed(secrets.token_bytes(32))
    try:
        _put(path, _identity_document(identity, name), os.link)
    except FileExistsError:
        # Another process made it just now: use that one.
        identity, stored = _parse(path, _read(path))
        return Profile(identity, stored, path)
    except OSError as exc:
        raise IdentityError(f"cannot create the identity file {str(path)!r}: "
                            f"{exc.strerror or exc}") from None
    return Profile(identity, name, path, created=True)


def _write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (mode 0600) in one step."""
    try:
        _put(path, data, os.replace)
    except OSError as exc:
        raise IdentityError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _put(path: Path, data: bytes, place: Callable[[Path, Path], None]) -> None:
    """Write ``data`` (mode 0600) to a temporary file beside ``path``, synced, then
    ``place(temp, path)`` (link: only if absent; replace) and sync the folder."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        place(temp, path)
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
    _sync_dir(path.parent)


def _sync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ---------------------------------------------------------------------- known players


class Clash(enum.Enum):
    """What a name met at a table says against what is remembered."""

    NEW_KEY = "new-key"
    """A name known for another key comes with a key never met under it."""
    NEW_NAME = "new-name"
    """A known key comes under another name than before."""
    BOT_NAME = "bot-name"
    """A bot takes the name of a person met before."""


@dataclass(frozen=True, slots=True)
class Met:
    """A name met at a table and what is remembered against it."""

    clash: Clash
    name: str
    fingerprint: str
    known: tuple[str, ...]
    """``NEW_KEY``/``BOT_NAME``: the fingerprints the name is known by; ``NEW_NAME``: the
    name the key had."""


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    first: str
    last: str


class KnownPlayers:
    """The names met, by key, in ``path`` (see the module doc); ``me`` is never kept."""

    def __init__(self, path: Path, me: PublicKey | None = None) -> None:
        self.path = path
        self.me = me
        self.problem: str | None = None
        """Why the file could not be read (nothing is then written over it)."""
        self._entries: dict[str, _Entry] = {}
        self._load()

    def _load(self) -> None:
        try:
            with self.path.open("rb") as f:
                raw = f.read(MAX_FILE + 1)
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problem = f"cannot read {str(self.path)!r}: {exc.strerror or exc}"
            return
        try:
            self._entries = _parse_known(raw)
        except ValueError as exc:
            self.problem = f"{str(self.path)!r} is damaged ({exc}); names are not remembered"

    def __len__(self) -> int:
        return len(self._entries)

    def name_of(self, key: PublicKey) -> str | None:
        entry = self._entries.get(key.raw.hex())
        return None if entry is None else entry.name

    def name_of_fingerprint(self, fingerprint: str) -> str | None:
        """The name remembered for the key with this fingerprint (a listing shows only
        fingerprints)."""
        for key, entry in self._entries.items():
            if _fingerprint(key) == fingerprint:
                return entry.name
        return None

    def keys_named(self, name: str) -> tuple[str, ...]:
        """Fingerprints of the keys met under ``name`` (letter case aside)."""
        folded = name.casefold()
        return tuple(sorted(_fingerprint(k) for k, e in self._entries.items()
                            if e.name.casefold() == folded))

    def check(self, key: PublicKey, name: str, bot: bool = False) -> Met | None:
        """What is wrong with ``name`` coming with ``key``, or ``None`` (known, or new)."""
        if not name or key == self.me:
            return None
        fingerprint = key.fingerprint
        entry = self._entries.get(key.raw.hex())
        if bot:
            others = tuple(fp for fp in self.keys_named(name) if fp != fingerprint)
            return Met(Clash.BOT_NAME, name, fingerprint, others) if others else None
        if entry is not None:
            if entry.name != name:
                return Met(Clash.NEW_NAME, name, fingerprint, (entry.name,))
            return None
        known = self.keys_named(name)
        return Met(Clash.NEW_KEY, name, fingerprint, known) if known else None

    def remember(self, players: Iterable[tuple[PublicKey, str]],
                 today: datetime.date | None = None) -> None:
        """Keep these (key, name) pairs as met today; what other programs wrote since we
        read the file is kept too."""
        if self.problem is not None:
            return
        day = (today or datetime.date.today()).isoformat()
        try:
            with self.path.open("rb") as f:
                self._entries = {**_parse_known(f.read(MAX_FILE + 1)), **self._entries}
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            self.problem = f"{str(self.path)!r} could not be read again ({exc})"
            return
        for key, name in players:
            if not name or key == self.me or player_name_problem(name):
                continue
            old = self._entries.get(key.raw.hex())
            self._entries[key.raw.hex()] = _Entry(name, old.first if old else day, day)
        if len(self._entries) > MAX_KNOWN:
            keep = sorted(self._entries.items(), key=lambda kv: kv[1].last,
                          reverse=True)[:MAX_KNOWN]
            self._entries = dict(keep)
        doc = {"format": KNOWN_FORMAT, "version": VERSION, "players": [
            {"key": key, "name": e.name, "first": e.first, "last": e.last}
            for key, e in sorted(self._entries.items())]}
        try:
            _write(self.path, _document(doc))
        except IdentityError as exc:
            self.problem = str(exc)


def _fingerprint(key_hex: str) -> str:
    # A hash of the stored bytes: no point check (the lobby's listing asks per row and
    # redraw, and a file of MAX_KNOWN keys took seconds each time).
    return fingerprint(bytes.fromhex(key_hex))


def _parse_known(raw: bytes) -> dict[str, _Entry]:
    """The entries of a known-players file; ``ValueError`` saying what is wrong."""
    if len(raw) > MAX_FILE:
        raise ValueError("too large")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    if not isinstance(doc, dict) or doc.get("format") != KNOWN_FORMAT \
            or doc.get("version") != VERSION or not isinstance(doc.get("players"), list):
        raise ValueError(f"not a version {VERSION} known-players file")
    out: dict[str, _Entry] = {}
    for item in doc["players"]:
        if not isinstance(item, dict) or set(item) != {"key", "name", "first", "last"}:
            raise ValueError(f"an entry {str(item)!r:.60}")
        key, name, first, last = item["key"], item["name"], item["first"], item["last"]
        if not isinstance(key, str) or len(key) != 64 or player_name_problem(name) \
                or not all(isinstance(d, str) and len(d) <= 10 for d in (first, last)):
            raise ValueError(f"an entry {str(item)!r:.60}")
        # Only compared with keys met, never used to check a signature: 32 bytes in
        # lowercase hex is all an entry needs (a point check per key made a large file
        # slow to load).
        if key != key.lower() or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"the key {key!r:.70}")
        out[key] = _Entry(name, first, last)
    return out


# ---------------------------------------------------------------------- who sits where


@dataclass(frozen=True, slots=True)
class Seated:
    """A member of a table as its screens show it: its key, the name it signed in the
    lobby (``""``: none), whether a program plays it, and what the known players say."""

    key: PublicKey
    name: str = ""
    bot: bool = False
    met: Met | None = None

    @property
    def fingerprint(self) -> str:
        return self.key.fingerprint


def display_names(seated: Sequence[Seated]) -> list[str]:
    """The names the screens call ``seated`` by, in the same order: the signed name, or
    ``peer`` and the fingerprint's start for a member that gave none. Names that two
    members share (letter case aside) get as many of their key's hex digits as tell them
    apart (at least 4), so no two members read alike; at most 16 characters each."""
    base = [s.name or f"peer {s.fingerprint[:6]}" for s in seated]
    out = list(base)
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(base):
        groups.setdefault(name.casefold(), []).append(i)
    for members in groups.values():
        if len(members) < 2:
            continue
        digits = 4
        while digits < 16 and len({seated[i].fingerprint[:digits] for i in members}) \
                < len(members):
            digits += 1
        for i in members:
            tag = f" ({seated[i].fingerprint[:digits]})"
            out[i] = base[i][:max(16 - len(tag), 1)] + tag
    return out
