"""A stream's shape: what is set back (nothing stored is touched), and what refuses the stream.
Driven against a real server, as an operator holding the services' key changes a stream."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import msgspec
import pytest
from eventsourcing.persistence import ProgrammingError, StoredEvent
from eventsourcing.utils import Environment

from athenaeum.services.jetstream import JetStreamFactory
from athenaeum.services.jetstream.client import JetStreamClient, StreamDrift
from athenaeum.services.jetstream.shape import inspect


def stored(version: int, originator_id: str = "page") -> StoredEvent:
    return StoredEvent(originator_id=originator_id, originator_version=version, topic="Tested", state=b"{}")


@pytest.fixture
def ledger(store_env: dict[str, str]) -> Iterator[JetStreamFactory]:
    """A ledger of three aggregates with three events each."""
    factory = JetStreamFactory(Environment(env=store_env))
    factory.application_recorder().insert_events([stored(v, name) for name in "abc" for v in (1, 2, 3)])
    yield factory
    factory.close()


def operator(factory: JetStreamFactory, **changes: object) -> dict:
    """Change the stream's configuration as ``nats stream edit`` would; its information after."""
    client = factory.connection.client
    name = factory.events_log.stream

    async def edit() -> dict:
        info = await client.stream_info(name)
        reply = await client._api(f"STREAM.UPDATE.{name}", msgspec.json.encode(info["config"] | changes))
        assert "error" not in reply, reply
        return await client.stream_info(name)

    return factory.connection.run(edit())


def reopened(store_env: dict[str, str], create: bool = True) -> list[str]:
    """What a writer opening the ledger afresh sets back (or the refusal it raises)."""

    async def open_it() -> list[str]:
        client = await JetStreamClient.connect([store_env["ATHENAEUM_NATS_URL"]], 5, "test")
        try:
            config = JetStreamFactory(Environment(env=store_env)).events_config
            info = await client.stream_info(str(config["name"]))
            repairs = inspect(config, info, keeps_history=True).repairs
            await client.ensure_stream(config, create)
            return repairs
        finally:
            await client.close()

    return asyncio.run(open_it())


def test_a_limit_that_dropped_nothing_yet_is_lifted(ledger: JetStreamFactory, store_env: dict[str, str]) -> None:
    operator(ledger, max_msgs_per_subject=5, max_bytes=10_000_000, max_age=3600 * 10**9)
    assert reopened(store_env) == ["max_bytes 10000000 -> unlimited", "max_age 3600000000000 -> unlimited",
                                   "max_msgs_per_subject 5 -> unlimited"]
    info = ledger.connection.run(ledger.connection.client.stream_info(ledger.events_log.stream))
    assert (info["config"]["max_msgs_per_subject"], info["config"]["max_bytes"], info["config"]["max_age"]) == (-1, -1, 0)
    assert info["state"]["messages"] == 9


def test_a_limit_that_dropped_history_is_lifted_and_the_ledger_refused(ledger: JetStreamFactory,
                                                                       store_env: dict[str, str]) -> None:
    operator(ledger, max_msgs_per_subject=1)
    with pytest.raises(StreamDrift, match=r"holds 3 of the 9 messages written to it \(6 gone, dropped by "
                                          r"max_msgs_per_subject 1\)"):
        reopened(store_env)
    with pytest.raises(StreamDrift, match=r"\(6 gone\), and history cannot"):  # the limit is gone, the loss stays
        reopened(store_env)
    ledger.close()
    with pytest.raises(ProgrammingError, match="6 gone"):  # every writer refuses it, the store's own too
        JetStreamFactory(Environment(env=store_env)).application_recorder()


def test_a_sealed_ledger_is_refused_in_a_line(ledger: JetStreamFactory, store_env: dict[str, str]) -> None:
    operator(ledger, sealed=True)
    with pytest.raises(StreamDrift, match="is sealed, and NATS cannot unseal a stream: nothing can be appended"):
        reopened(store_env)
    assert reopened(store_env, create=False) == []  # a reader still reads it


def test_subjects_and_a_missing_layout_of_an_empty_stream_are_set_back(store_env: dict[str, str]) -> None:
    config = JetStreamFactory(Environment(env=store_env)).events_config
    name = str(config["name"])

    async def made_by_hand() -> None:
        client = await JetStreamClient.connect([store_env["ATHENAEUM_NATS_URL"]], 5, "test")
        by_hand = config | {"subjects": [f"{name}.ev.>", "elsewhere.>"], "metadata": {}, "deny_delete": False,
                            "deny_purge": False, "allow_atomic": False}
        await client._api(f"STREAM.CREATE.{name}", msgspec.json.encode(by_hand))
        await client.close()

    asyncio.run(made_by_hand())
    assert reopened(store_env) == ["subjects ['" + name + ".ev.>', 'elsewhere.>'] -> ['" + name + ".>']",
                                   "allow_atomic False -> True", "deny_delete False -> True",
                                   "deny_purge False -> True", "layout declared"]
    assert reopened(store_env) == []


def test_inspect_tightens_no_limit_of_a_stream_that_keeps_history_and_sets_one_back_elsewhere() -> None:
    wanted = {"name": "KV_v", "subjects": ["$KV.v.>"], "max_msgs_per_subject": 1}
    info = {"config": wanted | {"max_msgs_per_subject": 5}, "state": {"messages": 9, "last_seq": 20}}
    assert inspect(wanted, info, keeps_history=False).repairs == ["max_msgs_per_subject 5 -> 1"]
    assert inspect(wanted, info, keeps_history=True).repairs == []
