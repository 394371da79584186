"""The port the command handler stands on: load an aggregate's state, find a command already
applied, append a command's events with its record. The JetStream store is one adapter
(``jetstream_store``); ``MemoryStore`` here is another, for tests that need no server. Both
pass one contract test (tests/services/commands/test_store_contract.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import msgspec

from athenaeum.aggregates.family import Fold
from athenaeum.events import Event
from athenaeum.events.commands import CommandRecord, decode_record

_encoder = msgspec.json.Encoder()
MAX_RECORDS = 1000  # as many as one atomic JetStream batch takes


class CommandKey(NamedTuple):
    """What makes a command id name one command: its sender's id on one aggregate, or (not
    scoped) one id for everyone, as an A2A task's id names one ratification whoever sends it."""

    actor: str
    aggregate_id: str
    command_id: str
    scoped: bool = True

    @property
    def text(self) -> str:
        # A JSON array keeps the parts apart: ids and keys may contain any separator.
        parts = [self.actor, self.aggregate_id, self.command_id] if self.scoped else [self.command_id]
        return _encoder.encode(parts).decode()


class Applied(NamedTuple):
    """A command the ledger holds, and the answer its first sending got."""

    record: CommandRecord
    position: int  # of its last event
    events: msgspec.Raw  # the JSON array of the events it appended


class Appending(NamedTuple):
    """One command's append: its events, its record, its key."""

    events: Sequence[Event]
    record: CommandRecord
    key: CommandKey


class Conflict(Exception):
    """An aggregate the command writes changed since it was loaded: decide again."""


class Unconfirmed(Exception):
    """The ledger's answer to an append was lost: the command may have landed, and may yet."""


class Refused(Exception):
    """The ledger refused the append outright (too many records for one atomic append, say):
    nothing was written, and sending it again is refused again."""


class AlreadyApplied(Exception):
    """The command's append found it applied already; nothing was appended this time."""

    def __init__(self, applied: Applied) -> None:
        super().__init__(f"command applied at position {applied.position}")
        self.applied = applied


class CommandStore(Protocol):
    ledger_id: str  # what every signed command names, so its signature holds in this ledger only

    async def load(self, aggregate_id: str, *, fresh: bool = False) -> Any:
        """The aggregate's state (None: no events yet). Without ``fresh`` it may be what the
        store last saw, an append on it then fails with ``Conflict`` if it changed since."""

    def presume_new(self, aggregate_ids: Sequence[str]) -> None:
        """Take each of these aggregates the store has not loaded as holding no events, unread:
        an append on it then expects none, and a wrong guess costs it a ``Conflict``."""

    async def applied(self, key: CommandKey) -> Applied | None:
        """The command ``key`` names, if the ledger holds it, as of the last load of its
        aggregate."""

    async def append(self, events: Sequence[Event], record: CommandRecord, key: CommandKey) -> int:
        """Append one command's events atomically, each aggregate's expected at the state last
        loaded, with the command's record; the stream position of the last event. Raises
        ``Conflict``, ``AlreadyApplied``, ``Refused`` or ``Unconfirmed``."""

    async def append_together(self, commands: Sequence[Appending]) -> list[Applied]:
        """Several commands' appends, each on aggregates of its own, as one: all of them or none
        (raising as ``append`` does; ``AlreadyApplied`` for one found applied); each one as the
        ledger now holds it (the position of its last event, its events as stored)."""


def record_bytes(record: CommandRecord) -> bytes:
    return _encoder.encode(record)


def events_json(payloads: Sequence[bytes]) -> msgspec.Raw:
    """The JSON array of events whose stored payloads these are, as a reply carries it."""
    return msgspec.Raw(b"[" + b",".join(payloads) + b"]")


class MemoryStore:
    """A ledger in a list, for the handler's own tests: the same contract, no server."""

    def __init__(self, fold_of: Callable[[str], Fold]) -> None:
        self.fold_of = fold_of
        self.ledger_id = f"memory-{uuid.uuid4().hex[:16]}"
        self.ledger: list[Event] = []  # position n is ledger[n - 1]
        self._events: dict[str, list[Event]] = {}
        self._commands: dict[str, Applied] = {}

    async def load(self, aggregate_id: str, *, fresh: bool = False) -> Any:
        return self.fold_of(aggregate_id)(None, self._events.get(aggregate_id, []))

    def presume_new(self, aggregate_ids: Sequence[str]) -> None:
        pass  # it holds every aggregate: nothing to presume

    async def applied(self, key: CommandKey) -> Applied | None:
        return self._commands.get(key.text)

    async def append(self, events: Sequence[Event], record: CommandRecord, key: CommandKey) -> int:
        return (await self.append_together([Appending(events, record, key)]))[0].position

    async def append_together(self, commands: Sequence[Appending]) -> list[Applied]:
        for command in commands:
            if (first := self._commands.get(command.key.text)) is not None:
                raise AlreadyApplied(first)
        if (count := sum(len(command.events) for command in commands)) > MAX_RECORDS:
            raise Refused(f"{count} records in one append; one holds at most {MAX_RECORDS}")
        next_version: dict[str, int] = {}
        for command in commands:
            for event in command.events:
                expected = next_version.get(event.originator_id, len(self._events.get(event.originator_id, [])) + 1)
                if event.originator_version != expected:
                    raise Conflict(f"{event.originator_id} is not at version {event.originator_version - 1}")
                next_version[event.originator_id] = expected + 1
        return [self._apply(*command) for command in commands]

    def _apply(self, events: Sequence[Event], record: CommandRecord, key: CommandKey) -> Applied:
        stored = decode_record(record_bytes(record))  # as the ledger would read it back, before it holds it
        for event in events:
            self._events.setdefault(event.originator_id, []).append(event)
        self.ledger += events
        applied = Applied(stored, len(self.ledger), events_json([_encoder.encode(event) for event in events]))
        self._commands[key.text] = applied
        return applied
