"""A message on an aggregate's subject that is no event the ledger can hold, put there by one
holding the services' key: commands on the aggregate go on deciding on its valid history."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import msgspec
import nats
import pytest

from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates.ratification import Ratification, sha256_of
from athenaeum.aggregates.state import SNAPSHOT_TAG, Snapshot
from athenaeum.events.ratification import Decision
from athenaeum.events.ratification_commands import CastVote, InitRatification
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.jetstream.factory import stream_config
from athenaeum.services.jetstream.log import TOPIC
from athenaeum.services.jetstream.positions import VERSION
from athenaeum.services.jetstream.subjects import StreamSubjects
from tests.conftest import new_stream_name

ARTIFACT = "# ADR\n"


@pytest.fixture
async def config(nats_server) -> dict[str, object]:
    return stream_config(new_stream_name(), 1, immutable=True)


@pytest.fixture
async def handler(nats_server, config) -> AsyncIterator[CommandHandler]:
    store = await JetStreamCommandStore.open([nats_server.url], config, fold_of)
    yield CommandHandler(store)
    await store.close()


async def opened(handler: CommandHandler) -> str:
    topic = f"adr-{uuid.uuid4().hex[:8]}"
    assert (await handler.send(InitRatification(topic=topic, roster=["alice", "bob", "carol"], artifact=ARTIFACT),
                               "alice")).ok
    return topic


def vote(topic: str) -> CastVote:
    return CastVote(topic=topic, sha256=sha256_of(ARTIFACT), decision=Decision.SIGN)


async def put(nats_server, config, topic: str, tag: str, payload: bytes, version: int = 2) -> None:
    """Straight onto the aggregate's subject, with the store's own headers."""
    nc = await nats.connect(nats_server.url)
    subject = StreamSubjects(str(config["name"])).aggregate(topic)  # a ratification's id is its topic
    await nc.jetstream().publish(subject, payload, headers={TOPIC: tag, VERSION: str(version)})
    await nc.close()


@pytest.mark.parametrize("reader", ["the store that wrote it", "a store that knows nothing"])
async def test_an_undecodable_payload_with_our_headers_is_passed_over(nats_server, config, handler, reader) -> None:
    topic = await opened(handler)
    await put(nats_server, config, topic, "VoteCast", b"\x00 not json")
    store = handler.store if reader == "the store that wrote it" else \
        await JetStreamCommandStore.open([nats_server.url], config, fold_of)
    voted = await CommandHandler(store).send(vote(topic), "bob")
    assert voted.ok, voted.error
    again = await CommandHandler(store).send(vote(topic), "carol")
    assert again.ok, again.error
    state = await store.load(topic, fresh=True)
    assert isinstance(state, Ratification) and state.version == 3 and {v.agent for v in state.votes} == {"bob", "carol"}


async def test_a_snapshot_on_the_ledger_is_no_event_and_changes_no_roster(nats_server, config, handler) -> None:
    topic = await opened(handler)
    state = await handler.store.load(topic)
    forged = msgspec.structs.replace(state, roster=(*state.roster, "mallory"), version=2)
    await put(nats_server, config, topic, SNAPSHOT_TAG, msgspec.json.encode(Snapshot.take(forged)))
    fresh = CommandHandler(await JetStreamCommandStore.open([nats_server.url], config, fold_of))
    refused = await fresh.send(vote(topic), "mallory")
    assert not refused.ok and refused.error.code == "not_rostered", refused
    assert (await fresh.send(vote(topic), "bob")).ok
