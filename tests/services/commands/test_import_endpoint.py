"""Import commands sent together over NATS, against the real command service: each item
answered as on its own subject, in order; a request that names nobody refused whole."""

from __future__ import annotations

import os
import uuid

import msgspec
import nats
import pytest

from athenaeum.aggregates.families import fold_of
from athenaeum.services.client.nats_client import AthenaeumClient, _requests
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.imports import IMPORT_SUBJECT, ImportItem
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.service import ACTOR_HEADER, SIGNATURE_HEADER, SIGNED_AT_HEADER, start_command_service
from athenaeum.services.jetstream.factory import stream_config
from tests.aggregates.test_ratification_import import importing
from tests.services.commands.test_handler import ADA, keyed_human


@pytest.fixture
async def service(store_env):
    config = stream_config(store_env["ATHENAEUM_STREAM"], 1, immutable=True)
    store = await JetStreamCommandStore.open([store_env["ATHENAEUM_NATS_URL"]], config, fold_of)
    nc = await nats.connect(os.environ["ATHENAEUM_NATS_URL"])
    handler = CommandHandler(store, humans=frozenset({"ada"}))
    await keyed_human(handler)  # who imports: a human, whose commands are signed
    started = await start_command_service(nc, handler)
    yield nc
    await started.stop()
    await nc.close()
    await store.close()


def ratification() -> object:
    return msgspec.structs.replace(importing(), topic=f"adr-{uuid.uuid4().hex[:8]}", command_id=uuid.uuid4().hex)


async def test_imports_sent_together_are_each_recorded_and_sent_again_answer_as_the_first_time(service) -> None:
    client = AthenaeumClient(service, "ada", seed=ADA)
    commands = [ratification(), ratification()]
    first = await client.send_together(commands)
    assert [reply.ok for reply in first] == [True, True] and first[1].position == first[0].position + 1
    assert await client.send_together(commands) == first


async def test_an_agents_imports_are_refused_as_not_human_and_nothing_is_recorded(service) -> None:
    """An import records outcomes no vote here decided (ratified, accepted, canonical): an agent
    could otherwise make one up, on its own word."""
    commands = [ratification(), ratification()]
    refused = await AthenaeumClient(service, "ops").send_together(commands)
    assert [(reply.error.code, reply.error.field) for reply in refused] == [("not_human", "actor")] * 2
    alone = await AthenaeumClient(service, "ops").send(commands[0])
    assert alone.error.code == "not_human"
    recorded = await AthenaeumClient(service, "ada", seed=ADA).send_together(commands)
    assert [reply.ok for reply in recorded] == [True, True]  # nothing was: the same topics open as new


async def test_an_item_that_is_no_import_is_refused_alone(service) -> None:
    command = ratification()
    signed = await AthenaeumClient(service, "ada", seed=ADA)._headers(command)  # as send_together signs each
    items = [ImportItem("ratification.import", msgspec.Raw(msgspec.json.encode(command)), signed[SIGNATURE_HEADER],
                        signed[SIGNED_AT_HEADER]),
             ImportItem("ratification.init", msgspec.Raw(b'{"topic": "adr-1"}'))]
    reply = await service.request(IMPORT_SUBJECT, msgspec.json.encode(items), timeout=10, headers={ACTOR_HEADER: "ada"})
    recorded, refused = msgspec.json.decode(reply.data)
    assert recorded["ok"] and refused["error"]["code"] == "invalid" and refused["error"]["field"] == "route"


async def test_a_request_that_names_nobody_is_refused_whole(service) -> None:
    items = [ImportItem("ratification.import", msgspec.Raw(msgspec.json.encode(ratification())))]
    reply = await service.request(IMPORT_SUBJECT, msgspec.json.encode(items), timeout=10, headers={ACTOR_HEADER: "Bad"})
    answer = msgspec.json.decode(reply.data)
    assert not answer["ok"] and answer["error"]["field"] == "actor"


def test_a_request_holds_as_many_items_as_the_size_limit_allows_and_a_large_one_alone() -> None:
    assert _requests([10, 10, 10, 50, 10], 30) == [(0, 3), (3, 4), (4, 5)]
    assert _requests([], 30) == []
