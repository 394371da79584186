"""The command handler's own steps, on the in-memory store: no server, milliseconds each."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import msgspec
import pytest

from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates.ratification import sha256_of
from athenaeum.events.commands import Command, CommandRecord
from athenaeum.events.quorum_commands import AckProposal, ProposeQuorum
from athenaeum.events.ratification import Decision
from athenaeum.events.ratification_commands import CastVote, InitRatification
from athenaeum.events.fleet_commands import RegisterAgent
from athenaeum.services.commands.credentials import ASSERTED, SERVICE, Credential, deployment_command_id, signed
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.identity.keys import key_pair, new_seed, public_key
from athenaeum.services.commands.store import CommandKey, Conflict, MemoryStore, Refused, Unconfirmed

ARTIFACT = "# ADR 1\n"
SHA = sha256_of(ARTIFACT)
NOW = datetime(2026, 12, 1, 9, tzinfo=timezone.utc)


def handler(store: MemoryStore | None = None, **options: object) -> CommandHandler:
    return CommandHandler(store or MemoryStore(fold_of), humans=frozenset({"ada"}), clock=lambda: NOW, **options)


ADA = key_pair(new_seed())  # the deployment's human: her commands are signed


async def keyed_human(commands: CommandHandler) -> None:
    """ada in the roster with her key, as serve --humans records her."""
    register = RegisterAgent(name="ada", human=True, public_key=public_key(ADA), command_id=deployment_command_id("ada"))
    assert (await commands.send(register, "ada", SERVICE)).ok


def as_ada(commands: CommandHandler, command: Command) -> Credential:
    return signed(ADA, commands.store.ledger_id, command, "ada")


def init(topic: str = "adr-1", roster: tuple[str, ...] = ("alice", "bob"), **fields: object) -> InitRatification:
    return InitRatification(topic=topic, roster=list(roster), artifact=ARTIFACT, **fields)


async def test_a_command_is_decided_appended_and_answered_with_its_events() -> None:
    reply = await handler().send(init(), "alice")
    assert reply.ok and reply.position == 1
    assert [e["type"] for e in msgspec.json.decode(reply.events)] == ["ArtifactFrozen"]


async def test_a_refusal_names_its_code_and_field_and_appends_nothing() -> None:
    store = MemoryStore(fold_of)
    commands = handler(store)
    await commands.send(init(), "alice")
    reply = await commands.send(CastVote(topic="adr-1", sha256=SHA, decision=Decision.SIGN), "mallory")
    assert reply.error.code == "not_rostered" and reply.error.field == "agent" and len(store.ledger) == 1


async def test_the_same_command_id_again_gets_the_first_answer_and_appends_nothing() -> None:
    store = MemoryStore(fold_of)
    commands = handler(store)
    first = await commands.send(init(command_id="k-1"), "alice")
    assert await commands.send(init(command_id="k-1"), "alice") == first and len(store.ledger) == 1


async def test_the_same_id_with_another_command_is_refused() -> None:
    commands = handler()
    await commands.send(init(command_id="k-1"), "alice")
    reused = await commands.send(init(command_id="k-1", mode="fast"), "alice")
    assert reused.error.code == "idempotency_key_reused" and reused.error.field == "command_id"


async def test_an_id_is_the_senders_own_on_its_aggregate() -> None:
    commands = handler()
    await commands.send(init("adr-1", command_id="k-1"), "alice")
    assert (await commands.send(init("adr-2", command_id="k-1"), "alice")).ok
    assert (await commands.send(CastVote(topic="adr-1", sha256=SHA, decision=Decision.SIGN, command_id="k-1"),
                                "bob")).ok


async def test_the_command_is_stored_with_the_context_it_was_decided_in() -> None:
    store = MemoryStore(fold_of)
    commands = handler(store)
    await keyed_human(commands)
    command = init(command_id="k-1", expires_in="1h")
    await commands.send(command, "ada", as_ada(commands, command))
    applied = await store.applied(CommandKey("ada", "adr-1", "k-1"))
    assert applied.record.route == "ratification.init" and applied.record.actor == "ada" and applied.record.at == NOW
    assert applied.record.actor_is_human and applied.record.humans_configured and applied.record.events == 1
    stored = msgspec.json.decode(applied.record.command, type=InitRatification)
    assert stored == init(command_id="k-1", expires_in="1h")
    [frozen] = msgspec.json.decode(applied.events)
    assert frozen["expires_at"] == (NOW + timedelta(hours=1)).isoformat().replace("+00:00", "Z")


async def test_a_derived_proposal_id_taken_by_another_proposal_moves_to_the_next() -> None:
    from athenaeum.aggregates.quorum import with_proposal_id

    commands = handler()
    propose = ProposeQuorum(text="t", electorate=["alice"], threshold=1, command_id="p-1")
    taken = with_proposal_id(propose, "alice", "p-1", 0).proposal_id
    await commands.send(msgspec.structs.replace(propose, proposal_id=taken, command_id="other"), "bob")
    reply = await commands.send(propose, "alice")
    [opened] = msgspec.json.decode(reply.events)
    assert reply.ok and opened["originator_id"] == "quorum:" + with_proposal_id(propose, "alice", "p-1", 1).proposal_id
    assert await commands.send(propose, "alice") == reply  # the retry finds it there
    assert (await commands.send(AckProposal(proposal_id=opened["originator_id"][7:]), "alice")).ok


class Flaky(MemoryStore):
    """A store whose next appends lose a race (nothing lands), or land with their answer lost."""

    def __init__(self, *failures: type[Exception]) -> None:
        super().__init__(fold_of)
        self.failures = list(failures)

    async def append(self, events, record: CommandRecord, key: CommandKey) -> int:
        failure = self.failures.pop(0) if self.failures else None
        if failure is Conflict:
            raise Conflict("lost a race")
        position = await super().append(events, record, key)
        if failure is Unconfirmed:
            raise Unconfirmed("the answer was lost")
        return position


async def test_a_lost_race_is_decided_again() -> None:
    store = Flaky(Conflict, Conflict)
    assert (await handler(store).send(init(), "alice")).ok and len(store.ledger) == 1


async def test_an_answer_lost_after_the_append_landed_is_answered_as_applied() -> None:
    store = Flaky(Unconfirmed)
    reply = await handler(store).send(init(command_id="k-9"), "alice")
    assert reply.ok and reply.position == 1 and len(store.ledger) == 1


async def test_an_answer_lost_before_anything_landed_says_to_send_it_again_with_its_id() -> None:
    class Lost(MemoryStore):
        async def append(self, events, record, key) -> int:
            raise Unconfirmed("timed out")

    reply = await handler(Lost(fold_of)).send(init(command_id="k-9"), "alice")
    assert reply.error.code == "unavailable" and reply.error.field == "command_id" and "'k-9'" in reply.error.message


async def test_commands_on_one_aggregate_take_turns_and_all_land() -> None:
    store = MemoryStore(fold_of)
    commands = handler(store)
    roster = [f"agent-{n}" for n in range(8)]
    await commands.send(InitRatification(topic="adr-1", roster=roster, artifact=ARTIFACT), "agent-0")
    votes = [CastVote(topic="adr-1", sha256=SHA, decision=Decision.SIGN) for _ in roster]
    replies = await asyncio.gather(*(commands.send(vote, agent) for vote, agent in zip(votes, roster)))
    assert all(reply.ok for reply in replies) and len(store.ledger) == 1 + 8 + 2


@pytest.mark.parametrize("actor", ["alice", "ada"])
async def test_a_human_decision_is_a_humans_alone(actor: str) -> None:
    from athenaeum.events.ratification import HumanChoice
    from athenaeum.events.ratification_commands import RecordHumanDecision

    commands = handler()
    await keyed_human(commands)
    await commands.send(init(roster=("bob",)), "alice")
    atom = {"atom": {"section": "s", "anchor": "a"}, "objection": "o", "proposed_resolution": "verifier"}
    dissent = msgspec.convert({"topic": "adr-1", "sha256": SHA, "decision": "DISSENT", "dissent": [atom]}, CastVote)
    await commands.send(dissent, "bob")
    decision = RecordHumanDecision(topic="adr-1", decision=HumanChoice.REJECT, command_id="d-1")
    reply = await commands.send(decision, actor, as_ada(commands, decision) if actor == "ada" else ASSERTED)
    assert reply.ok == (actor == "ada") and (reply.ok or reply.error.code == "not_human")


async def test_a_command_the_ledger_refuses_outright_says_so_and_that_nothing_was_written() -> None:
    class TooMany(MemoryStore):
        async def append(self, events, record, key) -> int:
            raise Refused("1001 records in one append; one holds at most 1000")

    reply = await handler(TooMany(fold_of)).send(init(command_id="k-9"), "alice")
    assert reply.error.code == "invalid" and "nothing was written" in reply.error.message


async def test_a_roster_naming_agents_the_fleet_does_not_list_is_taken_with_a_warning_naming_them() -> None:
    commands = handler()
    unlisted = await commands.send(init("adr-0", ("alice", "zed")), "alice")
    assert unlisted.ok and unlisted.warnings == []  # a fleet that lists no one: its roster is not in use
    await keyed_human(commands)
    register = RegisterAgent(name="alice", command_id="register-alice")
    assert (await commands.send(register, "ada", as_ada(commands, register))).ok
    ratification = await commands.send(init("adr-1", ("alice", "zed", "ada")), "alice")
    assert ratification.ok and len(ratification.warnings) == 1 and "zed;" in ratification.warnings[0]
    proposal = await commands.send(ProposeQuorum(text="Adopt", electorate=["alice", "yan", "zed"], threshold=1), "alice")
    assert proposal.ok and "not registered in the fleet: yan, zed;" in proposal.warnings[0]
    listed = await commands.send(init("adr-2", ("alice", "ada")), "alice")
    assert listed.ok and listed.warnings == []
