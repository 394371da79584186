"""The stream's messages as the ledger's entries, in layout 2 (see ``subjects`` and ``log``):
events under their command's token, markers, tracking records, and anything else another
publisher put there. Auditors read every entry; the digest chains them all."""

from __future__ import annotations

import base64
import binascii
import functools
from typing import Any, NamedTuple

from eventsourcing.persistence import Mapper, MapperDeserialisationError, StoredEvent

from athenaeum.events import Event, UnknownEventTag
from athenaeum.services.jetstream.command_records import COMMAND, COMMAND_KEY, COMMAND_SHA
from athenaeum.services.jetstream.log import TOPIC
from athenaeum.services.jetstream.messages import Stored
from athenaeum.services.jetstream.positions import TRACKING, VERSION
from athenaeum.services.jetstream.subjects import StreamSubjects

OURS = "Athenaeum-"  # the headers that carry meaning; the server's own and the publisher's expectations do not


class Entry(NamedTuple):
    position: int
    subject: str
    headers: dict[str, str]  # Athenaeum's own
    payload: bytes
    kind: str  # event, marker, tracking, or other (a subject no layout names)

    @classmethod
    def of(cls, message: Stored) -> Entry:
        return cls.made(message.seq, message.subject, message.headers, message.payload)

    @classmethod
    def made(cls, position: int, subject: str, headers: dict[str, str], payload: bytes) -> Entry:
        return cls(position, subject, {k: v for k, v in headers.items() if k.startswith(OURS)}, payload,
                   _kind(subject))

    @property
    def command(self) -> str | None:
        """The key's token of the command a marker belongs to, or whose first event this is."""
        return self.subject.rpartition(".")[2] if self.kind == "marker" else self.headers.get(COMMAND_KEY)

    @property
    def record(self) -> bytes | None:
        """The command record an event carries (its command's first), if it does and it decodes."""
        carried = self.headers.get(COMMAND)
        try:
            return None if carried is None else base64.b64decode(carried, validate=True)
        except (binascii.Error, ValueError):
            return None

    @property
    def carries_command(self) -> bool:
        """Whether this event is its command's first: it carries the command's key."""
        return COMMAND_KEY in self.headers

    @property
    def record_sha256(self) -> str | None:
        return self.headers.get(COMMAND_SHA)

    @property
    def topic(self) -> str | None:
        return self.headers.get(TOPIC)

    def originator(self) -> tuple[str, int] | None:
        """The aggregate id and version of an event of ours; None when the headers do not say."""
        try:
            subjects = _subjects(self.subject.partition(".")[0])
            return str(subjects.originator_id(self.subject, self.headers)), int(self.headers[VERSION])
        except (KeyError, ValueError):
            return None

    @property
    def well_formed_tracking(self) -> bool:
        return not self.payload and self.headers.get(TRACKING, "").isdigit()

    def event(self, mapper: Mapper[Any]) -> Event:
        """The event this entry stores, read as the store reads it (by its subject and version
        header); ``Unreadable`` says why it cannot be."""
        originator = self.originator()
        if originator is None or self.topic is None:
            raise Unreadable("unknown_tag", "an event subject's message without a tag or version the store writes")
        try:
            event = mapper.to_domain_event(StoredEvent(originator[0], originator[1], self.topic, self.payload))
        except UnknownEventTag as unknown:
            raise Unreadable("unknown_tag", f"no event declares the tag {unknown.tag!r}") from None
        except MapperDeserialisationError as error:
            raise Unreadable("undecodable", str(error)) from None
        if not isinstance(event, Event):
            raise Unreadable("unknown_tag", f"{self.topic} is not an event's tag: the ledger holds only events")
        if (event.originator_id, event.originator_version) != originator:
            # The store reads an aggregate by its subject and version header: an event whose own
            # say differs would count where the store puts it, not where it says.
            raise Unreadable("misplaced_event", f"an event of {event.originator_id!r} version "
                                                f"{event.originator_version} stored as version {originator[1]} of "
                                                f"{originator[0]!r}")
        if event.timestamp.tzinfo is None:
            raise Unreadable("undecodable", "an event whose time has no time zone")
        return event


class Unreadable(Exception):
    """Why an entry on an event subject is no event the ledger can hold: the audit's finding."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _kind(subject: str) -> str:
    tokens = subject.split(".")[1:]
    if tokens[0] == "ev" and len(tokens) == 3:
        return "event"
    if tokens[0] == "cmd" and len(tokens) == 2:
        return "marker"
    if tokens[0] == "trk" and len(tokens) == 3:
        return "tracking"
    return "other"


@functools.cache
def _subjects(stream: str) -> StreamSubjects:
    return StreamSubjects(stream)
