"""Who may act as whom, on the in-memory store: a principal the roster binds to a key acts
only with it (PROTOCOLS.md conventions: actor_mismatch, bad_signature, key_revoked)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import msgspec

from athenaeum.aggregates.families import fold_of
from athenaeum.events.commands import Command
from athenaeum.events.fleet import FLEET_ID
from athenaeum.events.fleet_commands import RegisterAgent, RevokeAgent, RotateKey
from athenaeum.events.quorum_commands import ProposeQuorum
from athenaeum.events.ratification_commands import InitRatification
from athenaeum.events.thread import Vector
from athenaeum.events.thread_commands import OpenThread
from athenaeum.services.commands import credentials
from athenaeum.services.commands.credentials import SERVICE, TIMER_ACTOR, Credential
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.store import CommandKey, CommandStore, MemoryStore
from athenaeum.services.identity.keys import key_pair, new_seed, public_key
from athenaeum.services.jetstream.factory import stream_config
from tests.conftest import new_stream_name

ADA, ALICE = key_pair(new_seed()), key_pair(new_seed())


def signed(store: CommandStore, pair, command: Command, actor: str, at: datetime | None = None) -> Credential:  # type: ignore[no-untyped-def]
    return credentials.signed(pair, store.ledger_id, command, actor, at)


async def fleet(store: CommandStore | None = None, humans: frozenset[str] = frozenset({"ada"})
                ) -> tuple[CommandHandler, CommandStore]:
    """ada, the deployment's human, and alice, registered by her, each with a key."""
    store = store or MemoryStore(fold_of)
    handler = CommandHandler(store, humans=humans)
    register_ada = RegisterAgent(name="ada", human=True, public_key=public_key(ADA), command_id="h")
    assert (await handler.send(register_ada, "ada", SERVICE)).ok
    register = RegisterAgent(name="alice", public_key=public_key(ALICE), command_id="r")
    assert (await handler.send(register, "ada", signed(store, ADA, register, "ada"))).ok
    return handler, store


def init(topic: str) -> InitRatification:
    return InitRatification(topic=topic, roster=["alice"], artifact="# A\n", command_id=f"init-{topic}")


async def test_a_signed_command_is_stored_with_its_signature_and_key() -> None:
    handler, store = await fleet()
    command = init("adr-1")
    assert (await handler.send(command, "alice", signed(store, ALICE, command, "alice"))).ok
    applied = await store.applied(CommandKey("alice", "adr-1", "init-adr-1"))
    assert applied is not None and applied.record.proof.by == "signature"
    assert applied.record.proof.public_key == public_key(ALICE)


async def test_a_bound_principal_cannot_act_unsigned_or_with_another_key() -> None:
    handler, store = await fleet()
    command = init("adr-1")
    unsigned = await handler.send(command, "alice")
    assert unsigned.error.code == "bad_signature" and unsigned.error.field == "signature"
    as_ada = await handler.send(command, "ada", signed(store, ALICE, command, "ada"))
    assert as_ada.error.code == "bad_signature"
    other_ledger = MemoryStore(fold_of)
    elsewhere = await handler.send(command, "alice", signed(other_ledger, ALICE, command, "alice"))
    assert elsewhere.error.code == "bad_signature"  # signed for another deployment
    stale = await handler.send(command, "alice", signed(store, ALICE, command, "alice",
                                                           datetime.now(timezone.utc) - timedelta(hours=1)))
    assert stale.error.code == "bad_signature" and stale.error.field == "signed_at"
    assert len(store.ledger) == 2  # the registrations only


async def test_an_unregistered_signer_and_a_service_name_are_refused() -> None:
    handler, store = await fleet()
    stranger = key_pair(new_seed())
    command = init("adr-2")
    assert (await handler.send(command, "bob", signed(store, stranger, command, "bob"))).error.code == "bad_signature"
    assert (await handler.send(command, TIMER_ACTOR)).error.code == "actor_mismatch"
    assert len(store.ledger) == 2


async def test_a_rotated_key_replaces_the_old_and_a_revoked_one_acts_no_more() -> None:
    handler, store = await fleet()
    new = key_pair(new_seed())
    rotate = RotateKey(name="alice", public_key=public_key(new), command_id="rot")
    assert (await handler.send(rotate, "alice", signed(store, ALICE, rotate, "alice"))).ok
    command = init("adr-3")
    assert (await handler.send(command, "alice", signed(store, ALICE, command, "alice"))).error.code == "bad_signature"
    assert (await handler.send(command, "alice", signed(store, new, command, "alice"))).ok
    revoke = RevokeAgent(name="alice", reason="lost laptop", command_id="rev")
    assert (await handler.send(revoke, "ada", signed(store, ADA, revoke, "ada"))).ok
    later = init("adr-4")
    refused = await handler.send(later, "alice", signed(store, new, later, "alice"))
    assert refused.error.code == "key_revoked" and refused.error.field == "actor"


async def test_a_key_binds_one_principal_and_only_its_owner_or_a_human_rotates_it() -> None:
    handler, store = await fleet()
    taken = RegisterAgent(name="bob", public_key=public_key(ALICE), command_id="b")
    reply = await handler.send(taken, "ada", signed(store, ADA, taken, "ada"))
    assert reply.error.code == "already_exists" and reply.error.field == "public_key"
    malformed = RegisterAgent(name="bob", public_key="Unot-a-key", command_id="b2")
    assert (await handler.send(malformed, "ada", signed(store, ADA, malformed, "ada"))).error.code == "invalid"
    bob = key_pair(new_seed())
    register = RegisterAgent(name="bob", public_key=public_key(bob), command_id="b3")
    assert (await handler.send(register, "ada", signed(store, ADA, register, "ada"))).ok
    hijack = RotateKey(name="alice", public_key=public_key(key_pair(new_seed())), command_id="hj")
    assert (await handler.send(hijack, "bob", signed(store, bob, hijack, "bob"))).error.code == "not_human"


async def test_a_signed_command_names_its_id_so_its_bytes_cannot_be_applied_again() -> None:
    handler, store = await fleet()
    command = InitRatification(topic="adr-5", roster=["alice"], artifact="# A\n")
    refused = await handler.send(command, "alice", signed(store, ALICE, command, "alice"))
    assert refused.error.code == "invalid" and refused.error.field == "command_id" and len(store.ledger) == 2


async def test_a_name_the_flag_calls_human_is_not_once_the_roster_names_the_humans() -> None:
    """serve restarted with --humans ada,mallory: the ledger's humans are ada alone."""
    _, store = await fleet()
    restarted = CommandHandler(store, humans=frozenset({"ada", "mallory"}))
    hijack = RotateKey(name="ada", public_key=public_key(key_pair(new_seed())), command_id="hj")
    assert (await restarted.send(hijack, "mallory")).error.code == "not_human"
    unsigned = await restarted.send(RegisterAgent(name="minion", human=True, command_id="m"), "ada")
    assert unsigned.error.code == "bad_signature" and len(store.ledger) == 2


async def test_a_replica_that_read_the_roster_before_a_revocation_refuses_the_revoked_key(
        store: CommandStore, nats_server) -> None:  # type: ignore[no-untyped-def]
    handler, store = await fleet(store)
    replica_store = await JetStreamCommandStore.open([nats_server.url], stream_config(store.log.stream, 1, immutable=True),
                                                     fold_of) if isinstance(store, JetStreamCommandStore) else store
    replica = CommandHandler(replica_store, humans=frozenset({"ada"}))
    first = init("adr-6")
    assert (await replica.send(first, "alice", signed(replica_store, ALICE, first, "alice"))).ok  # the roster, read
    revoke = RevokeAgent(name="alice", command_id="rev")
    assert (await handler.send(revoke, "ada", signed(store, ADA, revoke, "ada"))).ok
    later = init("adr-7")
    refused = await replica.send(later, "alice", signed(replica_store, ALICE, later, "alice"))
    assert refused.error.code == "key_revoked"
    if replica_store is not store:
        await replica_store.close()


async def test_a_replica_watching_the_roster_reads_it_only_when_someone_changed_it(nats_server) -> None:  # type: ignore[no-untyped-def]
    handler, store = await fleet(await JetStreamCommandStore.open(
        [nats_server.url], stream_config(new_stream_name(), 1, immutable=True), fold_of))
    assert isinstance(store, JetStreamCommandStore)
    replica_store = await JetStreamCommandStore.open([nats_server.url], stream_config(store.log.stream, 1, immutable=True),
                                                     fold_of)
    await replica_store.watch(FLEET_ID)
    reads = []
    history = replica_store.log.history

    async def counted(aggregate_id, after=0):  # type: ignore[no-untyped-def]
        reads.append(aggregate_id)
        return await history(aggregate_id, after)

    replica_store.log.history = counted  # type: ignore[method-assign]
    replica = CommandHandler(replica_store, humans=frozenset({"ada"}))
    for topic in ("adr-8", "adr-9", "adr-10"):
        command = init(topic)
        assert (await replica.send(command, "alice", signed(replica_store, ALICE, command, "alice"))).ok
    assert reads.count(FLEET_ID) == 1  # read once; nobody changed it since
    revoke = RevokeAgent(name="alice", command_id="rev")
    assert (await handler.send(revoke, "ada", signed(store, ADA, revoke, "ada"))).ok  # by the other replica
    deadline = asyncio.get_running_loop().time() + 10
    while (roster := await replica_store.load(FLEET_ID, fresh=True)) is not None and "alice" not in roster.revoked:
        assert asyncio.get_running_loop().time() < deadline, "the watch never saw the revocation"
        await asyncio.sleep(0.01)  # poll interval of a bounded wait for the subscription's message
    later = init("adr-11")
    assert (await replica.send(later, "alice", signed(replica_store, ALICE, later, "alice"))).error.code == "key_revoked"
    await replica_store.close()
    await store.close()


async def test_a_signed_command_the_service_completed_is_answered_again_on_its_retry(store: CommandStore) -> None:
    """The proposal id the service derives: the record keeps the command as it was signed."""
    handler, store = await fleet(store)
    propose = ProposeQuorum(text="t", electorate=["alice"], threshold=1, command_id="p-1")
    first = await handler.send(propose, "alice", signed(store, ALICE, propose, "alice"))
    again = await handler.send(propose, "alice", signed(store, ALICE, propose, "alice"))
    assert first.ok and again == first
    applied = await store.applied(CommandKey("alice", msgspec.json.decode(first.events)[0]["originator_id"], "p-1"))
    assert applied.record.proof.command == msgspec.json.encode(propose).decode()


async def test_a_command_signed_as_built_verifies_as_the_service_reads_it() -> None:
    """Ints where the command has floats are signed as the floats the service decodes."""
    handler, store = await fleet()
    opened = OpenThread(slug="t-1", context="c", target=Vector(1, 1, 1), body="b", command_id="open-t-1")
    received = msgspec.json.decode(msgspec.json.encode(opened), type=OpenThread)  # as it arrives over the wire
    assert (await handler.send(received, "alice", signed(store, ALICE, opened, "alice"))).ok
