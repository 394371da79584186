"""A three-node cluster with R3 streams under load: its ledger's stream leader killed outright,
or paused (SIGSTOP) until the others elect another; after each, every acknowledged command is
in the ledger once, the views match it, the audit is clean."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import nats
import nats.errors
import pytest

from athenaeum.services.runtime.nats_server import PID_FILE, NatsCluster, NatsServer
from tests.faults.checks import assert_the_ledger_holds_what_was_acknowledged
from tests.faults.serving import AGENTS, loaded, stop
from tests.services.conftest import Served

ROUNDS = 8
STREAM = "FAULTS"
ELECTION_WITHIN = 30.0  # seconds the others may take to elect another leader (raft: 4 to 9 s)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[NatsCluster]:
    with NatsCluster(base_dir=tmp_path / "cluster") as cluster:
        yield cluster


@pytest.fixture
def served(cluster: NatsCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """serve on the cluster, its streams R3; the CLI's audit and export read the same stream."""
    monkeypatch.setenv("ATHENAEUM_STREAM", STREAM)
    monkeypatch.setenv("ATHENAEUM_REPLICAS", "3")
    served = Served(tmp_path / "home", "--nats", ",".join(cluster.urls))
    assert served.ready_line.startswith("athenaeum ready"), served.ready_line
    yield served
    stop(served)


@pytest.mark.timeout(150)
def test_the_ledger_leader_killed_under_load_loses_nothing_and_doubles_nothing(cluster, served) -> None:
    load = loaded(served, ROUNDS)
    load.wait_for(load.total // 3)
    leader = ledger_leader(cluster, cluster.nodes)
    leader.kill()
    try:
        load.wait_for(len(load.sent.acknowledged) + len(AGENTS))  # the others go on without it
    finally:
        leader.start()
    assert_the_ledger_holds_what_was_acknowledged(served, load, load.finish())


@pytest.mark.timeout(150)
def test_the_ledger_leader_paused_under_load_loses_nothing_and_doubles_nothing(cluster, served) -> None:
    load = loaded(served, ROUNDS)
    load.wait_for(load.total // 3)
    leader = ledger_leader(cluster, cluster.nodes)
    pid = int((leader.store_dir / PID_FILE).read_text())
    os.kill(pid, signal.SIGSTOP)  # alive, connected, silent: as in a long pause of the whole process
    try:
        others = [node for node in cluster.nodes if node is not leader]
        assert ledger_leader(cluster, others, within=ELECTION_WITHIN) is not leader
    finally:
        os.kill(pid, signal.SIGCONT)  # back, still taking itself for the leader until it hears otherwise
    assert_the_ledger_holds_what_was_acknowledged(served, load, load.finish())


def ledger_leader(cluster: NatsCluster, asked: list[NatsServer], within: float = 10.0) -> NatsServer:
    """The node leading the ledger's stream, as ``asked`` know it: asked again until they name
    one of themselves, or ``within`` seconds pass."""
    names = {node.name: node for node in asked}

    async def ask() -> NatsServer:
        deadline = time.monotonic() + within
        nc = await nats.connect(servers=[node.url for node in asked], connect_timeout=2)
        try:
            while True:
                try:
                    leader = (await nc.jetstream(timeout=1).stream_info(STREAM)).cluster.leader
                except (nats.errors.TimeoutError, nats.js.errors.APIError):
                    leader = None  # no leader yet, or none that answers
                if leader in names:
                    return names[leader]
                assert time.monotonic() < deadline, f"no leader of {STREAM} among {sorted(names)} within {within}s"
                await asyncio.sleep(0.1)  # poll interval of a bounded wait for the election
        finally:
            await nc.close()

    return asyncio.run(ask())
