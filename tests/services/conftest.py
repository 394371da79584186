"""``athenaeum serve`` in a subprocess, and the CLI run against it as a user runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from athenaeum.aggregates.rules import SLUG
from athenaeum.services.identity.accounts import SERVICE_KEY
from athenaeum.services.identity.keys import key_path

ATHENAEUM = [sys.executable, "-m", "athenaeum.services.cli"]
UNENROLLED = frozenset({"agent", "key", "audit", "export", "verify-export", "replay", "schema"})
ACTING_AS_NOBODY = frozenset({"key", "audit", "export", "verify-export", "replay", "schema"})
T = TypeVar("T")


class Served:
    def __init__(self, data_dir: Path, *options: str) -> None:
        self.data_dir = data_dir
        self.enrolled: set[str] = {"ada"}
        env = os.environ | {"ATHENAEUM_HUMANS": "ada"}
        env.pop("ATHENAEUM_NATS_URL", None)
        self.process = subprocess.Popen(
            [*ATHENAEUM, "serve", "--data-dir", str(data_dir), "--http", "127.0.0.1:0", *options],
            stdout=subprocess.PIPE, text=True, env=env,
        )
        self.ready_line = self.process.stdout.readline()  # blocks until ready, or EOF if it died

    def run(self, *args: str, actor: str = "alice") -> subprocess.CompletedProcess[str]:
        """The CLI as ``actor``, whom ada registers first (making its key) if nobody has: the
        server admits only the roster's keys. Not before the verbs that make keys themselves."""
        if args[0] not in UNENROLLED and SLUG.fullmatch(actor):
            self.enrol(actor)
        env = os.environ.copy()
        env.pop("ATHENAEUM_NATS_URL", None)
        # The options each verb takes: auditors act as nobody, and an export's check reads a file.
        options = [] if args[0] == "verify-export" else ["--data-dir", str(self.data_dir)]
        options += [] if args[0] in ACTING_AS_NOBODY else ["--as", actor]
        done = subprocess.run(
            [*ATHENAEUM, *args, *options],
            capture_output=True, text=True, timeout=60, env=env,
        )
        if args[:2] == ("agent", "register") and done.returncode == 0:
            self.enrolled.add(args[2])
        return done

    def enrol(self, actor: str) -> Path:
        """``actor``'s key, registered by ada unless someone has (the CLI made it then)."""
        if actor not in self.enrolled and not key_path(self.data_dir, actor).exists():
            enrolled = self.run("agent", "register", actor, actor="ada")
            assert enrolled.returncode == 0, enrolled.stderr + enrolled.stdout
        self.enrolled.add(actor)  # a key removed afterwards stays removed
        return key_path(self.data_dir, actor)

    @property
    def url(self) -> str:
        return json.loads((self.data_dir / "serve.json").read_text())["nats"]

    @property
    def service_key(self) -> Path:
        """The services' own key: a test that forges past them plays an operator who holds it."""
        return self.data_dir / "nats" / SERVICE_KEY

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    served = Served(tmp_path / "home")
    yield served
    if served.process.poll() is None:
        served.stop()


@contextmanager
def served_over_http(data_dir: Path) -> Iterator[tuple[Served, httpx.Client]]:
    """A serve whose gateway takes ``X-Agent-Name`` from 127.0.0.1 (as behind a local
    authenticating proxy), and an HTTP client of it."""
    served = Served(data_dir, "--trust-agent-header", "127.0.0.1")
    try:
        url = json.loads((served.data_dir / "serve.json").read_text())["http"]
        with httpx.Client(base_url=url, timeout=30) as client:
            yield served, client
    finally:
        served.stop()


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """A serve that checkpoints every four entries, for auditors."""
    monkeypatch.setenv("ATHENAEUM_CHECKPOINT_EVERY", "4")
    served = Served(tmp_path / "home")
    yield served
    if served.process.poll() is None:
        served.stop()


def until(probe: Callable[[], T], done: Callable[[T], bool], timeout: float = 20) -> T:
    """Probe until ``done`` says so or ``timeout`` seconds pass; the last probe's value."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.2)  # poll interval of a bounded wait
