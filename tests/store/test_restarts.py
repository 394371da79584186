"""The store across a nats-server restart, and subscriptions that resume or fail clearly."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from eventsourcing.persistence import OperationalError, ProgrammingError, StoredEvent
from eventsourcing.utils import Environment

from athenaeum.services.jetstream import JetStreamFactory
from athenaeum.services.jetstream.client import RequestTimedOut
from athenaeum.services.jetstream.subscription import JetStreamSubscription
from athenaeum.services.runtime.nats_binary import NatsServerError, require_version
from athenaeum.services.runtime.nats_server import PID_FILE, NatsServer, free_port
from tests.conftest import new_stream_name


def stored(originator_id: str, version: int) -> StoredEvent:
    return StoredEvent(originator_id=originator_id, originator_version=version, topic="Tested", state=b"{}")


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[NatsServer]:
    with NatsServer(store_dir=tmp_path / "nats") as server:
        yield server


def server_pid(server: NatsServer) -> int:
    return int((server.store_dir / PID_FILE).read_text())


@pytest.fixture
def env(own_server: NatsServer) -> dict[str, str]:
    return {"ATHENAEUM_NATS_URL": own_server.url, "ATHENAEUM_STREAM": new_stream_name(), "ATHENAEUM_NATS_TIMEOUT": "2"}


def test_acknowledged_events_survive_a_server_restart(own_server: NatsServer, env) -> None:
    with JetStreamFactory(Environment(env=env)) as factory:
        factory.application_recorder().insert_events([stored("kept", 1), stored("kept", 2)])
    own_server.kill()  # no clean shutdown: fsync on every write is what keeps the data
    own_server.start()
    with JetStreamFactory(Environment(env=env)) as factory:
        assert [e.originator_version for e in factory.application_recorder().select_events("kept")] == [1, 2]


def test_a_write_refused_while_the_server_is_away_never_lands_later(own_server: NatsServer, env) -> None:
    with JetStreamFactory(Environment(env=env)) as factory:
        recorder = factory.application_recorder()
        recorder.insert_events([stored("kept", 1)])
        own_server.stop()
        for refused in ([stored("kept", 2)], [stored("batch", 1), stored("batch", 2)]):
            # "not connected", or a timeout when the client had yet to notice the server left.
            with pytest.raises(OperationalError):
                recorder.insert_events(refused)
        own_server.start()
        recorder.insert_events([stored("after", 1)])  # waits for the connection to come back
        assert [e.originator_version for e in recorder.select_events("kept")] == [1]
        assert recorder.select_events("batch") == []


def test_a_write_queued_behind_a_stalled_connection_when_it_drops_never_lands_later(own_server: NatsServer,
                                                                                       env) -> None:
    with JetStreamFactory(Environment(env=env)) as factory:
        recorder = factory.application_recorder()
        recorder.insert_events([stored("kept", 1)])
        os.kill(server_pid(own_server), signal.SIGSTOP)  # it reads nothing more: the socket fills up
        client = recorder.connection.client

        async def fill_the_socket() -> None:
            for _ in range(32):  # more than the socket buffers hold: what follows waits in the client
                await client.nc.publish("nobody.listens", b"x" * 1_000_000)

        recorder.connection.run(fill_the_socket())
        with pytest.raises(RequestTimedOut):  # no answer: as far as the caller knows, it may have landed
            recorder.insert_events([stored("kept", 2)])
        own_server.kill()
        own_server.start()
        recorder.insert_events([stored("after", 1)])  # on the new connection
        assert [e.originator_version for e in recorder.select_events("kept")] == [1]


def test_a_subscription_resumes_after_a_server_restart(own_server: NatsServer, env) -> None:
    with JetStreamFactory(Environment(env=env)) as factory:
        recorder = factory.application_recorder()
        recorder.insert_events([stored("before", 1)])
        with recorder.subscribe(gt=0) as subscription:
            assert next(subscription).originator_id == "before"
            own_server.stop()
            own_server.start()
            recorder.insert_events([stored("after", 1)])
            assert next(subscription).originator_id == "after"


def test_a_subscription_whose_server_stays_away_fails_with_a_clear_error(own_server: NatsServer, env) -> None:
    with JetStreamFactory(Environment(env=env)) as factory:
        recorder = factory.application_recorder()
        recorder.insert_events([stored("only", 1)])
        with JetStreamSubscription(recorder, recorder.connection, recorder.log, gt=1, resume_timeout=1.0) as subscription:
            own_server.stop()
            with pytest.raises(OperationalError, match="gave up after"):
                next(subscription)


def test_stop_ends_a_waiting_subscription_promptly(own_server: NatsServer, env) -> None:
    with JetStreamFactory(Environment(env=env)) as factory:
        subscription = factory.application_recorder().subscribe(gt=None)
        received: list[object] = []
        with subscription:
            reader = threading.Thread(target=lambda: received.extend(subscription))
            reader.start()
            subscription.stop()
            reader.join(timeout=5)
            assert not reader.is_alive() and received == []


def test_an_unreachable_server_is_a_clear_error() -> None:
    env = {"ATHENAEUM_NATS_URL": f"nats://127.0.0.1:{free_port()}", "ATHENAEUM_NATS_TIMEOUT": "1"}
    with pytest.raises(OperationalError, match="cannot reach NATS"):
        JetStreamFactory(Environment(env=env)).application_recorder()


def test_a_factory_connects_only_when_a_recorder_needs_it() -> None:
    # eventsourcing makes factories only for their mapper, and never closes those.
    env = {"ATHENAEUM_NATS_URL": f"nats://127.0.0.1:{free_port()}"}
    factory = JetStreamFactory(Environment(env=env))
    assert factory.mapper() is not None
    assert not [thread for thread in threading.enumerate() if thread.name == "athenaeum-jetstream"]
    factory.close()
    with pytest.raises(ProgrammingError, match="closed"):
        factory.application_recorder()


def test_a_bad_stream_name_is_a_clear_error(env) -> None:
    with pytest.raises(ProgrammingError, match="ATHENAEUM_STREAM"):
        JetStreamFactory(Environment(env=env | {"ATHENAEUM_STREAM": "has.dots"}))


def test_an_old_server_version_is_refused() -> None:
    with pytest.raises(NatsServerError, match=r"2\.9\.0.*needs 2\.12\.0"):
        require_version((2, 9, 0), "the server")


def test_a_missing_binary_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATHENAEUM_NATS_SERVER_BIN", str(tmp_path / "no-such-nats-server"))
    with pytest.raises(NatsServerError, match="no nats-server binary"):
        NatsServer(store_dir=tmp_path).start()


OLD_SERVER = shutil.which("nats-server", path="/usr/sbin:/usr/bin")


@pytest.mark.skipif(OLD_SERVER is None, reason="no distribution nats-server on this machine")
def test_the_store_refuses_a_distribution_server_too_old_for_atomic_batches(tmp_path: Path) -> None:
    version = subprocess.run([OLD_SERVER, "--version"], capture_output=True, text=True).stdout
    if "v2.9" not in version and "v2.10" not in version and "v2.11" not in version:
        pytest.skip(f"the distribution server is new enough: {version}")
    port = free_port()
    process = subprocess.Popen(
        [OLD_SERVER, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        env = {"ATHENAEUM_NATS_URL": f"nats://127.0.0.1:{port}", "ATHENAEUM_NATS_TIMEOUT": "5"}
        with pytest.raises((ProgrammingError, OperationalError)) as caught:
            _connect_when_listening(env)
        assert "needs 2.12.0 or newer" in str(caught.value)
    finally:
        process.terminate()
        process.wait(10)


def _connect_when_listening(env: dict[str, str]) -> None:
    import time

    deadline = time.monotonic() + 10
    while True:
        try:
            with JetStreamFactory(Environment(env=env)) as factory:
                factory.application_recorder()
            return
        except OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # poll interval of a bounded wait for the old server to listen
