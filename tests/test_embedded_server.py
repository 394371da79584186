"""The embedded nats-server: ports, readiness, restarts and clean shutdown."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import nats
import psutil
import pytest

from athenaeum.services.runtime.nats_binary import NatsServerError
from athenaeum.services.runtime import nats_server
from athenaeum.services.runtime.nats_server import ADDRESS_IN_USE, NatsCluster, NatsServer, free_port, process_running


async def jetstream_answers(url: str) -> bool:
    nc = await nats.connect(url)
    try:
        info = await nc.jetstream().account_info()
        return info is not None
    finally:
        await nc.close()


async def test_a_server_on_a_given_port_is_ready_when_start_returns(tmp_path: Path) -> None:
    port = free_port()
    with NatsServer(store_dir=tmp_path, port=port) as server:
        assert server.url == f"nats://127.0.0.1:{port}"
        assert await jetstream_answers(server.url)
        config = (tmp_path / "nats-server.conf").read_text()
        assert "sync_interval: always" in config and f"listen: 127.0.0.1:{port}" in config
    assert not server.running


def test_every_port_the_server_listens_on_its_unauthenticated_monitoring_among_them_is_on_loopback_only(
        tmp_path: Path) -> None:
    with NatsServer(store_dir=tmp_path) as server:
        pid = int((tmp_path / nats_server.PID_FILE).read_text())
        listening = {(c.laddr.ip, c.laddr.port) for c in psutil.Process(pid).net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN}
    # The monitoring port (/varz, /connz, /jsz, ...) asks nobody who they are: off this machine,
    # nobody reaches it.
    assert listening == {("127.0.0.1", server.port), ("127.0.0.1", server.monitor_port)}, listening


async def test_a_restarted_server_keeps_its_port(tmp_path: Path) -> None:
    server = NatsServer(store_dir=tmp_path).start()
    try:
        port = server.port
        server.stop()
        server.start()
        assert server.port == port and await jetstream_answers(server.url)
    finally:
        server.stop()


def test_a_server_stops_with_the_interpreter_that_started_it(tmp_path: Path) -> None:
    script = (
        "from athenaeum.services.runtime.nats_server import NatsServer\n"
        f"server = NatsServer(store_dir={str(tmp_path)!r}).start()\n"
        "print(server._process.pid, flush=True)\n"
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    pid = int(child.stdout.split()[0])
    deadline = time.monotonic() + 10
    while process_running(pid):
        assert time.monotonic() < deadline, f"nats-server {pid} outlived its interpreter"
        time.sleep(0.05)  # poll interval of a bounded wait for the process to exit


def test_a_server_orphaned_by_a_program_killed_outright_is_stopped_before_another_takes_its_store(
    tmp_path: Path,
) -> None:
    script = (
        "import os\n"
        "from athenaeum.services.runtime.nats_server import NatsServer\n"
        f"server = NatsServer(store_dir={str(tmp_path)!r}).start()\n"
        "print(server._process.pid, flush=True)\n"
        "os._exit(0)  # as SIGKILL would: no clean-up\n"
    )
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    orphan = int(child.stdout.split()[0])
    assert process_running(orphan)
    linked = tmp_path.parent / f"{tmp_path.name}-link"
    linked.symlink_to(tmp_path)  # the same store, by another name
    with NatsServer(store_dir=linked) as server:
        assert not process_running(orphan) and server.running
        with pytest.raises(NatsServerError, match="another program runs a nats-server"):
            NatsServer(store_dir=tmp_path).start()


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    with NatsServer(store_dir=tmp_path / "one") as first:
        clash = NatsServer(store_dir=tmp_path / "two", port=first.port)
        with pytest.raises(Exception, match="exited during start-up"):
            clash.start(timeout=10)


def test_a_free_port_taken_before_the_server_binds_it_is_chosen_again(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program may take the port between its choice and the server's bind."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        first = iter([taken.getsockname()[1]])
        monkeypatch.setattr(nats_server, "free_port", lambda: next(first, None) or free_port())
        with NatsServer(store_dir=tmp_path / "js") as server:
            assert server.port != taken.getsockname()[1] and server.running


def test_the_log_a_failure_names_is_that_of_the_last_start(tmp_path: Path) -> None:
    """A retry on another port is decided by the log: an earlier start's lines must not count."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = NatsServer(store_dir=tmp_path / "js", port=taken.getsockname()[1])
        with pytest.raises(NatsServerError, match=ADDRESS_IN_USE):
            server.start(timeout=10)
    with server:  # the port is free again
        assert ADDRESS_IN_USE not in server.log_tail(lines=10_000) and "Server is ready" in server.log_tail(lines=10_000)


def test_a_route_port_taken_before_a_cluster_node_binds_it_is_chosen_again(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        first = iter([taken.getsockname()[1]])  # the first node's route port
        monkeypatch.setattr(nats_server, "free_port", lambda: next(first, None) or free_port())
        with NatsCluster(base_dir=tmp_path / "cluster") as cluster:
            routes = [node.cluster.port for node in cluster.nodes if node.cluster is not None]
            assert taken.getsockname()[1] not in routes and len(routes) == 3
            assert all(node.running for node in cluster.nodes)
