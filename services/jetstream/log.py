"""An eventsourcing sequence store over one stream: appends with per-aggregate concurrency
control, and reads of aggregates, notifications and tracking positions.

Its coroutines run on the connection's loop thread, which also owns its caches.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import NamedTuple
from uuid import UUID

from eventsourcing.persistence import (
    IntegrityError,
    Notification,
    OperationalError,
    ProgrammingError,
    StoredEvent,
    Tracking,
)

from athenaeum.services.jetstream.client import (
    MAX_BATCH,
    JetStreamClient,
    Outgoing,
    Stored,
    WrongLastSequence,
)
from athenaeum.services.jetstream.connection import LRU
from athenaeum.services.jetstream.subjects import StreamSubjects

VERSION = "Athenaeum-Version"
TOPIC = "Athenaeum-Topic"
TRACKING = "Athenaeum-Tracking"
# On a snapshot: the event-stream sequence of the event at the snapshot's version.
EVENT_SEQUENCE = "Athenaeum-Event-Seq"
EXPECT_LAST = "Nats-Expected-Last-Subject-Sequence"

READ_BATCH = 1000
# eventsourcing starts aggregates at version 1; its suites also start some at 0.
FIRST_VERSION = 1
APPEND_ATTEMPTS = 5


class Head(NamedTuple):
    """The newest known message of a subject: its version (or tracking id) and sequence."""

    position: int
    seq: int


class StreamLog:
    def __init__(self, client: JetStreamClient, stream: str) -> None:
        self.client = client
        self.stream = stream
        self.subjects = StreamSubjects(stream)
        # Appends expect these sequences; a stale one costs one retry, never a wrong write.
        self.heads: LRU[str, Head] = LRU(100_000)
        # (subject, version) -> sequence of every head seen and of snapshots' events, so a
        # load after a snapshot, or a cache fast-forward, reads only the tail.
        self.sequences: LRU[tuple[str, int], int] = LRU(100_000)
        self.events_log: StreamLog | None = None  # set on a snapshot log

    async def append(self, events: Sequence[StoredEvent], tracking: Tracking | None = None) -> list[int]:
        """Append ``events`` (and ``tracking``) atomically; return their stream sequences."""
        count = len(events) + (tracking is not None)
        if count == 0:
            return []
        if count > MAX_BATCH:
            raise ProgrammingError(
                f"{count} records in one insert; one atomic JetStream batch holds at most {MAX_BATCH}"
            )
        subjects = [self.subjects.aggregate(event.originator_id) for event in events]
        _check_ascending(events, subjects)
        tracking_subject = self.subjects.tracking(tracking.application_name) if tracking else None
        involved = set(subjects) | ({tracking_subject} if tracking_subject else set())
        for attempt in range(APPEND_ATTEMPTS):
            heads = await self._heads(involved, events, subjects, presume_new=attempt == 0)
            messages = self._messages(events, subjects, heads)
            if tracking is not None and tracking_subject is not None:
                messages.append(self._tracking_message(tracking, tracking_subject, heads[tracking_subject]))
            try:
                last_seq = await self.client.append(messages)
            except WrongLastSequence:
                for subject in involved:
                    self.heads.forget(subject)
                continue
            first_seq = last_seq - len(messages) + 1
            for offset, message in enumerate(messages):
                position = message.headers.get(VERSION) or message.headers[TRACKING]
                self._remember(message.subject, Head(int(position), first_seq + offset))
            return list(range(first_seq, first_seq + len(events)))
        raise OperationalError(f"append to {self.stream} lost {APPEND_ATTEMPTS} races in a row")

    def _messages(
        self, events: Sequence[StoredEvent], subjects: list[str], heads: dict[str, Head | None]
    ) -> list[Outgoing]:
        messages = []
        expected: set[str] = set()
        for event, subject in zip(events, subjects):
            headers = {VERSION: str(event.originator_version), TOPIC: event.topic}
            if subject not in expected:
                # JetStream checks an expectation only on a subject's first message in a batch.
                expected.add(subject)
                head = heads[subject]
                if head is not None and event.originator_version <= head.position:
                    raise IntegrityError(
                        f"version {event.originator_version} of {event.originator_id!r} "
                        f"is not after the recorded version {head.position}"
                    )
                headers[EXPECT_LAST] = str(head.seq if head else 0)
                snapshot_of = self._event_sequence(event, subject)
                if snapshot_of is not None:
                    headers[EVENT_SEQUENCE] = str(snapshot_of)
            messages.append(Outgoing(subject, event.state, headers))
        return messages

    def _tracking_message(self, tracking: Tracking, subject: str, head: Head | None) -> Outgoing:
        if head is not None and tracking.notification_id <= head.position:
            raise IntegrityError(
                f"tracking {tracking.notification_id} of {tracking.application_name!r} "
                f"is not after the recorded {head.position}"
            )
        headers = {TRACKING: str(tracking.notification_id), EXPECT_LAST: str(head.seq if head else 0)}
        return Outgoing(subject, b"", headers)

    def _event_sequence(self, snapshot: StoredEvent, subject: str) -> int | None:
        if self.events_log is None:
            return None
        events_subject = self.events_log.subjects.aggregate(snapshot.originator_id)
        head = self.events_log.heads.get(events_subject)
        if head is not None and head.position == snapshot.originator_version:
            return head.seq
        return None

    async def _heads(
        self, involved: set[str], events: Sequence[StoredEvent], subjects: list[str], presume_new: bool
    ) -> dict[str, Head | None]:
        # An aggregate starting at its first version is presumed new on a first attempt: the
        # server checks "no message yet" anyway, and a wrong guess costs one retry.
        presumed_new = {
            subject
            for event, subject in zip(events, subjects)
            if presume_new and event.originator_version <= FIRST_VERSION and self.heads.get(subject) is None
        }
        heads: dict[str, Head | None] = dict.fromkeys(presumed_new)
        unknown = [subject for subject in involved - presumed_new if self.heads.get(subject) is None]
        if unknown:
            await asyncio.gather(*map(self._head, unknown))
        for subject in involved - presumed_new:
            heads[subject] = self.heads.get(subject)
        return heads

    async def _head(self, subject: str) -> Head | None:
        head = self.heads.get(subject)
        if head is None:
            last = await self.client.last(self.stream, subject)
            if last is not None:
                head = Head(int(last.headers.get(VERSION) or last.headers[TRACKING]), last.seq)
                self._remember(subject, head)
        return head

    async def events(
        self,
        originator_id: UUID | str,
        gt: int | None,
        lte: int | None,
        desc: bool,
        limit: int | None,
    ) -> list[StoredEvent]:
        subject = self.subjects.aggregate(originator_id)
        if desc and limit == 1 and lte is None:
            last = await self.client.last(self.stream, subject)
            found = [last] if last is not None and (gt is None or _version(last) > gt) else []
            return [self._stored_event(originator_id, message) for message in found]
        start = self._start_after(subject, gt)
        bounded = not desc and limit is not None
        selected: list[StoredEvent] = []
        last_read: Stored | None = None
        while True:
            batch = min(READ_BATCH, limit - len(selected)) if bounded and limit else READ_BATCH
            messages, more = await self.client.read(self.stream, subject, start, batch)
            for message in messages:
                version = _version(message)
                if gt is not None and version <= gt:
                    continue
                if lte is not None and version > lte:
                    more = False
                    break
                selected.append(self._stored_event(originator_id, message))
            if messages:
                last_read = messages[-1]
                start = last_read.seq + 1
            if bounded and limit is not None and len(selected) >= limit:
                break
            if not more:
                if last_read is not None and lte is None:
                    self._remember(subject, Head(_version(last_read), last_read.seq))
                break
        if desc:
            selected.reverse()
        return selected[:limit] if limit is not None else selected

    def _start_after(self, subject: str, version: int | None) -> int:
        if version is None:
            return 1
        head = self.heads.get(subject)
        if head is not None and head.position <= version:
            return head.seq + 1
        return (self.sequences.get((subject, version)) or 0) + 1

    def _remember(self, subject: str, head: Head) -> None:
        known = self.heads.get(subject)
        # A read answered before a concurrent append landed must not move the head back.
        if known is None or head.seq > known.seq:
            self.heads.put(subject, head)
        self.sequences.put((subject, head.position), head.seq)

    def _stored_event(self, originator_id: UUID | str, message: Stored) -> StoredEvent:
        hint = message.headers.get(EVENT_SEQUENCE)
        if hint is not None and self.events_log is not None:
            events_subject = self.events_log.subjects.aggregate(originator_id)
            self.events_log.sequences.put((events_subject, _version(message)), int(hint))
        return StoredEvent(
            originator_id=originator_id,
            originator_version=_version(message),
            topic=message.headers[TOPIC],
            state=message.payload,
        )

    async def notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None,
        topics: Sequence[str],
        inclusive_of_start: bool,
    ) -> list[Notification]:
        first = 1 if start is None else (start if inclusive_of_start else start + 1)
        wanted = frozenset(topics)
        selected: list[Notification] = []
        while len(selected) < limit and (stop is None or first <= stop):
            batch = READ_BATCH if wanted else min(READ_BATCH, limit - len(selected))
            messages, more = await self.client.read(self.stream, self.subjects.events, first, batch)
            for message in messages:
                if stop is not None and message.seq > stop:
                    more = False
                    break
                topic = message.headers[TOPIC]
                if wanted and topic not in wanted:
                    continue
                selected.append(
                    Notification(
                        id=message.seq,
                        originator_id=self.subjects.originator_id(message.subject),
                        originator_version=_version(message),
                        topic=topic,
                        state=message.payload,
                    )
                )
                if len(selected) == limit:
                    break
            if not messages or not more:
                break
            first = messages[-1].seq + 1
        return selected

    async def max_notification_id(self) -> int | None:
        last = await self.client.last(self.stream, self.subjects.events)
        return None if last is None else last.seq

    async def max_tracking_id(self, application_name: str) -> int | None:
        subject = self.subjects.tracking(application_name)
        self.heads.forget(subject)
        head = await self._head(subject)
        return None if head is None else head.position


def _version(message: Stored) -> int:
    return int(message.headers[VERSION])


def _check_ascending(events: Sequence[StoredEvent], subjects: list[str]) -> None:
    latest: dict[str, int] = {}
    for event, subject in zip(events, subjects):
        previous = latest.get(subject)
        if previous is not None and event.originator_version <= previous:
            raise IntegrityError(
                f"version {event.originator_version} of {event.originator_id!r} "
                f"follows version {previous} in the same insert"
            )
        latest[subject] = event.originator_version
