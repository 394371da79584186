"""The steps every command takes: load, decide, append with the command's record, retry a
lost race, reply. It runs on the command service's event loop, standing on a ``CommandStore``.

A decision is first made on the state the store last saw: an append checks that state is
still the latest, so a stale one costs a retry, never a wrong write; a refusal, or a decision
to append nothing, is made again on a fresh read before it is answered.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from datetime import datetime, timezone
from typing import Any, NamedTuple
from weakref import WeakValueDictionary

import msgspec

from athenaeum.aggregates.context import Context, Member
from athenaeum.aggregates.rules import NotHuman, RuleViolation
from athenaeum.aggregates.fleet import Fleet
from athenaeum.events.commands import Command, CommandRecord, Proof
from athenaeum.events.fleet import FLEET_ID
from athenaeum.events.ratification_commands import InitRatification
from athenaeum.projectors import a2a_tasks
from athenaeum.services.commands.credentials import ASSERTED, Credential, authenticate, token_sha256
from athenaeum.services.commands.replies import NO_EVENTS, Reply, encode_events
from athenaeum.services.commands.routes import BY_COMMAND, Route
from athenaeum.services.commands.store import (
    MAX_RECORDS, AlreadyApplied, Applied, Appending, CommandKey, CommandStore, Conflict, Refused, Unconfirmed,
)

ATTEMPTS = 8
log = logging.getLogger(__name__)
BACKOFF = 0.002  # seconds: the first lost race's longest pause
_encoder = msgspec.json.Encoder()


class Decided(NamedTuple):
    """What a command appends, and its fingerprint."""

    appending: Appending
    digest: str


class Activity(NamedTuple):
    """The fleet's agents with their last activity, and the ledger position that reflects."""

    members: tuple[Member, ...]
    position: int | None


NO_ACTIVITY = Activity((), None)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def fingerprint(command: Command) -> str:
    """Of what a command says, its id aside: the same id sent with another command shows."""
    return hashlib.sha256(_encoder.encode(msgspec.structs.replace(command, command_id=None))).hexdigest()


def scoped(route: Route, command_id: str) -> bool:
    """Whether a command id is its sender's own on its aggregate; an A2A task's id names one
    ratification for everyone, whoever sends it (only the A2A gateway sends such ids)."""
    return not (route.command is InitRatification and command_id.startswith(a2a_tasks.COMMAND_PREFIX))


class CommandHandler:
    def __init__(
        self,
        store: CommandStore,
        humans: frozenset[str] = frozenset(),
        clock: Callable[[], datetime] = utc_now,
        activity: Callable[[], Activity] = lambda: NO_ACTIVITY,
        on_roster: Callable[[Fleet], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.humans = humans  # the deployment's; the fleet roster may register more
        self.clock = clock
        self.activity = activity  # the fleet's members as the read models last saw them (blocking: a thread's)
        # Told of the roster each fleet command leaves, before its sender is answered: the NATS
        # server then admits a key registered just now, and no longer one revoked.
        self.on_roster = on_roster
        # Commands on one aggregate take turns within this process; optimistic concurrency
        # then only arbitrates between replicas, instead of tasks here losing to each other.
        self._turns: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()

    async def send(self, command: Command, actor: str, credential: Credential = ASSERTED) -> Reply:
        """Decide ``command`` as ``actor``, who must be who ``credential`` proves, and append
        what it decides, once, however often it is sent with its ``command_id``."""
        route = BY_COMMAND[type(command)]
        proven = await self._authenticate(route, command, actor, credential)
        if isinstance(proven, Reply):
            return proven
        actor, proof = proven
        if command.command_id is None:
            command = msgspec.structs.replace(command, command_id=uuid.uuid4().hex)
        reply = Reply.rejected("conflict", "no id could be derived")
        try:
            for attempt in range(route.attempts):
                concrete = route.assign(command, actor, command.command_id, attempt) if route.assign else command
                reply = await self._handle(route, concrete, actor, proof)
                # A derived id someone else's record already has: derive the next one.
                if concrete == command or reply.ok or reply.error is None or reply.error.code != "already_exists":
                    break
        except Exception as error:  # noqa: BLE001  the caller must learn the id that makes a retry safe
            log.exception("%s failed", route.name)
            return Reply.rejected("unavailable", f"the command could not be processed ({error!r}): send it again "
                                  f"with command_id {command.command_id!r}, which applies it at most once",
                                  "command_id", command.command_id)
        if reply.ok and self.on_roster is not None and route.family.aggregate_of(command) == FLEET_ID:
            await self.on_roster(await self.store.load(FLEET_ID, fresh=True))
        if not reply.ok:
            return reply
        return msgspec.structs.replace(reply, warnings=route.advise(command) + await self._unregistered(command))

    async def _unregistered(self, command: Command) -> list[str]:
        """A warning naming the agents ``command`` asks to take part whom the fleet's roster, once
        it lists anyone, does not: a server that authenticates agents admits none of them yet."""
        named = [name for field in command.names_agents for name in _names(getattr(command, field))]
        try:
            roster = await self.store.load(FLEET_ID, fresh=False) if named else None
        except Unconfirmed:  # a warning is advice: the command is appended and answered all the same
            return []
        if roster is None or not (roster.agents or roster.humans):
            return []
        listed = {*roster.agents, *roster.humans}
        missing = [name for name in dict.fromkeys(named) if name not in listed]
        if not missing:
            return []
        return [f"not registered in the fleet: {', '.join(missing)}; a server that authenticates agents admits them "
                f"once registered (athenaeum agent register NAME)"]

    async def send_together(self, commands: Sequence[tuple[Command, Credential]], actor: str) -> list[Reply]:
        """Each command sent by ``actor`` with its credential, answered as ``send`` answers it,
        in order; those that append on what this process knew, each on an aggregate of its own,
        are appended together, one write to the ledger instead of one each (``athenaeum import``
        sends its records so). Any other (refused at first sight, applied before, on an aggregate
        another here writes too, one that lost a race) is then sent alone, as ``send`` sends it."""
        replies: list[Reply | None] = [None] * len(commands)
        together: dict[int, tuple[Route, Command, str, Proof]] = {}
        aggregates = {FLEET_ID}  # the roster's commands tell the NATS server of it, one by one
        await self.store.load(FLEET_ID, fresh=True)  # once for all of them: each is checked on it
        for index, (command, credential) in enumerate(commands):
            route = BY_COMMAND[type(command)]
            proven = await self._authenticate(route, command, actor, credential, roster_read=True)
            if isinstance(proven, Reply):
                replies[index] = proven
            elif command.command_id is not None and route.assign is None and (
                    aggregate := route.family.aggregate_of(command)) not in aggregates:
                aggregates.add(aggregate)
                together[index] = (route, command, *proven)
        try:
            await self._append_together(together, replies)
        except Exception:  # noqa: BLE001  each is sent alone below, which answers with what became of it
            log.exception("commands sent together failed; each is sent alone")
        for index, (command, credential) in enumerate(commands):
            if replies[index] is None:
                replies[index] = await self.send(command, actor, credential)
        return [reply for reply in replies if reply is not None]

    async def _append_together(self, together: dict[int, tuple[Route, Command, str, Proof]],
                               replies: list[Reply | None]) -> None:
        """Decide each of ``together``, answer those applied before, and append those decided,
        at most MAX_RECORDS records at a time: first with each aggregate the store has not seen
        presumed new, unread (the append expects it so); then, for those a wrong guess or a
        lost race left unanswered, on each aggregate read afresh."""
        aggregates = {index: route.family.aggregate_of(command) for index, (route, command, _, _) in together.items()}
        async with AsyncExitStack() as turns:
            # Always in one order: two batches never wait on each other.
            for aggregate_id in sorted(aggregates.values()):
                await turns.enter_async_context(self._turn(aggregate_id))
            for fresh in (False, True):
                left = [index for index in together if replies[index] is None]
                if fresh:
                    await asyncio.gather(*(self.store.load(aggregates[index], fresh=True) for index in left))
                else:
                    self.store.presume_new([aggregates[index] for index in left])
                decided: list[tuple[int, Decided]] = []
                touched: set[str] = set()  # the aggregates the commands decided so far append to
                for index in left:
                    outcome = await self._decide(*together[index], fresh=False)  # (read afresh just now)
                    if isinstance(outcome, Reply):
                        replies[index] = outcome
                    elif outcome is not None:
                        # One that appends to another's aggregate too (an imported task, to the
                        # task-ids counter) was decided on the state before it: it is sent alone.
                        appends_to = {event.originator_id for event in outcome.appending.events}
                        if not appends_to & touched:
                            touched |= appends_to
                            decided.append((index, outcome))
                for chunk in _chunks(decided):
                    try:
                        appended = await self.store.append_together([each.appending for _, each in chunk])
                    except (AlreadyApplied, Conflict, Refused, Unconfirmed):
                        continue  # decided again, or sent alone, which finds out what became of each
                    for (index, _), applied in zip(chunk, appended):
                        route, command = together[index][:2]
                        replies[index] = msgspec.structs.replace(Reply.accepted(applied.position, applied.events),
                                                                 warnings=route.advise(command))

    async def load(self, aggregate_id: str) -> Any:
        """An aggregate's current state (None: no events yet), read afresh."""
        return await self.store.load(aggregate_id, fresh=True)

    def _turn(self, aggregate_id: str) -> asyncio.Lock:
        turn = self._turns.get(aggregate_id)
        if turn is None:
            turn = self._turns[aggregate_id] = asyncio.Lock()
        return turn

    async def _authenticate(self, route: Route, command: Command, actor: str, credential: Credential,
                            roster_read: bool = False) -> tuple[str, Proof] | Reply:
        """Who sends ``command`` as received (named by nobody: the holder of the connection's key
        or of the token), and the
        proof. A signature or a token is checked on the roster read afresh (another replica may
        have rotated or revoked the key just now); an unproven sender on the roster this
        process knows, and afresh before it is refused. ``roster_read``: the caller has just read
        the roster afresh, for commands sent together."""
        if not scoped(route, command.command_id or "") and credential.connection_key is not None:
            return Reply.rejected("invalid", f"command ids starting {a2a_tasks.COMMAND_PREFIX!r} name A2A tasks, which "
                                  "only the A2A gateway opens: send the task through /a2a", "command_id")
        if credential.signature is not None and command.command_id is None:
            return Reply.rejected("invalid", "a signed command carries its own command_id: without one, its signed "
                                  "bytes could be applied again as another command", "command_id")
        received = _encoder.encode(command) if credential.signature is not None else b""  # what a signature signs
        proven = credential.signature is not None or credential.token is not None
        for fresh in (True,) if proven or roster_read else (False, True):
            roster = await self.store.load(FLEET_ID, fresh=fresh and not roster_read)
            if not actor and roster is not None:  # named by what proves it: the connection's key, or a token
                if credential.connection_key:
                    actor = roster.holder_of(credential.connection_key) or ""
                elif credential.token is not None:
                    actor = roster.tokens.get(token_sha256(credential.token), "")
            try:
                human = self._is_human(actor, roster)
                # A signature's time is the signer's wall clock: checked against ours, not the decisions' clock.
                proof = authenticate(credential, actor, route.name, received, roster, self.store.ledger_id, utc_now(),
                                     human=human)
                if route.humans_only and not human:  # on the roster read afresh, a human proves it as humans do
                    raise NotHuman(f"{route.name} records history as found, outcomes no vote here decided included: "
                                   f"only a human sends it, and {actor!r} is none", "actor")
                break
            except RuleViolation as violation:
                if fresh:
                    return Reply.rejected(violation.code, violation.message, violation.field)
        # What was signed is kept as signed: the service may fill in what it was sent without (an id).
        return actor, proof if proof.signature is None else msgspec.structs.replace(proof, command=received.decode())

    def _is_human(self, actor: str, roster: Fleet | None) -> bool:
        """Human by the roster once it names its humans; until then, by the deployment's flag."""
        if roster is not None and roster.humans:
            return actor in roster.humans
        return actor in self.humans

    async def _handle(self, route: Route, command: Command, actor: str, proof: Proof) -> Reply:
        aggregate_id = route.family.aggregate_of(command)
        async with self._turn(aggregate_id):
            for attempt in range(ATTEMPTS):
                decided = await self._decide(route, command, actor, proof, fresh=attempt > 0)
                if decided is None:
                    continue  # refused, or nothing to append, on what this process knew: look again
                if isinstance(decided, Reply):
                    return decided
                try:
                    position = await self.store.append(*decided.appending)
                except AlreadyApplied as applied:
                    return _replay(applied.applied, decided.digest)
                except Conflict:
                    # Another writer got there first: decide again on the new state, after a random
                    # pause that grows, so replicas racing on one aggregate (the task counter) spread out.
                    await asyncio.sleep(random.uniform(0, BACKOFF * 2**attempt))
                    continue
                except Refused as error:
                    return Reply.rejected("invalid", f"{route.name} cannot be recorded: {error}; nothing was written")
                except Unconfirmed as error:
                    return await self._outcome_unknown(decided.appending.key, decided.digest, error)
                return Reply.accepted(position, encode_events(decided.appending.events))
        return Reply.rejected("conflict", f"{aggregate_id!r} kept changing: lost {ATTEMPTS} races in a row")

    async def _decide(self, route: Route, command: Command, actor: str, proof: Proof, fresh: bool
                      ) -> Decided | Reply | None:
        """What ``command`` appends, decided on the state last seen (``fresh``: read afresh), or
        its answer when it appends nothing: its first answer if it was applied, its refusal.
        None: refused, or nothing to append, on a state not read afresh."""
        aggregate_id = route.family.aggregate_of(command)
        assert command.command_id is not None
        key = CommandKey(actor, aggregate_id, command.command_id, scoped(route, command.command_id))
        canonical = _encoder.encode(command)
        digest = fingerprint(command)
        state = await self.store.load(aggregate_id, fresh=fresh)
        roster = await self.store.load(FLEET_ID, fresh=fresh)
        now = self.clock()  # at each attempt: a command that lost a race is not stamped before the winner
        if (first := await self.store.applied(key)) is not None:
            return _replay(first, digest)
        context = await self._context(route, command, state, roster, actor, now, fresh)
        try:
            events = route.family.decide(state, command, context)
        except RuleViolation as violation:
            return Reply.rejected(violation.code, violation.message, violation.field) if fresh else None
        if not events:
            return Reply.accepted(None, NO_EVENTS) if fresh else None
        if events[0].originator_id != aggregate_id:
            raise AssertionError(f"{route.name} decided first on {events[0].originator_id}, not {aggregate_id}")
        signed_as_decided = proof.command is not None and proof.command.encode() == canonical
        record = _record(route, canonical, command.reads_fleet, context, digest, len(events), key.scoped,
                         msgspec.structs.replace(proof, command=None) if signed_as_decided else proof)
        return Decided(Appending(events, record, key), digest)

    async def _context(self, route: Route, command: Command, state: Any, roster: Fleet | None, actor: str,
                       now: datetime, fresh: bool) -> Context:
        states = {other: await self.store.load(other, fresh=fresh) for other in route.family.reads(command, state)}
        activity = await asyncio.to_thread(self.activity) if command.reads_fleet else NO_ACTIVITY
        return Context(
            actor=actor,
            now=now,
            command_id=command.command_id or "",
            actor_is_human=self._is_human(actor, roster),
            humans_configured=bool(self.humans),
            members=activity.members,
            as_of_position=activity.position,
            states=states,
        )

    async def _outcome_unknown(self, key: CommandKey, digest: str, error: Unconfirmed) -> Reply:
        """The append's answer was lost (a timeout, a leader change): it may have landed, and
        may yet. The ledger says if it has; else the caller is told to send it again, which
        applies it at most once, rather than that it failed for good."""
        try:
            await self.store.load(key.aggregate_id, fresh=True)
            earlier = await self.store.applied(key)
        except Unconfirmed:
            earlier = None
        if earlier is not None:
            return _replay(earlier, digest)
        return Reply.rejected(
            "unavailable", f"the ledger did not confirm the command ({error}): send it again with command_id "
            f"{key.command_id!r}, which applies it at most once", "command_id", key.command_id)


def _names(value: str | list[str] | None) -> list[str]:
    """The agents a field names: a list of them, one, or none."""
    return [] if value is None else [value] if isinstance(value, str) else value


def _chunks(decided: list[tuple[int, Decided]]) -> list[list[tuple[int, Decided]]]:
    """``decided`` in runs of at most MAX_RECORDS records, counting a marker for each command."""
    chunks: list[list[tuple[int, Decided]]] = [[]]
    records = 0
    for each in decided:
        size = len(each[1].appending.events) + 1
        if chunks[-1] and records + size > MAX_RECORDS:
            chunks.append([])
            records = 0
        chunks[-1].append(each)
        records += size
    return [chunk for chunk in chunks if chunk]


def _record(route: Route, command: bytes, reads_fleet: bool, context: Context, digest: str, events: int,
            scoped: bool, proof: Proof) -> CommandRecord:
    return CommandRecord(
        route=route.name, command=msgspec.Raw(command), fingerprint=digest, actor=context.actor,
        at=context.now, events=events, scoped=scoped, actor_is_human=context.actor_is_human,
        humans_configured=context.humans_configured,
        as_of_position=context.as_of_position if reads_fleet else None, proof=proof,
    )


def _replay(applied: Applied, digest: str) -> Reply:
    """The first answer to a command, for its retry; a different command under the same id is
    refused (nothing is appended either way)."""
    if applied.record.fingerprint != digest:
        return Reply.rejected("idempotency_key_reused", "this command id was already used for a different "
                              "command; use a new one", "command_id")
    return Reply.accepted(applied.position, applied.events)

