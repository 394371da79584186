"""How the auditor finds the commands in the ledger's entries: a command's first event carries
its key and its record (or the hash of the record its marker carries, right after its events);
the events that follow it, as many as the record says, are the rest of it. Anything else is a
finding."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from athenaeum.events import Event
from athenaeum.events.commands import CommandRecord
from athenaeum.services.audit.redecide import Problem, record_of
from athenaeum.services.jetstream.entries import Entry


@dataclass
class Appended:
    """One command's entries, as they are read: its events so far, and its record once known."""

    token: str
    first: Entry
    record: CommandRecord | Problem | None  # None: in the marker still to come
    events: list[tuple[Entry, Event | None]] = field(default_factory=list)

    @classmethod
    def starting(cls, entry: Entry, event: Event | None) -> Appended:
        raw = entry.record
        if raw is not None:
            record: CommandRecord | Problem | None = record_of(raw)
        elif entry.record_sha256 is not None:
            record = None
        else:
            record = Problem("undecodable_command", "the command's record in the headers does not decode")
        return cls(entry.command or "", entry, record, [(entry, event)])

    @property
    def complete(self) -> bool:
        return isinstance(self.record, CommandRecord) and len(self.events) >= self.record.events

    def continued_by(self, entry: Entry) -> bool:
        """Whether ``entry`` is the next of this command's: an event not another command's first
        while it has fewer than its record says (or its record is yet to come), or its marker."""
        if entry.kind == "marker":
            return self.record is None and entry.command == self.token
        return entry.kind == "event" and not entry.carries_command and not self.complete

    def take(self, entry: Entry, event: Event | None = None) -> None:
        """The next of its entries (see ``continued_by``)."""
        if entry.kind == "marker":
            self.take_marker(entry)
        else:
            self.events.append((entry, event))

    def take_marker(self, entry: Entry) -> Problem | None:
        if hashlib.sha256(entry.payload).hexdigest() != self.first.record_sha256:
            self.record = Problem("not_as_decided", "the command's marker is not the record its first event names")
            return self.record
        self.record = record_of(entry.payload)
        return None
