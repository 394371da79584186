"""``athenaeum serve`` killed outright under load, and its embedded nats-server too: after each,
every acknowledged command is in the ledger once, the views match it, the audit is clean."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from athenaeum.services.runtime.nats_server import PID_FILE, free_port, process_running
from tests.faults.checks import assert_the_ledger_holds_what_was_acknowledged
from tests.faults.serving import loaded, stop
from tests.services.conftest import Served, until

ROUNDS = 8


class Restartable:
    """serve on one data dir and one NATS port, as a deployment runs it: a restart keeps the
    port, so clients reconnect by themselves."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = str(free_port())
        self.served = Served(home, "--port", self.port)

    def restart(self) -> None:
        stop(self.served)
        self.served = Served(self.home, "--port", self.port)
        assert self.served.ready_line.startswith("athenaeum ready"), self.served.ready_line

    def nats_server_pid(self) -> int:
        try:
            return int((self.home / "nats" / PID_FILE).read_text())
        except (OSError, ValueError):  # being written again
            return 0


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Restartable]:
    serve = Restartable(tmp_path / "home")
    yield serve
    stop(serve.served)


@pytest.mark.timeout(150)
def test_serve_killed_outright_under_load_and_restarted_loses_nothing_and_doubles_nothing(serve: Restartable) -> None:
    load = loaded(serve.served, ROUNDS)
    load.wait_for(load.total // 3)
    serve.served.process.kill()  # its nats-server lives on, orphaned, until the next serve stops it
    serve.restart()
    assert_the_ledger_holds_what_was_acknowledged(serve.served, load, load.finish())


@pytest.mark.timeout(150)
def test_its_nats_server_killed_outright_under_load_and_restarted_loses_nothing_and_doubles_nothing(serve: Restartable) -> None:
    load = loaded(serve.served, ROUNDS)
    load.wait_for(load.total // 3)
    killed = serve.nats_server_pid()
    os.kill(killed, signal.SIGKILL)

    def back(pid: int) -> bool:
        return pid != killed and process_running(pid)

    # A serve that starts its nats-server again by itself is let do so; one that does not is restarted.
    if not back(until(serve.nats_server_pid, back, timeout=5)):
        serve.restart()
    assert_the_ledger_holds_what_was_acknowledged(serve.served, load, load.finish())
