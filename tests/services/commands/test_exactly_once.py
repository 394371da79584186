"""A command applies exactly once, in the one-message path (a vote) and the batch path (a
task's creation, over two aggregates): retried after the process that appended it died before
answering, after the stream's leader changed, and after serve restarted."""

from __future__ import annotations

import asyncio
import uuid

import msgspec
import pytest

from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates.ratification import sha256_of
from athenaeum.events.commands import Command
from athenaeum.events.ratification import Decision
from athenaeum.events.ratification_commands import CastVote, InitRatification
from athenaeum.events.task_commands import CreateTask
from athenaeum.services.client import SyncClient
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.store import CommandKey, Unconfirmed
from athenaeum.services.jetstream.factory import stream_config
from tests.conftest import new_stream_name
from tests.services.conftest import Served

ARTIFACT = "# ADR\n"


def one_message(topic: str) -> list[tuple[Command, str]]:
    """A ratification, and a vote that is not the last: one event, one publish."""
    return [(InitRatification(topic=topic, roster=["alice", "bob"], artifact=ARTIFACT), "alice"),
            (CastVote(topic=topic, sha256=sha256_of(ARTIFACT), decision=Decision.SIGN, command_id="once"), "bob")]


def batch(topic: str) -> list[tuple[Command, str]]:
    """A task's creation: the counter and the task, one atomic batch."""
    return [(CreateTask(project_id=topic, title="t", plan_path="p.md", command_id="once"), "ops")]


PATHS = {"one message": one_message, "batch": batch}


async def ledger_length(store: JetStreamCommandStore) -> int:
    return (await store.log.client.stream_info(store.log.stream))["state"]["messages"]


class Crashing(JetStreamCommandStore):
    """A process that dies as its append lands: the append is made, no answer goes out."""

    async def append(self, events, record, key: CommandKey) -> int:  # type: ignore[no-untyped-def]
        await super().append(events, record, key)
        raise Unconfirmed("the process died before it answered")


@pytest.mark.parametrize("path", sorted(PATHS))
async def test_a_command_retried_after_its_process_died_before_answering_applies_once(nats_server, path) -> None:
    config = stream_config(new_stream_name(), 1, immutable=True)
    *before, (command, actor) = PATHS[path](f"adr-{uuid.uuid4().hex[:8]}")
    dying = await Crashing.open([nats_server.url], config, fold_of)
    setup = CommandHandler(await JetStreamCommandStore.open([nats_server.url], config, fold_of))
    for earlier, sender in before:
        assert (await setup.send(earlier, sender)).ok
    await CommandHandler(dying).send(command, actor)
    await dying.close()
    appended = await ledger_length(setup.store)  # type: ignore[arg-type]
    # Another replica, or the same one restarted, with nothing cached, gets the retry.
    successor = await JetStreamCommandStore.open([nats_server.url], config, fold_of)
    retried = await CommandHandler(successor).send(command, actor)
    again = await CommandHandler(successor).send(command, actor)
    assert retried.ok and again == retried and len(msgspec.json.decode(retried.events)) == (1 if path == "one message" else 2)
    assert await ledger_length(successor) == appended
    await successor.close()
    await setup.store.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", sorted(PATHS))
async def test_a_command_retried_after_its_stream_leader_changed_applies_once(nats_cluster, path) -> None:
    config = stream_config(new_stream_name(), 3, immutable=True)
    store = await JetStreamCommandStore.open(nats_cluster.urls, config, fold_of)
    commands = CommandHandler(store)
    *before, (command, actor) = PATHS[path](f"adr-{uuid.uuid4().hex[:8]}")
    for earlier, sender in before:
        assert (await commands.send(earlier, sender)).ok
    first = await commands.send(command, actor)
    info = await store.log.client.stream_info(store.log.stream)
    leader = next(node for node in nats_cluster.nodes if node.name == info["cluster"]["leader"])
    appended = info["state"]["messages"]
    leader.kill()
    try:
        survivors = [node.url for node in nats_cluster.nodes if node is not leader]
        elsewhere = await JetStreamCommandStore.open(survivors, config, fold_of)
        retried = await retry(CommandHandler(elsewhere), command, actor)
        assert retried == first and first.ok
        assert (await elsewhere.log.client.stream_info(elsewhere.log.stream))["state"]["messages"] == appended
        await elsewhere.close()
    finally:
        leader.start()
        await store.close()


async def retry(commands: CommandHandler, command: Command, actor: str, attempts: int = 20):  # type: ignore[no-untyped-def]
    """As a caller does while the cluster elects a leader: "unavailable" says to send it again."""
    for _ in range(attempts):
        reply = await commands.send(command, actor)
        if reply.ok or reply.error is None or reply.error.code != "unavailable":
            return reply
        await asyncio.sleep(0.25)  # between a caller's retries, not a wait on a condition
    return reply


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_command_retried_after_serve_restarted_applies_once(served: Served, path: str) -> None:
    *before, (command, actor) = PATHS[path](f"adr-{uuid.uuid4().hex[:8]}")
    url = served.url
    keys = {name: served.enrol(name) for name in {actor, *(sender for _, sender in before)}}
    for earlier, sender in before:
        with SyncClient(url, sender, seed=keys[sender]) as client:
            assert client.send(earlier).ok
    with SyncClient(url, actor, seed=keys[actor]) as client:
        first = client.send(command)
    assert first.ok and served.stop() == 0
    again = Served(served.data_dir)
    try:
        with SyncClient(again.url, actor, seed=keys[actor]) as client:
            assert client.send(command) == first
            exported = again.run("export").stdout.splitlines()
        commands = [line for line in exported if '"Athenaeum-Command-Key"' in line and "LedgerCheckpoint" not in line
                    and '"AgentRegistered"' not in line]
        assert len(commands) == len(before) + 1  # the serves' own checkpoints and the fleet's registrations aside
    finally:
        again.stop()
