"""A stream's events as eventsourcing's notifications: their ids are stream sequences."""

from __future__ import annotations

from collections.abc import Sequence

from eventsourcing.persistence import Notification

from athenaeum.services.jetstream.log import READ_BATCH, TOPIC, StreamLog
from athenaeum.services.jetstream.messages import Stored
from athenaeum.services.jetstream.positions import Head
from athenaeum.services.jetstream.subjects import StreamSubjects


async def scan(
    log: StreamLog,
    start: int | None,
    limit: int,
    stop: int | None,
    topics: Sequence[str],
    inclusive_of_start: bool,
) -> tuple[list[Notification], int]:
    """The notifications eventsourcing's ``select_notifications`` selects, and the last
    position looked at, matching or not (0: none), from which a reader of a few topics
    may go on."""
    first = 1 if start is None else (start if inclusive_of_start else start + 1)
    wanted = frozenset(topics)
    looked_at = 0
    through = 0  # a replica behind this log's own appends is read again until it has them
    if log.replicated:
        through = log.appended if stop is None else min(log.appended, stop)
    selected: list[Notification] = []
    while len(selected) < limit and (stop is None or first <= stop):
        batch = READ_BATCH if wanted else min(READ_BATCH, limit - len(selected))
        messages, more = await log.client.read(log.stream, log.subjects.events, first, batch, through)
        for message in messages:
            if stop is not None and message.seq > stop:
                more = False
                break
            looked_at = message.seq
            notification = _notification(log.subjects, message)
            if wanted and notification.topic not in wanted:
                continue
            selected.append(notification)
            if len(selected) == limit:
                break
        if not messages or not more:
            break
        first = messages[-1].seq + 1
    return selected, looked_at

def _notification(subjects: StreamSubjects, message: Stored) -> Notification:
    """A message on an event subject, as a notification. One this store did not write (its
    headers missing or malformed) goes on with no topic, which no mapper decodes: followers
    skip it and audits report it, rather than stop at it for good."""
    try:
        return Notification(
            id=message.seq,
            originator_id=subjects.originator_id(message.subject, message.headers),
            originator_version=Head.of(message).position,
            topic=message.headers[TOPIC],
            state=message.payload,
        )
    except (KeyError, ValueError):  # UnicodeDecodeError is a ValueError
        return Notification(id=message.seq, originator_id=message.subject, originator_version=0, topic="",
                            state=message.payload)

async def max_notification_id(log: StreamLog) -> int | None:
    last = await log.last(log.subjects.events)
    return None if last is None else last.seq
