"""How a command is stored with the events it appended (layout 2).

Its first event carries the command's key (the token of [actor, aggregate, command id], or of
[command id] for an id that is one for everyone) and its record: so the command is stored with
what it did, and a retry of it is recognised on its aggregate by whoever has read the aggregate.
A command whose record is too large for a header, or whose id is one for everyone rather than
its sender's, also writes a marker after its events, in the same atomic batch; its first event
then carries the record's SHA-256 instead.
"""

from __future__ import annotations

import base64
import hashlib
from typing import NamedTuple

import msgspec
from eventsourcing.persistence import IntegrityError

from athenaeum.services.jetstream.messages import Stored

# On a command's first event: its key's token; its record (base64, so that the bytes stored are
# the bytes kept), or, when the record is in the command's marker, the record's SHA-256.
COMMAND_KEY = "Athenaeum-Command-Key"
COMMAND = "Athenaeum-Command"
COMMAND_SHA = "Athenaeum-Command-Sha"
# A record up to this size rides in its first event's headers (the server takes at most 64 KiB
# of headers per message); a larger one, an artifact's say, goes in a marker of its own.
INLINE_RECORD = 24 * 1024


class CommandAppend(NamedTuple):
    """The command an append carries out: its token, its record, and whether its id is one
    for everyone (then a marker, expected new, keeps it once across every aggregate)."""

    token: str
    record: bytes
    global_id: bool = False

    @property
    def marked(self) -> bool:
        return self.global_id or len(self.record) > INLINE_RECORD


class CommandAlreadyApplied(IntegrityError):
    """The command's marker is in the stream already: nothing was appended this time."""

    def __init__(self, token: str, marker: Stored) -> None:
        super().__init__(f"command {token} was applied at sequence {marker.seq}")
        self.token = token
        self.marker = marker


class AppliedCommand(NamedTuple):
    """A command found in the stream: its record and the events it appended, in order."""

    record: bytes
    events: list[Stored]


def record_of(message: Stored) -> bytes | None:
    """The command record a command's first event carries in its headers, if it does."""
    carried = message.headers.get(COMMAND)
    return None if carried is None else base64.b64decode(carried)


def carrying(command: CommandAppend) -> dict[str, str]:
    """The headers of a command's first event: its key's token, and its record or the SHA-256
    of its marker's."""
    if command.marked:
        return {COMMAND_KEY: command.token, COMMAND_SHA: hashlib.sha256(command.record).hexdigest()}
    return {COMMAND_KEY: command.token, COMMAND: base64.b64encode(command.record).decode()}


def event_count(record: bytes) -> int:
    """How many events a stored command record says its command appended."""
    return int(msgspec.json.decode(record, type=_Counted).events)


class _Counted(msgspec.Struct):
    events: int
