"""Fixtures shared by every test: a real nats-server from the wheel, on a free port, and a
PostgreSQL (see ``tests.postgres``)."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from athenaeum.services.runtime.nats_server import NatsCluster, NatsServer
from tests.postgres import test_postgres


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    with NatsServer(store_dir=tmp_path_factory.mktemp("nats")) as server:
        yield server


@pytest.fixture(scope="session")
def nats_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsCluster]:
    with NatsCluster(base_dir=tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    # Not under pytest's own temp dirs: a pytest session starting meanwhile on the same machine
    # removes all but the newest three of those, a running server's data dir with them.
    with tempfile.TemporaryDirectory(prefix="athenaeum-test-postgres-") as directory, test_postgres(Path(directory)) as url:
        yield url


def new_stream_name() -> str:
    return f"T{uuid.uuid4().hex[:16].upper()}"


@pytest.fixture
def store_env(nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment selecting the JetStream store on a stream no other test uses."""
    env = {
        "PERSISTENCE_MODULE": "athenaeum.services.jetstream",
        "ATHENAEUM_NATS_URL": nats_server.url,
        "ATHENAEUM_STREAM": new_stream_name(),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def environ_store(store_env: dict[str, str]) -> dict[str, str]:
    """The store environment, also visible through ``os.environ`` to code that reads it."""
    assert all(os.environ[key] == value for key, value in store_env.items())
    return store_env
