"""A real mosquitto for the ``broker`` tests: on 127.0.0.1, on a free port, with its own
config in a temporary directory, stopped by the fixture.

Without a mosquitto binary the tests are skipped, except under ``CI=true``, where a skipped
broker test would hide a broken CI set-up: there they fail.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2pkille.net.mqtt import BrokerUrl


def _mosquitto() -> str:
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/sbin")
    if found is None:
        message = "mosquitto is not installed (apt-get install mosquitto)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; under CI=true a broker test may not be skipped")
        pytest.skip(message)
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Broker:
    """One mosquitto process; :meth:`stop` and :meth:`start` again on the same port."""

    def __init__(self, exe: str, directory: Path, extra: str = "", tls: bool = False) -> None:
        self.exe = exe
        self.port = free_port()
        self.directory = directory
        self.config = directory / "mosquitto.conf"
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n"
            # Started as root, mosquitto would switch to the user "mosquitto", who cannot read
            # our temporary files; as anybody else the line changes nothing.
            f"user {getpass.getuser()}\n"
            "persistence false\n"
            # mosquitto's default leaves Nagle on: 40 ms more per message on loopback.
            "set_tcp_nodelay true\n"
            # The default (1000 QoS 1 messages queued per slow subscriber, then silently
            # dropped) loses messages in a burst of 9 peers.
            "max_queued_messages 100000\n"
            "log_dest stderr\n"
            "log_type error\nlog_type warning\nlog_type notice\n"
            + (extra or "allow_anonymous true\n"))
        self.tls = tls
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> BrokerUrl:
        return BrokerUrl("127.0.0.1", self.port, tls=self.tls)

    def start(self) -> None:
        log = (self.directory / "mosquitto.log").open("ab")
        self.process = subprocess.Popen([self.exe, "-c", str(self.config)],
                                        stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 10
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"mosquitto did not listen: {self.log()}") from None
                time.sleep(0.02)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def log(self) -> str:
        path = self.directory / "mosquitto.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""


@pytest.fixture
def mosquitto_exe() -> str:
    return _mosquitto()


@pytest.fixture
def mosquitto(mosquitto_exe: str, tmp_path: Path) -> Iterator[Broker]:
    broker = Broker(mosquitto_exe, tmp_path)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
