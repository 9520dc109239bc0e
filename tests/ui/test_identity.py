"""The player's persistent identity and the names it remembers (p2pkille.ui.identity)."""

from __future__ import annotations

import datetime
import json
import stat
from pathlib import Path

import pytest

from p2pkille.ui import identity as store
from p2pkille.ui.identity import (
    Clash,
    IdentityError,
    KnownPlayers,
    config_dir,
    open_profile,
)
from protocol.identity import Identity


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configuration directory of the test's own (platformdirs reads XDG_CONFIG_HOME)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "p2pkille"


def key(i: int) -> Identity:
    return Identity.from_seed(bytes([0x30 + i]) * 32)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_first_use_makes_a_private_identity_that_later_uses_read_back(home: Path) -> None:
    assert config_dir() == home
    first = open_profile(name="Kalle")
    assert first.created
    assert first.path == home / "identity.json"
    assert mode(home) == 0o700
    assert mode(first.path) == 0o600
    doc = json.loads(first.path.read_text())
    assert doc["format"] == "p2pkille identity"
    assert doc["name"] == "Kalle"
    again = open_profile()
    assert not again.created
    assert again.identity.public == first.identity.public
    assert again.name == "Kalle"
    assert again.renamed_from is None


def test_a_new_identity_without_a_name_takes_the_login_name(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("getpass.getuser", lambda: "kalle")
    assert open_profile().name == "kalle"
    (home / "identity.json").unlink()
    monkeypatch.setattr("getpass.getuser", lambda: "x\x07")  # not a display name
    assert open_profile().name == "Player"


def test_a_name_given_replaces_the_kept_one(home: Path) -> None:
    first = open_profile(name="Kalle")
    renamed = open_profile(name="Karl")
    assert renamed.renamed_from == "Kalle"
    assert renamed.identity.public == first.identity.public
    assert open_profile().name == "Karl"
    assert mode(first.path) == 0o600
    assert [p.name for p in home.iterdir()] == ["identity.json"]  # no temporary file left
    with pytest.raises(IdentityError, match=r"--name: .*control or format character"):
        open_profile(name="Bad\x1b")
    assert open_profile().name == "Karl"


def test_a_loose_configuration_directory_is_made_private(home: Path) -> None:
    home.mkdir(parents=True, mode=0o755)
    home.chmod(0o755)
    open_profile(name="Kalle")
    assert mode(home) == 0o700


@pytest.mark.parametrize(("content", "why"), [
    (b"", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    (b"ab" * 32 + b"\n", "bare key, as `p2pkille peer --key` keeps one"),
    (b"[]", 'no "format": "p2pkille identity"'),
    (b'{"format": "p2pkille identity", "version": 2, "key": "", "name": "x"}',
     "version 2, this program reads 1"),
    (b'{"format": "p2pkille identity", "version": 1, "key": "zz", "name": "x"}',
     "the key is not 64 hex digits"),
    (b'{"format": "p2pkille identity", "version": 1, "key": "' + b"00" * 32
     + b'", "name": "a\\u0007"}', "the name: .*U\\+0007"),
    (b'{"format": "p2pkille identity", "version": 1, "key": "' + b"00" * 32
     + b'", "name": "x", "extra": 1}', "fields"),
])
def test_a_damaged_identity_is_a_clear_error_and_is_left_alone(
        home: Path, content: bytes, why: str) -> None:
    home.mkdir(parents=True, mode=0o700)
    path = home / "identity.json"
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(IdentityError, match=why) as caught:
        open_profile(name="Kalle")
    message = str(caught.value)
    assert str(path) in message
    assert "move it away to make a new identity" in message
    assert "\n" not in message
    assert path.read_bytes() == content


def test_an_identity_others_may_read_is_refused(home: Path) -> None:
    profile = open_profile(name="Kalle")
    profile.path.chmod(0o644)
    with pytest.raises(IdentityError, match=r"may be read by other users \(mode 0644\)"):
        open_profile()


def test_another_identity_file_and_its_own_known_players(tmp_path: Path, home: Path) -> None:
    other = tmp_path / "second" / "me.json"
    with pytest.raises(IdentityError, match="cannot create"):
        open_profile(other, "Lisa")  # its directory does not exist
    other.parent.mkdir()
    lisa = open_profile(other, "Lisa")
    assert lisa.created
    assert mode(other) == 0o600
    assert not home.exists()  # the default identity was not touched
    known = lisa.known_players()
    assert known.path == other.parent / "known-players.json"
    assert open_profile(other).identity.public == lisa.identity.public


def test_trust_on_first_use_warns_of_a_known_name_with_a_new_key_and_the_reverse(
        tmp_path: Path) -> None:
    me = key(0)
    known = KnownPlayers(tmp_path / "known-players.json", me.public)
    kalle, impostor, lisa = key(1), key(2), key(3)
    assert known.check(kalle.public, "Kalle") is None  # nobody is known yet
    known.remember([(kalle.public, "Kalle"), (lisa.public, "Lisa"), (me.public, "Me")],
                   today=datetime.date(2024, 5, 1))
    assert mode(known.path) == 0o600
    assert len(known) == 2  # never ourselves
    again = KnownPlayers(known.path, me.public)
    assert again.name_of(kalle.public) == "Kalle"
    assert again.name_of_fingerprint(lisa.public.fingerprint) == "Lisa"
    assert again.check(kalle.public, "Kalle") is None
    met = again.check(impostor.public, "kalle")  # letter case does not hide it
    assert met is not None
    assert (met.clash, met.name, met.fingerprint, met.known) == (
        Clash.NEW_KEY, "kalle", impostor.public.fingerprint, (kalle.public.fingerprint,))
    renamed = again.check(lisa.public, "Lena")
    assert renamed is not None
    assert (renamed.clash, renamed.known) == (Clash.NEW_NAME, ("Lisa",))
    bot = again.check(impostor.public, "Kalle", bot=True)
    assert bot is not None
    assert bot.clash is Clash.BOT_NAME
    assert again.check(impostor.public, "Anna", bot=True) is None
    # Played with anyway: both keys are Kalle's from now on, and Lisa is Lena.
    again.remember([(impostor.public, "Kalle"), (lisa.public, "Lena")],
                   today=datetime.date(2024, 6, 1))
    third = KnownPlayers(known.path, me.public)
    assert third.check(impostor.public, "Kalle") is None
    assert third.check(kalle.public, "Kalle") is None
    assert third.keys_named("KALLE") == tuple(sorted(
        (kalle.public.fingerprint, impostor.public.fingerprint)))
    entries = {e["name"]: e for e in json.loads(known.path.read_text())["players"]}
    assert (entries["Lena"]["first"], entries["Lena"]["last"]) == ("2024-05-01", "2024-06-01")


def test_what_another_program_remembered_meanwhile_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "known-players.json"
    one, two = KnownPlayers(path), KnownPlayers(path)
    one.remember([(key(1).public, "Kalle")])
    two.remember([(key(2).public, "Lisa")])
    both = KnownPlayers(path)
    assert (both.name_of(key(1).public), both.name_of(key(2).public)) == ("Kalle", "Lisa")


def test_the_known_players_are_bounded_by_the_last_meeting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "MAX_KNOWN", 3)
    known = KnownPlayers(tmp_path / "known-players.json")
    for i in range(5):
        known.remember([(key(i).public, f"P{i}")], today=datetime.date(2024, 1, 1 + i))
    kept = KnownPlayers(known.path)
    assert len(kept) == 3
    assert [kept.name_of(key(i).public) for i in range(5)] == [None, None, "P2", "P3", "P4"]


def test_a_damaged_known_players_file_is_reported_and_never_overwritten(
        tmp_path: Path) -> None:
    path = tmp_path / "known-players.json"
    for content in (b"{", b'{"format": "p2pkille known players", "version": 1, '
                          b'"players": [{"key": "00", "name": "x", "first": "", "last": ""}]}'):
        path.write_bytes(content)
        known = KnownPlayers(path)
        assert known.problem is not None
        assert "damaged" in known.problem
        assert known.check(key(1).public, "Kalle") is None
        known.remember([(key(1).public, "Kalle")])
        assert path.read_bytes() == content
