"""Ratification commands over NATS requests, against the real command service."""

from __future__ import annotations

import asyncio
import os
import uuid

import msgspec
import nats
import pytest

from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates.ratification import sha256_of
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.service import ACTOR_HEADER, start_command_service
from athenaeum.services.commands.store import Unconfirmed
from athenaeum.services.jetstream.factory import stream_config

ARTIFACT = "# ADR 9\nShip it.\n"


async def ledger(store_env: dict[str, str], kind: type[JetStreamCommandStore] = JetStreamCommandStore):
    config = stream_config(store_env["ATHENAEUM_STREAM"], 1, immutable=True)
    return await kind.open([store_env["ATHENAEUM_NATS_URL"]], config, fold_of)


@pytest.fixture
async def commands(store_env):
    store = await ledger(store_env)
    nc = await nats.connect(os.environ["ATHENAEUM_NATS_URL"])
    service = await start_command_service(nc, CommandHandler(store, humans=frozenset({"ada"})))

    async def send(verb: str, actor: str, **body: object) -> dict:
        reply = await nc.request(
            f"athenaeum.cmd.ratification.{verb}", msgspec.json.encode(body), timeout=10, headers={ACTOR_HEADER: actor}
        )
        return msgspec.json.decode(reply.data)

    yield send
    await service.stop()
    await nc.close()
    await store.close()


def topic() -> str:
    return f"adr-{uuid.uuid4().hex[:8]}"


async def test_a_ratification_runs_from_freeze_to_ratified(commands) -> None:
    name = topic()
    opened = await commands("init", "alice", topic=name, roster=["alice", "bob"], artifact=ARTIFACT)
    assert opened["ok"] and opened["events"][0]["artifact_sha256"] == sha256_of(ARTIFACT)
    assert (await commands("vote", "alice", topic=name, sha256=sha256_of(ARTIFACT), decision="SIGN"))["ok"]
    last = await commands("vote", "bob", topic=name, sha256=sha256_of(ARTIFACT), decision="SIGN")
    assert [e["type"] for e in last["events"]] == ["VoteCast", "VotesTallied", "ArtifactRatified"]
    assert last["position"] > opened["position"]


async def test_a_broken_rule_answers_its_code_and_appends_nothing(commands) -> None:
    name = topic()
    await commands("init", "alice", topic=name, roster=["alice"], artifact=ARTIFACT)
    reply = await commands("vote", "mallory", topic=name, sha256=sha256_of(ARTIFACT), decision="SIGN")
    assert reply == {"ok": False, "error": {"code": "not_rostered", "message": reply["error"]["message"], "field": "agent"}}
    again = await commands("vote", "alice", topic=name, sha256=sha256_of(ARTIFACT), decision="SIGN")
    assert [e["originator_version"] for e in again["events"]] == [2, 3, 4]


async def test_malformed_input_names_the_field(commands) -> None:
    reply = await commands("vote", "alice", topic="x", sha256="y", decision="MAYBE")
    assert reply["error"]["code"] == "invalid" and reply["error"]["field"] == "decision"
    reply = await commands("vote", "alice", topic="x", sha256="y", decision="SIGN", bogus=1)
    assert reply["error"]["code"] == "invalid" and reply["error"]["field"] == "bogus"


@pytest.mark.parametrize(("fields", "field"), [
    ({"artifact_origin": "o" * (64 * 1024 + 1)}, "artifact_origin"),
    ({"command_id": "k" * 257}, "command_id"),
    ({"artifact": "a" * (300 * 1024)}, None),  # an artifact has its own, larger limit
])
async def test_every_text_of_a_command_is_bounded(commands, fields: dict, field: str | None) -> None:
    name = topic()
    reply = await commands("init", "alice", **({"topic": name, "roster": ["alice"], "artifact": ARTIFACT} | fields))
    assert reply["ok"] if field is None else reply["error"] == {
        "code": "invalid", "message": reply["error"]["message"], "field": field}


async def test_a_text_deep_in_a_command_is_bounded_too(commands) -> None:
    name = topic()
    await commands("init", "alice", topic=name, roster=["alice"], artifact=ARTIFACT)
    reply = await commands("decide", "ada", topic=name, decision="rewrite-with-caveats",
                           caveats=[{"atom": "A1", "verifier": "v" * (64 * 1024 + 1)}])
    assert reply["error"]["field"] == "caveats.verifier"


async def test_a_vote_on_an_unknown_topic_is_not_found(commands) -> None:
    reply = await commands("vote", "alice", topic="no-such-topic", sha256="0" * 64, decision="SIGN")
    assert reply["error"]["code"] == "not_found"


async def test_the_same_command_id_again_appends_nothing_and_gets_the_first_reply(commands) -> None:
    name = topic()
    first = await commands("init", "alice", topic=name, roster=["alice", "bob"], artifact=ARTIFACT, command_id="c-1" + name)
    again = await commands("init", "alice", topic=name, roster=["alice", "bob"], artifact=ARTIFACT, command_id="c-1" + name)
    assert again == first
    vote = dict(topic=name, sha256=sha256_of(ARTIFACT), decision="SIGN", command_id="v-1" + name)
    assert await commands("vote", "bob", **vote) == await commands("vote", "bob", **vote)


async def test_concurrent_votes_all_land(commands) -> None:
    name = topic()
    roster = [f"agent-{n}" for n in range(8)]
    await commands("init", "agent-0", topic=name, roster=roster, artifact=ARTIFACT)
    replies = await asyncio.gather(
        *(commands("vote", agent, topic=name, sha256=sha256_of(ARTIFACT), decision="SIGN") for agent in roster)
    )
    assert all(reply["ok"] for reply in replies), [r for r in replies if not r["ok"]]
    tallies = [reply for reply in replies if len(reply["events"]) == 3]
    assert len(tallies) == 1 and tallies[0]["events"][2]["type"] == "ArtifactRatified"


async def test_the_client_gives_each_command_an_id_and_a_retry_reuses_it(store_env, commands) -> None:
    from athenaeum.events.ratification_commands import InitRatification
    from athenaeum.services.client import AthenaeumClient

    client = await AthenaeumClient.connect(os.environ["ATHENAEUM_NATS_URL"], "alice")
    try:
        command = InitRatification(topic=topic(), roster=["alice"], artifact=ARTIFACT, command_id="retry-" + topic())
        first, retried = await client.send(command), await client.send(command)
        assert first.ok and retried == first
        fresh = await client.send(InitRatification(topic=command.topic, roster=["alice"], artifact=ARTIFACT))
        assert fresh.error is not None and fresh.error.code == "already_exists"
    finally:
        await client.close()


async def test_a_command_id_is_scoped_to_its_actor_and_aggregate(commands) -> None:
    squatted, other = topic(), topic()
    await commands("init", "alice", topic=squatted, roster=["alice", "bob"], artifact=ARTIFACT)
    await commands("init", "alice", topic=other, roster=["alice", "bob"], artifact=ARTIFACT)
    vote = dict(sha256=sha256_of(ARTIFACT), decision="SIGN", command_id="same-id")
    assert (await commands("vote", "alice", topic=squatted, **vote))["ok"]
    assert [e["agent"] for e in (await commands("vote", "bob", topic=squatted, **vote))["events"][:1]] == ["bob"]
    assert [e["originator_id"] for e in (await commands("vote", "alice", topic=other, **vote))["events"]] == [other]


async def test_a_retry_racing_its_original_gets_the_original_reply(commands) -> None:
    name = topic()
    await commands("init", "alice", topic=name, roster=["alice", "bob"], artifact=ARTIFACT)
    vote = dict(topic=name, sha256=sha256_of(ARTIFACT), decision="SIGN", command_id="racing")
    replies = await asyncio.gather(*(commands("vote", "alice", **vote) for _ in range(4)))
    assert all(reply == replies[0] for reply in replies) and replies[0]["ok"]


async def test_a_time_without_a_zone_is_invalid_and_still_answered(commands) -> None:
    reply = await commands("init", "alice", topic=topic(), roster=["alice"], artifact=ARTIFACT, expires_at="2099-01-01T00:00:00")
    assert reply["error"]["code"] == "invalid" and reply["error"]["field"] == "expires_at"


async def test_a_stopping_service_answers_the_commands_it_already_took(store_env) -> None:
    import time

    from athenaeum.services.commands.service import stop_answering

    entered, released = asyncio.Event(), asyncio.Event()

    class Held(JetStreamCommandStore):  # appends once told to, having taken the command
        async def append(self, events, record, key):  # type: ignore[no-untyped-def]
            entered.set()
            await released.wait()
            return await super().append(events, record, key)

    store = await ledger(store_env, Held)
    nc = await nats.connect(os.environ["ATHENAEUM_NATS_URL"])
    client = await nats.connect(os.environ["ATHENAEUM_NATS_URL"])
    subject, body = "athenaeum.cmd.ratification.init", msgspec.json.encode(
        {"topic": topic(), "roster": ["alice"], "artifact": ARTIFACT})
    try:
        service = await start_command_service(nc, CommandHandler(store))
        taken = asyncio.create_task(client.request(subject, body, timeout=20, headers={ACTOR_HEADER: "alice"}))
        await asyncio.wait_for(entered.wait(), 10)
        stopping = asyncio.create_task(stop_answering(service, grace=10))
        deadline = time.monotonic() + 10
        while True:  # until the service takes no more requests (a malformed one is answered at once)
            try:
                await client.request(subject, b"not json", timeout=1, headers={ACTOR_HEADER: "alice"})
            except nats.errors.NoRespondersError:
                break
            except nats.errors.TimeoutError:
                pass  # dropped while the service drains its subscription
            assert time.monotonic() < deadline
        released.set()
        await stopping
        await nc.close()
        assert msgspec.json.decode((await taken).data)["ok"]
    finally:
        released.set()
        await client.close()
        await nc.close()
        await store.close()


async def test_a_command_whose_append_went_unconfirmed_says_whether_it_landed(store_env) -> None:
    # A leader change can swallow an append's answer after the append landed, or before.
    landed = iter([True, False])

    class Unconfirming(JetStreamCommandStore):
        async def append(self, events, record, key):  # type: ignore[no-untyped-def]
            if next(landed):
                await super().append(events, record, key)
            raise Unconfirmed("NATS request timed out after 5s")

    store = await ledger(store_env, Unconfirming)
    nc = await nats.connect(os.environ["ATHENAEUM_NATS_URL"])
    service = await start_command_service(nc, CommandHandler(store, humans=frozenset()))
    try:
        replies = []
        for name in (topic(), topic()):
            body = {"topic": name, "roster": ["alice"], "artifact": ARTIFACT, "command_id": f"init-{name}"}
            reply = await nc.request("athenaeum.cmd.ratification.init", msgspec.json.encode(body), timeout=10,
                                     headers={ACTOR_HEADER: "alice"})
            replies.append((name, msgspec.json.decode(reply.data)))
    finally:
        await service.stop()
        await nc.close()
        await store.close()
    (first, landed_reply), (second, lost_reply) = replies
    assert landed_reply["ok"] and landed_reply["events"][0]["type"] == "ArtifactFrozen"
    assert lost_reply["error"]["code"] == "unavailable" and lost_reply["error"]["field"] == "command_id"
    assert f"init-{second}" in lost_reply["error"]["message"]
