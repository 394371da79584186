"""Finding a command in the stream, for its retry's answer: from its first event, where the
command store knows it to be, or by its marker, for an id that is one for everyone."""

from __future__ import annotations

from uuid import UUID

from athenaeum.services.jetstream.command_records import COMMAND_KEY, AppliedCommand, event_count, record_of
from athenaeum.services.jetstream.log import StreamLog
from athenaeum.services.jetstream.messages import Stored


async def applied(log: StreamLog, first: Stored) -> AppliedCommand | None:
    """The command whose first event is ``first``: its events are contiguous (one atomic
    append), and its record is in ``first``'s headers or in the marker right after them."""
    record = record_of(first)
    if record is None:  # the record is in the command's marker, after its events
        marker = await log.last(log.subjects.marker(first.headers.get(COMMAND_KEY, "")))
        return None if marker is None else await _applied_through(log, marker)
    return AppliedCommand(record, await _events_from(log, first.seq, event_count(record)))


async def first_of_command(log: StreamLog, originator_id: UUID | str, token: str, seq: int = 1) -> Stored | None:
    """The first event the command whose key's token is ``token`` appended to ``originator_id``
    (looked for from ``seq`` on), if it did."""
    return next((message for message in await log.history(originator_id, seq - 1)
                 if message.headers.get(COMMAND_KEY) == token), None)


async def applied_marker(log: StreamLog, token: str) -> AppliedCommand | None:
    """The command whose marker has ``token``, if it was applied (an id for everyone)."""
    marker = await log.last(log.subjects.marker(token))
    return None if marker is None else await _applied_through(log, marker)


async def _applied_through(log: StreamLog, marker: Stored) -> AppliedCommand:
    count = event_count(marker.payload)
    return AppliedCommand(marker.payload, await _events_from(log, marker.seq - count, count))


async def _events_from(log: StreamLog, seq: int, count: int) -> list[Stored]:
    messages, _ = await log.client.read(log.stream, log.subjects.events, seq, count, seq + count - 1)
    return messages[:count]


async def message_at(log: StreamLog, originator_id: UUID | str, seq: int) -> Stored | None:
    """The aggregate's message at stream sequence ``seq``, if it has one there."""
    messages, _ = await log.client.read(log.stream, log.subjects.aggregate(originator_id), seq, 1, seq)
    return messages[0] if messages and messages[0].seq == seq else None

