"""The stream's messages as the ledger's entries, in layout 2 (see ``subjects`` and ``log``):
events under their command's token, markers, tracking records, and anything else another
publisher put there. Auditors read every entry; the digest chains them all."""

from __future__ import annotations

import binascii
import functools
from datetime import datetime
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec
import msgspec.inspect

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
            # Strict: any byte outside the alphabet is an error (b64decode's validate=True says
            # the same with a regular expression first, at twice the cost).
            return None if carried is None else binascii.a2b_base64(carried, strict_mode=True)
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
        return held_as(event, self.topic, originator)


def held_as(event: object, tag: str, originator: tuple[Any, int]) -> Event:
    """``event``, decoded from a message stored as version ``originator[1]`` of aggregate
    ``originator[0]``, if the ledger can hold it there; ``Unreadable`` says why not. Every
    reader of the ledger (a command's load, the projector, the audit) passes over the same."""
    if not isinstance(event, Event):
        raise Unreadable("unknown_tag", f"{tag} is not an event's tag: the ledger holds only events")
    if (event.originator_id, event.originator_version) != tuple(originator):
        # The store reads an aggregate by its subject and version header: an event whose own
        # say differs would count where the store puts it, not where it says.
        raise Unreadable("misplaced_event", f"an event of {event.originator_id!r} version "
                                            f"{event.originator_version} stored as version {originator[1]} of "
                                            f"{originator[0]!r}")
    if _zoneless(event):
        # Every rule and view compares times with zones: one without would fail them all.
        raise Unreadable("undecodable", f"a {event.tag} with a time that has no time zone")
    return event


def holds_an_event(mapper: Mapper[Any]) -> Callable[[Stored], bool]:
    """Whether a message on an aggregate's subject is an event the ledger can hold, read as
    ``Entry.event`` reads it: what a read of an aggregate passes over when it is not."""

    def holds(message: Stored) -> bool:
        try:
            Entry.of(message).event(mapper)
        except Unreadable:
            return False
        return True

    return holds


class Unreadable(Exception):
    """Why an entry on an event subject is no event the ledger can hold: the audit's finding."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _zoneless(value: Any) -> bool:
    """Whether ``value`` holds a time without a zone, in any field of its type that holds times."""
    if isinstance(value, datetime):
        return value.tzinfo is None
    if isinstance(value, msgspec.Struct):
        return any(_zoneless(getattr(value, name)) for name in _timed_fields(type(value)))
    if isinstance(value, (list, tuple)):
        return any(map(_zoneless, value))
    if isinstance(value, dict):
        return any(map(_zoneless, value.values()))
    return False


@functools.cache
def _timed_fields(struct: type[msgspec.Struct]) -> tuple[str, ...]:
    """The fields of ``struct`` whose type holds a time somewhere (most events': their stamp alone)."""
    return tuple(field.name for field in msgspec.inspect.type_info(struct).fields  # type: ignore[attr-defined]
                 if _holds_time(field.type, set()))


def _holds_time(kind: msgspec.inspect.Type, seen: set[type]) -> bool:
    if isinstance(kind, msgspec.inspect.DateTimeType):
        return True
    if isinstance(kind, msgspec.inspect.StructType):
        if kind.cls in seen:
            return False
        seen.add(kind.cls)
        return any(_holds_time(field.type, seen) for field in kind.fields)
    inner = [getattr(kind, name) for name in ("item_type", "key_type", "value_type") if hasattr(kind, name)]
    return any(_holds_time(each, seen) for each in [*inner, *getattr(kind, "item_types", ()), *getattr(kind, "types", ())])


def _kind(subject: str) -> str:
    tokens = subject.split(".")[1:]
    if not tokens:
        return "other"
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
