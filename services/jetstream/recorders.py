"""eventsourcing's recorders on JetStream: thin synchronous faces of a StreamLog."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import (
    AggregateRecorder,
    ApplicationRecorder,
    Notification,
    ProcessRecorder,
    StoredEvent,
    Subscription,
    Tracking,
    TrackingRecorder,
)

from athenaeum.services.jetstream.connection import Connection
from athenaeum.services.jetstream.log import StreamLog
from athenaeum.services.jetstream.messages import Stored
from athenaeum.services.jetstream.notifications import max_notification_id, scan
from athenaeum.services.jetstream.read_ahead import ReadAhead, entries_from
from athenaeum.services.jetstream.subscription import JetStreamSubscription


class JetStreamRecorder:
    def __init__(self, connection: Connection, log: StreamLog) -> None:
        self.connection = connection
        self.log = log


class JetStreamAggregateRecorder(JetStreamRecorder, AggregateRecorder):
    """Events (or snapshots) of aggregates, one literal subject per aggregate."""

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        self._insert(stored_events, **kwargs)
        return None

    def _insert(self, stored_events: Sequence[StoredEvent], tracking: Tracking | None = None, **ignored: Any) -> list[int]:
        return self.connection.run(self.log.append(stored_events, tracking))

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        return self.connection.run(self.log.events(originator_id, gt, lte, desc, limit))


class JetStreamApplicationRecorder(JetStreamAggregateRecorder, ApplicationRecorder):
    """Aggregate events whose notification ids are their stream sequences."""

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        return self._insert(stored_events, **kwargs)

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        notifications, _ = self.connection.run(scan(self.log, start, limit, stop, topics, inclusive_of_start))
        return notifications

    def max_notification_id(self) -> int | None:
        return self.connection.run(max_notification_id(self.log))

    def select_messages(self, start: int, limit: int) -> list[Stored]:
        """Every message of the stream from position ``start`` on, events or not: ``limit`` of
        them, fewer only at the stream's end (one read stops at a size, so it may take several)."""
        return self.connection.run(self._messages(start, limit))

    def read_ahead(self, start: int) -> ReadAhead:
        """Every entry of the stream from position ``start`` on, as ``select_messages`` reads
        them, read by a process of its own, started now, while the caller works (see ``read_ahead``)."""
        return entries_from(self.connection.settings, self.log.stream, self.log.subjects.all, start)

    def last_position(self) -> int:
        """The position of the stream's last message (0 when empty): how far a full read goes."""
        info = self.connection.run(self.log.client.stream_info(self.log.stream))
        return int(info["state"].get("last_seq") or 0)

    async def _messages(self, start: int, limit: int) -> list[Stored]:
        found: list[Stored] = []
        while len(found) < limit:
            messages, more = await self.log.client.read(self.log.stream, self.log.subjects.all, start, limit - len(found))
            found += messages
            if not messages or not more:
                break
            start = messages[-1].seq + 1
        return found

    def subscribe(self, gt: int | None = None, topics: Sequence[str] = ()) -> Subscription[ApplicationRecorder]:
        return JetStreamSubscription(self, self.connection, self.log, gt=gt, topics=topics)


class JetStreamTrackingRecorder(JetStreamRecorder, TrackingRecorder):
    """Positions of upstream applications, one subject per application, ids strictly rising."""

    def insert_tracking(self, tracking: Tracking) -> None:
        self.connection.run(self.log.append((), tracking))

    def max_tracking_id(self, application_name: str) -> int | None:
        return self.connection.run(self.log.max_tracking_id(application_name))


class JetStreamProcessRecorder(JetStreamTrackingRecorder, JetStreamApplicationRecorder, ProcessRecorder):
    """Events and the tracking record that caused them, appended in one atomic batch."""
