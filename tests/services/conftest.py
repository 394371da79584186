"""``athenaeum serve`` in a subprocess, and the CLI run against it as a user runs it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

ATHENAEUM = [sys.executable, "-m", "athenaeum.services.cli"]
T = TypeVar("T")


class Served:
    def __init__(self, data_dir: Path, *options: str) -> None:
        self.data_dir = data_dir
        env = os.environ | {"ATHENAEUM_HUMANS": "ada"}
        env.pop("ATHENAEUM_NATS_URL", None)
        self.process = subprocess.Popen(
            [*ATHENAEUM, "serve", "--data-dir", str(data_dir), "--http", "127.0.0.1:0", *options],
            stdout=subprocess.PIPE, text=True, env=env,
        )
        self.ready_line = self.process.stdout.readline()  # blocks until ready, or EOF if it died

    def run(self, *args: str, actor: str = "alice") -> subprocess.CompletedProcess[str]:
        env = os.environ.copy()
        env.pop("ATHENAEUM_NATS_URL", None)
        return subprocess.run(
            [*ATHENAEUM, *args, "--data-dir", str(self.data_dir), "--as", actor],
            capture_output=True, text=True, timeout=60, env=env,
        )

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    served = Served(tmp_path / "home")
    yield served
    if served.process.poll() is None:
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
