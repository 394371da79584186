"""The command store on JetStream: the ledger's own stream, read and written on the command
service's event loop (no thread between a command and its append).

Each aggregate the service touches is kept with the key of every command that decided on it
(its first event carries it), so a retried command is recognised without a read: its key is
among them, as of the state the command would be decided on, and an append on a state that
changed since fails its expectation. Only a command found applied costs a read, for its first
answer.

A message on an aggregate's subject that is no event the ledger can hold (one that does not
decode, a snapshot, one stored as another aggregate's) is passed over, as one without our
headers is, and logged: commands on the aggregate go on deciding on its valid history, and the
audit reports the message at its position.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from eventsourcing.persistence import IntegrityError, JSONTranscoder, OperationalError, ProgrammingError
from nats.aio.msg import Msg

from athenaeum.aggregates.application import EventMapper
from athenaeum.aggregates.family import Fold
from athenaeum.events import Event
from athenaeum.events.commands import CommandRecord, decode_record
from athenaeum.services.commands.store import (
    AlreadyApplied, Applied, Appending, CommandKey, Conflict, Refused, Unconfirmed, events_json, record_bytes,
)
from athenaeum.services.jetstream.client import AppendRefused, JetStreamClient
from athenaeum.services.jetstream import applied as stored
from athenaeum.services.jetstream.command_records import COMMAND_KEY, AppliedCommand, CommandAlreadyApplied, CommandAppend
from athenaeum.services.jetstream.entries import Entry, Unreadable
from athenaeum.services.jetstream.log import StreamLog
from athenaeum.services.jetstream.messages import Stored
from athenaeum.services.jetstream.positions import LRU
from athenaeum.services.jetstream.subjects import command_token

CACHE_SIZE = 10_000  # aggregates kept in memory
REPORTED_KEPT = 10_000  # unreadable messages already logged, not logged again on each read
log = logging.getLogger(__name__)


class Known(NamedTuple):
    """An aggregate as this store last saw it: its state, the stream sequence of its last
    event, where the first event of each command decided on it is (by its key's token), and
    the events this store appended since that state, folded in only once the state is asked
    for (an import appends to thousands of aggregates and asks for few of them again)."""

    state: Any
    head: int
    commands: dict[str, int]
    unfolded: tuple[Event, ...] = ()


class JetStreamCommandStore:
    def __init__(self, log: StreamLog, fold_of: Callable[[str], Fold], cache_size: int = CACHE_SIZE) -> None:
        self.log = log
        self.fold_of = fold_of
        self.mapper = EventMapper(transcoder=JSONTranscoder())
        self.log.readable = self._readable
        self._reported: LRU[int, bool] = LRU(REPORTED_KEPT)
        self._known: LRU[str, Known] = LRU(cache_size)
        # Watched aggregates: the connection (by its count of drops) since which none changed; None: it may have.
        self._unchanged_since: dict[str, int | None] = {}

    @classmethod
    async def open(cls, urls: Sequence[str], config: dict[str, object], fold_of: Callable[[str], Fold],
                   timeout: float = 5.0, key: Path | None = None, create: bool = True) -> JetStreamCommandStore:
        """A store on its own connection, made on (and for) the running loop; ``config``: the
        ledger stream's, as the eventsourcing factory has it."""
        client = await JetStreamClient.connect(urls, timeout, name="athenaeum:commands", key=key)
        try:
            facts = await client.ensure_stream(config, create)
        except BaseException:
            await client.close()
            raise
        return cls(StreamLog(client, str(config["name"]), replicated=facts.replicas > 1, ledger_id=facts.ledger_id),
                   fold_of)

    @property
    def ledger_id(self) -> str:
        return self.log.ledger_id

    async def close(self) -> None:
        await self.log.client.close()

    async def watch(self, aggregate_id: str) -> None:
        """Know when anyone, this process or another replica, appends to ``aggregate_id``, so
        that a fresh load of it reads nothing while nothing was: a subscription to its subject
        sees every message as the server stores it, and a dropped connection counts as a
        change, since one may have been missed meanwhile. For an aggregate nearly every
        command reads afresh and few change (the fleet roster, which proves who sends)."""
        self._unchanged_since[aggregate_id] = None

        async def appended(message: Msg) -> None:
            self._unchanged_since[aggregate_id] = None

        await self.log.client.nc.subscribe(self.log.subjects.aggregate(aggregate_id), cb=appended)
        await self.log.client.nc.flush()  # watching from now on

    async def load(self, aggregate_id: str, *, fresh: bool = False) -> Any:
        known = self._known.get(aggregate_id)
        connection = self.log.client.disconnections
        if known is not None and (not fresh or self._unchanged_since.get(aggregate_id, -1) == connection):
            return self._state(aggregate_id, known)
        if aggregate_id in self._unchanged_since:  # before the read: a message seen during it undoes this
            self._unchanged_since[aggregate_id] = connection
        try:
            messages = await self.log.history(aggregate_id, after=known.head if known else 0)
        except OperationalError as error:
            raise Unconfirmed(str(error)) from error
        if known is not None and not messages:
            return self._state(aggregate_id, known)
        events = [self._event(message) for message in messages]
        state = self.fold_of(aggregate_id)(self._state(aggregate_id, known) if known else None, events)
        commands = known.commands if known else {}  # grown in place: an aggregate may hold many commands
        commands.update((token, message.seq) for message in messages if (token := message.headers.get(COMMAND_KEY)))
        self._known.put(aggregate_id, Known(state, messages[-1].seq if messages else 0, commands))
        return state

    def presume_new(self, aggregate_ids: Sequence[str]) -> None:
        for aggregate_id in aggregate_ids:
            if self._known.get(aggregate_id) is None:
                self._known.put(aggregate_id, Known(self.fold_of(aggregate_id)(None, []), 0, {}))

    async def applied(self, key: CommandKey) -> Applied | None:
        token = command_token(key.text)
        try:
            if not key.scoped:
                found = await stored.applied_marker(self.log, token)
                return None if found is None else _answer(found)
            known = self._known.get(key.aggregate_id)
            if known is None:
                first = await stored.first_of_command(self.log, key.aggregate_id, token)
            elif (seq := known.commands.get(token)) is None:
                return None  # every command decided on the aggregate up to the state loaded is known
            else:
                first = await stored.message_at(self.log, key.aggregate_id, seq)
            found = None if first is None else await stored.applied(self.log, first)
        except OperationalError as error:
            raise Unconfirmed(str(error)) from error
        return None if found is None else _answer(found)

    async def append(self, events: Sequence[Event], record: CommandRecord, key: CommandKey) -> int:
        return (await self.append_together([Appending(events, record, key)]))[0].position

    async def append_together(self, commands: Sequence[Appending]) -> list[Applied]:
        carried = [CommandAppend(command_token(key.text), record_bytes(record), global_id=not key.scoped)
                   for _, record, key in commands]
        parts = [([self.mapper.to_stored_event(event) for event in command.events], append)
                 for command, append in zip(commands, carried)]
        try:
            positions = await self.log.append_commands(parts)
        except CommandAlreadyApplied as already:
            key = next(command.key for command, append in zip(commands, carried) if append.token == already.token)
            applied = await self.applied(key)
            if applied is None:  # its marker is there, so its events are: a read that lags
                raise Conflict(f"command {key.command_id!r} is applied but not readable yet") from None
            raise AlreadyApplied(applied) from None
        except IntegrityError as error:
            raise Conflict(str(error)) from error
        except (ProgrammingError, AppendRefused) as error:  # refused before, or instead of, storing anything
            raise Refused(str(error)) from error
        except OperationalError as error:
            raise Unconfirmed(str(error)) from error
        for command, append, at in zip(commands, carried, positions):
            self._remember(command.events, at, append.token)
        # Answered with the events as stored, as a retry of the command is (see ``_answer``).
        return [Applied(command.record, at[-1], events_json([event.state for event in part]))
                for command, (part, _), at in zip(commands, parts, positions)]

    def _remember(self, events: Sequence[Event], positions: Sequence[int], token: str) -> None:
        """Keep the appended events with the aggregates they went to (folded in once asked for),
        where the store knew each exactly as the command was decided on (or it is new); forget
        the others. The command's key goes with its own aggregate, whose first event carries it."""
        by_aggregate: dict[str, list[tuple[Event, int]]] = {}
        for event, position in zip(events, positions):
            by_aggregate.setdefault(event.originator_id, []).append((event, position))
        for aggregate_id, appended in by_aggregate.items():
            known = self._known.get(aggregate_id)
            first = appended[0][0].originator_version
            state = self._state(aggregate_id, known) if known is not None else None
            before = state.version if state is not None else 0
            if (known is None and first != 1) or first != before + 1:
                self._known.forget(aggregate_id)
                continue
            commands = known.commands if known else {}
            if aggregate_id == events[0].originator_id:
                commands[token] = appended[0][1]
            unfolded = tuple(event for event, _ in appended)
            self._known.put(aggregate_id, Known(state, appended[-1][1], commands, unfolded))

    def _state(self, aggregate_id: str, known: Known) -> Any:
        """``known``'s state with the events appended since folded in, kept so unless the
        aggregate was put anew meanwhile."""
        if not known.unfolded:
            return known.state
        state = self.fold_of(aggregate_id)(known.state, known.unfolded)
        if self._known.get(aggregate_id) is known:
            self._known.put(aggregate_id, known._replace(state=state, unfolded=()))
        return state

    def _event(self, message: Stored) -> Event:
        return Entry.of(message).event(self.mapper)

    def _readable(self, message: Stored) -> bool:
        try:
            self._event(message)
        except Unreadable as unreadable:
            if self._reported.get(message.seq) is None:
                self._reported.put(message.seq, True)
                log.error("%s: the message at %d on %s is passed over, no event the ledger can hold (%s: %s); "
                          "the audit reports it", self.log.stream, message.seq, message.subject, unreadable.code,
                          unreadable.message)
            return False
        return True


def _answer(found: AppliedCommand) -> Applied:
    return Applied(decode_record(found.record), found.events[-1].seq, events_json([m.payload for m in found.events]))
