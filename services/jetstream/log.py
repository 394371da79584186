"""An eventsourcing sequence store over one stream: appends with per-aggregate concurrency
control, and reads of aggregates and tracking positions (notifications: ``notifications``).

An append may carry out a command (see ``command_records``): its first event then carries the
command's key and record, and a marker follows its events where the command needs one.

Its coroutines run on one loop (the connection's loop thread, or the command service's),
which also owns its ``Positions``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from uuid import UUID

from eventsourcing.persistence import (
    IntegrityError,
    OperationalError,
    ProgrammingError,
    StoredEvent,
    Tracking,
)

from athenaeum.services.jetstream.client import CATCH_UP_WAITS, MAX_BATCH, JetStreamClient, WrongLastSequence
from athenaeum.services.jetstream.command_records import CommandAlreadyApplied, CommandAppend, carrying
from athenaeum.services.jetstream.messages import Outgoing, Stored
from athenaeum.services.jetstream.positions import TRACKING, VERSION, Head, Positions, position_of
from athenaeum.services.jetstream.snapshots import EVENT_SEQUENCE, Summarized, mismatch, summarized
from athenaeum.services.jetstream.subjects import StreamSubjects

log = logging.getLogger(__name__)

TOPIC = "Athenaeum-Topic"
EXPECT_LAST = "Nats-Expected-Last-Subject-Sequence"
READ_BATCH = 1000
# eventsourcing starts aggregates at version 1; its suites also start some at 0.
FIRST_VERSION = 1
APPEND_ATTEMPTS = 5


class StreamLog:
    def __init__(
        self, client: JetStreamClient, stream: str, events_log: StreamLog | None = None, replicated: bool = False,
        ledger_id: str = "", readable: Callable[[Stored], bool] | None = None,
    ) -> None:
        """``events_log`` is set on a snapshot log: the log whose events the snapshots summarise.
        ``replicated``: the stream has replicas, any of which may answer a direct get before it
        applied the latest messages; reads then make sure they include what was acknowledged.
        ``readable``: whether an event of ours can be read (its payload decodes); one that
        cannot is passed over as a message another publisher put there is."""
        self.client = client
        self.stream = stream
        self.subjects = StreamSubjects(stream)
        self.positions = Positions()
        self.events_log = events_log
        self.replicated = replicated
        self.ledger_id = ledger_id  # the stream's, as the server made it (see ``client.ledger_id``)
        self.appended = 0  # the last event sequence this log appended: reads include it
        self.readable = readable

    async def append(
        self,
        events: Sequence[StoredEvent],
        tracking: Tracking | None = None,
        command: CommandAppend | None = None,
    ) -> list[int]:
        """Append ``events`` (and ``tracking``, and the ``command``'s marker when it has one,
        always last) atomically; return the events' stream sequences."""
        return (await self._append([(events, command)], tracking))[0]

    async def append_commands(self, commands: Sequence[tuple[Sequence[StoredEvent], CommandAppend]]) -> list[list[int]]:
        """Several commands' appends as one atomic batch, each stored as ``append`` stores it
        alone (its events, then its marker if it has one), one after the other: all of them or
        none. Each one's events' stream sequences. A marker already there raises
        ``CommandAlreadyApplied`` for its command."""
        return await self._append(commands, None)

    async def _append(
        self, parts: Sequence[tuple[Sequence[StoredEvent], CommandAppend | None]], tracking: Tracking | None,
    ) -> list[list[int]]:
        events = [event for part, _ in parts for event in part]
        markers = [command for _, command in parts if command is not None and command.marked]
        count = len(events) + (tracking is not None) + len(markers)
        if count == 0:
            return [[] for _ in parts]
        if count > MAX_BATCH:
            raise ProgrammingError(
                f"{count} records in one insert; one atomic JetStream batch holds at most {MAX_BATCH}"
            )
        subjects = [self.subjects.aggregate(event.originator_id) for event in events]
        _check_ascending(events, subjects)
        # A snapshot names the event it summarizes, which a load checks (see ``snapshots``).
        summaries = None if self.events_log is None else [await summarized(self.events_log, event) for event in events]
        tracking_subject = self.subjects.tracking(tracking.application_name) if tracking else None
        involved = set(subjects) | ({tracking_subject} if tracking_subject else set())
        for attempt in range(APPEND_ATTEMPTS):
            heads = await self._heads(involved, events, subjects, presume_new=attempt == 0)
            messages: list[Outgoing] = []
            counts = []  # each part's events stored
            expected: set[str] = set()
            start = 0
            for part, command in parts:
                end = start + len(part)
                written = self._messages(part, subjects[start:end], heads,
                                         summaries[start:end] if summaries is not None else None, expected)
                if written and command is not None:
                    written[0].headers |= carrying(command)
                messages += written
                counts.append(len(written))
                if command is not None and command.marked:
                    # Expecting no earlier message on the marker's subject makes the command apply once.
                    messages.append(Outgoing(self.subjects.marker(command.token), command.record, {EXPECT_LAST: "0"}))
                start = end
            if tracking is not None and tracking_subject is not None:
                messages.append(self._tracking_message(tracking, tracking_subject, heads[tracking_subject]))
            if not messages:
                return [[] for _ in parts]  # only snapshots older than the latest
            try:
                last_seq = await self.client.append(messages)
            except WrongLastSequence:
                for command in markers:
                    if marker := await self.last(self.subjects.marker(command.token)):
                        raise CommandAlreadyApplied(command.token, marker) from None
                await self._heads_past(heads)
                continue
            return self._stored(messages, last_seq - len(messages) + 1, counts, [command for _, command in parts])
        raise OperationalError(f"append to {self.stream} lost {APPEND_ATTEMPTS} races in a row")

    def _stored(self, messages: list[Outgoing], first_seq: int, counts: list[int],
                commands: list[CommandAppend | None]) -> list[list[int]]:
        """Each part's events' sequences, their heads remembered, as the server stored ``messages``
        from ``first_seq`` on."""
        positions = []
        seq = first_seq
        for count, command in zip(counts, commands):
            for message in messages[seq - first_seq: seq - first_seq + count]:
                self.positions.remember(message.subject, Head(position_of(message.headers), seq))
                seq += 1
            positions.append(list(range(seq - count, seq)))
            self.appended = max(self.appended, seq - 1)
            seq += command is not None and command.marked
        for message in messages[seq - first_seq:]:  # the tracking record's, if any
            self.positions.remember(message.subject, Head(position_of(message.headers), seq))
            seq += 1
        return positions

    def _messages(
        self, events: Sequence[StoredEvent], subjects: list[str], heads: dict[str, Head | None],
        summaries: list[Summarized] | None, expected: set[str],
    ) -> list[Outgoing]:
        """``expected``: the subjects an earlier message of the batch already expects on."""
        messages = []
        for index, (event, subject) in enumerate(zip(events, subjects)):
            if self._superseded(event, heads[subject]):
                continue
            headers = {VERSION: str(event.originator_version), TOPIC: event.topic}
            headers |= self.subjects.id_headers(event.originator_id, subject)
            if summaries is not None:
                headers |= summaries[index].headers()
            if subject not in expected:
                # JetStream checks an expectation only on a subject's first message in a batch.
                expected.add(subject)
                head = heads[subject]
                if head is not None and event.originator_version <= head.position:
                    raise _not_after(event, head.position, "the recorded version")
                headers[EXPECT_LAST] = str(head.seq if head else 0)
            messages.append(Outgoing(subject, event.state, headers))
        return messages

    def _superseded(self, event: StoredEvent, head: Head | None) -> bool:
        """A snapshot older than the latest one adds nothing: it is dropped, not refused, since
        two processes snapshotting one aggregate may well finish out of order."""
        return self.events_log is not None and head is not None and event.originator_version < head.position

    def _tracking_message(self, tracking: Tracking, subject: str, head: Head | None) -> Outgoing:
        if head is not None and tracking.notification_id <= head.position:
            raise IntegrityError(
                f"tracking {tracking.notification_id} of {tracking.application_name!r} "
                f"is not after the recorded {head.position}"
            )
        headers = {TRACKING: str(tracking.notification_id), EXPECT_LAST: str(head.seq if head else 0)}
        return Outgoing(subject, b"", headers)

    async def history(self, originator_id: UUID | str, after: int = 0) -> list[Stored]:
        """Every message of this store on the aggregate after stream sequence ``after``, in order;
        the aggregate's head is remembered for the next append."""
        aggregate = self.subjects.aggregate(originator_id)
        newest = await self.last(aggregate) if self.replicated else None
        found: list[Stored] = []
        start = after + 1
        while True:
            messages, more = await self.client.read(self.stream, aggregate, start, READ_BATCH,
                                                    newest.seq if newest else 0)
            found += [message for message in messages if self._ours(message) is not None]
            if not messages or not more:
                break
            start = messages[-1].seq + 1
        if found:
            self.positions.remember(aggregate, Head.of(found[-1]))
        return found

    async def _heads(
        self, involved: set[str], events: Sequence[StoredEvent], subjects: list[str], presume_new: bool
    ) -> dict[str, Head | None]:
        # An aggregate starting at its first version is presumed new on a first attempt: the
        # server checks "no message yet" anyway, and a wrong guess costs one retry.
        known = self.positions.heads
        presumed_new = {
            subject
            for event, subject in zip(events, subjects)
            if presume_new and event.originator_version <= FIRST_VERSION and known.get(subject) is None
        }
        unknown = [subject for subject in involved - presumed_new if known.get(subject) is None]
        if unknown:
            await asyncio.gather(*map(self._fetch_head, unknown))
        return {subject: None if subject in presumed_new else known.get(subject) for subject in involved}

    async def _heads_past(self, refused: dict[str, Head | None]) -> None:
        """Read again the heads an append expected and lost on, until one has moved past what
        it expected. A replicated stream's leader refuses an expectation on a subject while
        another write on it is still in flight (10164), and answers reads from what it has
        applied: until that write applies, the heads read again are the ones just refused, and
        an append sent at once would lose again for nothing. Bounded: a write in flight that
        never applies leaves the heads as they were, and the next append finds out."""
        for wait in (*CATCH_UP_WAITS, None):
            for subject in refused:
                self.positions.heads.forget(subject)
            read = await asyncio.gather(*map(self._fetch_head, refused))
            if wait is None or any(head != refused[subject] for subject, head in zip(refused, read)):
                return
            await asyncio.sleep(wait)

    async def last(self, subject: str) -> Stored | None:
        """The last message on ``subject``: from the leader of a replicated stream."""
        if self.replicated:
            return await self.client.leader_get(self.stream, {"last_by_subj": subject})
        return await self.client.last(self.stream, subject)

    async def _fetch_head(self, subject: str) -> Head | None:
        last = await self.last(subject)
        if last is None:
            return None
        # Appends expect the subject's last sequence, whoever put the message there.
        head = self._ours(last) or Head(await self._last_position(subject, last.seq), last.seq)
        self.positions.remember(subject, head)
        return head

    async def _last_position(self, subject: str, last_seq: int) -> int:
        """The last version (or tracking id) on ``subject``, read past messages another
        publisher put after it, through its last message; 0 when there is none."""
        position, start = 0, 1
        while True:
            messages, more = await self.client.read(self.stream, subject, start, READ_BATCH, last_seq)
            position = next((head.position for message in reversed(messages) if (head := self._ours(message))),
                            position)
            if not messages or not more:
                return position
            start = messages[-1].seq + 1

    async def events(
        self,
        originator_id: UUID | str,
        gt: int | None,
        lte: int | None,
        desc: bool,
        limit: int | None,
    ) -> list[StoredEvent]:
        selected = await self._selected(originator_id, gt, lte, desc, limit)
        if self.events_log is not None:  # snapshots: only those that summarize an event it holds
            selected = [snapshot for snapshot in selected if await self._summarizes(originator_id, snapshot)]
        return [self._stored_event(originator_id, message) for message in selected]

    async def _selected(
        self, originator_id: UUID | str, gt: int | None, lte: int | None, desc: bool, limit: int | None,
    ) -> list[Stored]:
        subject = self.subjects.aggregate(originator_id)
        if desc and limit == 1 and lte is None:
            last = await self.last(subject)
            head = None if last is None else self._ours(last)
            if last is None or head is not None:
                return [last] if last is not None and head is not None and (gt is None or head.position > gt) else []
        if gt is not None and lte is None and not desc and (head := self.positions.heads.get(subject)):
            if head.position in (gt, gt + 1) and (newer := await self._after(subject, gt, head)) is not None:
                return newer
        start = self.positions.start_after(subject, gt)
        bounded = limit is not None and not desc
        # Whatever was acknowledged on the subject when the read began is in it.
        newest = await self.last(subject) if self.replicated else None
        selected: list[Stored] = []
        while True:
            batch = min(READ_BATCH, limit - len(selected)) if bounded and limit else READ_BATCH
            messages, more = await self.client.read(self.stream, subject, start, batch, newest.seq if newest else 0)
            for message in messages:
                if (head := self._ours(message)) is None:
                    continue
                version = head.position
                self.positions.sequences.put((subject, version), message.seq)
                if lte is not None and version > lte:
                    more = False
                    break
                if gt is None or version > gt:
                    selected.append(message)
            if messages:
                start = messages[-1].seq + 1
                if not more and lte is None and (head := self._ours(messages[-1])) is not None:
                    self.positions.remember(subject, head)
            if not more or (bounded and limit is not None and len(selected) >= limit):
                break
        if desc:
            selected.reverse()
        return selected[:limit] if limit is not None else selected

    async def _summarizes(self, originator_id: UUID | str, snapshot: Stored) -> bool:
        assert self.events_log is not None
        problem = await mismatch(self.events_log, originator_id, snapshot)
        if problem is not None:
            log.warning("snapshot %d of %r in %s passed over, its events read instead: %s", snapshot.seq,
                        originator_id, self.stream, problem)
        return problem is None

    async def message(self, seq: int) -> Stored | None:
        """The message at ``seq``, if the stream holds one there: from the leader of a
        replicated stream."""
        request = {"seq": seq}
        if self.replicated:
            return await self.client.leader_get(self.stream, request)
        return await self.client.get(self.stream, request)

    async def _after(self, subject: str, version: int, head: Head) -> list[Stored] | None:
        """The events after ``version``, when the subject's last message answers it: a cached
        aggregate's fast-forward usually finds nothing new, or the one event saved since it was
        cached (by this process or another). A read from ``version`` would make the server scan
        the stream after it (over a millisecond in a big stream; the probe is a tenth of that).
        None: read on."""
        last = await self.last(subject)
        if last is None or last.seq < head.seq:
            return None  # not the stream this log wrote and read: the full read will tell
        newest = self._ours(last)
        if newest is None:
            return None
        self.positions.remember(subject, newest)
        if newest.position == version:
            return []
        return [last] if newest.position == version + 1 else None

    def _stored_event(self, originator_id: UUID | str, message: Stored) -> StoredEvent:
        version = Head.of(message).position
        hint = message.headers.get(EVENT_SEQUENCE)
        if hint is not None and self.events_log is not None:
            events_subject = self.events_log.subjects.aggregate(originator_id)
            self.events_log.positions.sequences.put((events_subject, version), int(hint))
        return StoredEvent(
            originator_id=originator_id,
            originator_version=version,
            topic=message.headers[TOPIC],
            state=message.payload,
        )

    def _ours(self, message: Stored) -> Head | None:
        head = _head_of(message)
        if head is not None and self.readable is not None and TOPIC in message.headers and not self.readable(message):
            return None
        return head

    async def max_tracking_id(self, application_name: str) -> int | None:
        head = await self._fetch_head(self.subjects.tracking(application_name))
        return None if head is None else head.position


def _head_of(message: Stored) -> Head | None:
    """The head ``message`` makes, if this store wrote it; None for a message another publisher
    put on the subject (no authorization stops one), which reads pass over rather than fail on
    for good (the stream denies deletes)."""
    if TOPIC not in message.headers and TRACKING not in message.headers:
        return None
    try:
        return Head.of(message)
    except (KeyError, ValueError):
        return None


def _not_after(event: StoredEvent, previous: int, what: str) -> IntegrityError:
    return IntegrityError(f"version {event.originator_version} of {event.originator_id!r} is not after {what} {previous}")


def _check_ascending(events: Sequence[StoredEvent], subjects: list[str]) -> None:
    latest: dict[str, int] = {}
    for event, subject in zip(events, subjects):
        previous = latest.get(subject)
        if previous is not None and event.originator_version <= previous:
            raise _not_after(event, previous, "the version before it in the same insert")
        latest[subject] = event.originator_version
