"""Snapshots tied to the event they summarize.

A snapshot records where its event sits in the event stream and the SHA-256 of that event's
stored bytes. A load checks both with one read of that event, and passes over a snapshot that
does not match (the events then tell the state): one taken of a ledger since cut or made
again, or one written by anyone but the store. Whether a snapshot's state is what its events
fold to, only a replay can tell: the audit folds every aggregate and compares.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

from eventsourcing.persistence import ProgrammingError, StoredEvent

from athenaeum.services.jetstream.messages import Stored
from athenaeum.services.jetstream.positions import VERSION

if TYPE_CHECKING:
    from athenaeum.services.jetstream.log import StreamLog

# On a snapshot: the event-stream sequence of the event at the snapshot's version, and the
# SHA-256 of that event's stored bytes.
EVENT_SEQUENCE = "Athenaeum-Event-Seq"
EVENT_SHA256 = "Athenaeum-Event-Sha256"


class Summarized(NamedTuple):
    """The event a snapshot says it summarizes: its sequence and its bytes' SHA-256."""

    seq: int
    sha256: str

    @classmethod
    def of(cls, snapshot: Stored) -> Summarized | None:
        try:
            return cls(int(snapshot.headers[EVENT_SEQUENCE]), snapshot.headers[EVENT_SHA256])
        except (KeyError, ValueError):
            return None

    def headers(self) -> dict[str, str]:
        return {EVENT_SEQUENCE: str(self.seq), EVENT_SHA256: self.sha256}


def digest(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


async def summarized(events: StreamLog, snapshot: StoredEvent) -> Summarized:
    """The event ``snapshot`` is taken at, read from the event stream: where the read that
    made the state left it, else found by reading the aggregate's events up to it."""
    version = snapshot.originator_version
    event = await _event_at(events, snapshot.originator_id, version)
    if event is None:
        await events.events(snapshot.originator_id, None, version, False, None)
        event = await _event_at(events, snapshot.originator_id, version)
    if event is None:
        raise ProgrammingError(f"no version {version} of {snapshot.originator_id!r} in {events.stream} "
                               "to take a snapshot of")
    return Summarized(event.seq, digest(event.payload))


async def _event_at(events: StreamLog, originator_id: UUID | str, version: int) -> Stored | None:
    seq = events.positions.sequences.get((events.subjects.aggregate(originator_id), version))
    event = None if seq is None else await events.message(seq)
    return event if event is not None and _mismatch(events, originator_id, version, event) is None else None


async def mismatch(events: StreamLog, originator_id: UUID | str, snapshot: Stored) -> str | None:
    """Why ``snapshot`` does not summarize an event the event stream holds, if it does not."""
    said = Summarized.of(snapshot)
    if said is None:
        return "it names no event it summarizes"
    event = await events.message(said.seq)
    if event is None:
        return f"the event stream holds nothing at {said.seq}"
    return _mismatch(events, originator_id, int(snapshot.headers.get(VERSION, 0)), event) or (
        None if digest(event.payload) == said.sha256 else f"the event at {said.seq} is not the one it was taken of")


def _mismatch(events: StreamLog, originator_id: UUID | str, version: int, event: Stored) -> str | None:
    if event.subject != events.subjects.aggregate(originator_id) or event.headers.get(VERSION) != str(version):
        return f"the event at {event.seq} is not version {version} of {originator_id!r}"
    return None
