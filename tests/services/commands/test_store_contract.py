"""The command store's contract, run unchanged against every store the handler may stand on:
the JetStream one on a real nats-server, and the in-memory one beside it."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import msgspec
import pytest

from athenaeum.aggregates.context import Context
from athenaeum.aggregates.rules import Stamp
from athenaeum.events.commands import CommandRecord
from athenaeum.events.ratification import ArtifactFrozen, Decision, Mode, VoteCast
from athenaeum.services.commands.store import AlreadyApplied, Appending, CommandKey, Conflict

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


def topic() -> str:
    return f"adr-{uuid.uuid4().hex[:8]}"


def record(events: int = 1, route: str = "ratification.init") -> CommandRecord:
    return CommandRecord(route=route, command=msgspec.Raw(b'{"topic":"x"}'), fingerprint="f" * 64, actor="alice",
                         at=NOW, events=events)


def frozen(name: str, version: int = 0, actor: str = "alice") -> ArtifactFrozen:
    return Stamp(name, version, Context(actor=actor, now=NOW, command_id="c"))(
        ArtifactFrozen, initiator=actor, artifact="a", artifact_sha256="s", artifact_origin="inline",
        roster=("alice",), mode=Mode.STANDARD, expires_at=NOW)


def voted(name: str, version: int, agent: str) -> VoteCast:
    return Stamp(name, version, Context(actor=agent, now=NOW, command_id="v"))(
        VoteCast, agent=agent, decision=Decision.SIGN, artifact_sha256="s")


async def test_an_aggregate_without_events_loads_as_none(store) -> None:
    assert await store.load(topic()) is None
    assert await store.applied(CommandKey("alice", topic(), "c-1")) is None


async def test_an_appended_command_folds_into_the_state_and_is_found_with_its_first_answer(store) -> None:
    name = topic()
    await store.load(name)
    key = CommandKey("alice", name, "c-1")
    position = await store.append([frozen(name)], record(), key)
    assert (await store.load(name)).version == 1 and (await store.load(name, fresh=True)).version == 1
    applied = await store.applied(key)
    assert applied.position == position and applied.record == record()
    [event] = msgspec.json.decode(applied.events)
    assert event["type"] == "ArtifactFrozen" and event["originator_id"] == name


async def test_positions_rise_and_a_command_of_several_events_answers_with_all_of_them(store) -> None:
    name = topic()
    await store.load(name)
    first = await store.append([frozen(name)], record(), CommandKey("alice", name, "c-1"))
    await store.load(name)
    events = [voted(name, 1, "alice"), voted(name, 2, "bob")]
    last = await store.append(events, record(2, "ratification.vote"), CommandKey("alice", name, "c-2"))
    assert last > first
    applied = await store.applied(CommandKey("alice", name, "c-2"))
    assert applied.position == last and [e["agent"] for e in msgspec.json.decode(applied.events)] == ["alice", "bob"]


async def test_a_stale_version_conflicts_and_appends_nothing(store) -> None:
    name = topic()
    await store.load(name)
    await store.append([frozen(name)], record(), CommandKey("alice", name, "c-1"))
    with pytest.raises(Conflict):
        await store.append([frozen(name)], record(), CommandKey("bob", name, "c-2"))
    assert (await store.load(name, fresh=True)).version == 1
    assert await store.applied(CommandKey("bob", name, "c-2")) is None


async def test_a_conflict_on_any_aggregate_appends_nothing_on_the_others(store) -> None:
    first, second = topic(), topic()
    await store.load(first)
    await store.load(second)
    await store.append([frozen(second)], record(), CommandKey("alice", second, "c-1"))
    with pytest.raises(Conflict):
        await store.append([frozen(first), frozen(second)], record(2), CommandKey("alice", first, "c-2"))
    assert await store.load(first, fresh=True) is None


async def test_a_command_id_for_everyone_applies_once_whoever_sends_it(store) -> None:
    name, other = topic(), topic()
    await store.load(name)
    await store.load(other)
    key = CommandKey("alice", name, "a2a:task-1", scoped=False)
    position = await store.append([frozen(name)], record(), key)
    with pytest.raises(AlreadyApplied) as caught:
        await store.append([frozen(other)], record(), CommandKey("bob", other, "a2a:task-1", scoped=False))
    assert caught.value.applied.position == position
    assert await store.load(other, fresh=True) is None


async def test_a_record_too_large_for_a_header_is_kept_whole(store) -> None:
    name = topic()
    await store.load(name)
    large = msgspec.structs.replace(record(), command=msgspec.Raw(msgspec.json.encode({"artifact": "a" * 100_000})))
    await store.append([frozen(name)], large, CommandKey("alice", name, "c-big"))
    assert (await store.applied(CommandKey("alice", name, "c-big"))).record == large


async def test_commands_appended_together_are_each_found_with_their_own_answer(store) -> None:
    names = [topic(), topic()]
    for name in names:
        await store.load(name)
    keys = [CommandKey("alice", name, "c-1") for name in names]
    appended = await store.append_together([Appending([frozen(name)], record(), key)
                                            for name, key in zip(names, keys)])
    assert appended[1].position == appended[0].position + 1
    assert [await store.applied(key) for key in keys] == appended
    assert [(await store.load(name, fresh=True)).version for name in names] == [1, 1]


async def test_commands_appended_together_land_all_or_none(store) -> None:
    taken, free = topic(), topic()
    await store.load(taken)
    await store.load(free)
    await store.append([frozen(taken)], record(), CommandKey("alice", taken, "c-1"))
    with pytest.raises(Conflict):
        await store.append_together([Appending([frozen(free)], record(), CommandKey("bob", free, "c-2")),
                                     Appending([frozen(taken)], record(), CommandKey("bob", taken, "c-3"))])
    assert await store.load(free, fresh=True) is None
