"""The command store's adapters, side by side: each test taking ``store`` runs on both."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from athenaeum.aggregates.families import fold_of
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.store import CommandStore, MemoryStore
from athenaeum.services.jetstream.factory import stream_config
from tests.conftest import new_stream_name


@pytest.fixture(params=["memory", "jetstream"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[CommandStore]:
    """In memory, and on a JetStream stream of its own (which keeps what it last read, as a
    replica does)."""
    if request.param == "memory":
        yield MemoryStore(fold_of)
        return
    server = request.getfixturevalue("nats_server")
    opened = await JetStreamCommandStore.open([server.url], stream_config(new_stream_name(), 1, immutable=True), fold_of)
    yield opened
    await opened.close()
