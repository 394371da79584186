"""Subjects of the event stream (layout 2), and the injective encoding of ids into subject tokens.

Layout of a stream named S:
  S.ev.<aggregate>.<command>   the events of one aggregate, each under the token of the command
                               that appended it ('_' for events no command appended)
  S.cmd.<command>              a command's own marker, when one is written (see ``log``)
  S.trk.s.<escaped>            tracking records of one upstream application
where <aggregate> is u.<uuid>, s.<escaped id>, or h.<sha256 of the id> for an id whose escaped
token would be too long for a subject (its messages then carry the escaped id in a header).
An aggregate's events are read, and its optimistic concurrency checked, on S.ev.<aggregate>.*;
a command's events on one aggregate are found by their literal subject, so a retried command
is recognised without any other record.

A string id keeps ASCII letters, digits, '-' and '_' and writes every other UTF-8 byte as
'~XX', so ids with spaces, dots, slashes, '*', '>' or non-ASCII characters become legal
tokens and no two ids share one. UUIDs and strings live under different tokens, so the
string "1b4e..." and the UUID 1b4e... never collide either.
"""

from __future__ import annotations

import hashlib
import re
from uuid import UUID

from eventsourcing.persistence import ProgrammingError

_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_ESCAPE = re.compile(r"~([0-9A-F]{2})")
EMPTY_TOKEN = "~"  # '~' never stands alone otherwise, and a subject token cannot be empty
# Past this the id is hashed: the server refuses a protocol line over 4 KiB, and nats-py then
# drops the connection for good.
MAX_TOKEN = 200
ORIGINATOR_ID = "Athenaeum-Originator-Id"
# A hashed id travels escaped in a header, and the server refuses over 64 KiB of headers.
MAX_ESCAPED_ID = 32 * 1024
NO_COMMAND = "_"  # the command token of events appended without a command (plain eventsourcing use)
COMMAND_TOKEN_LENGTH = 32


def escape(text: str, marker: str = "~") -> str:
    """``marker`` is '~' in subjects; KV keys, which refuse '~', use '='."""
    if not text:
        return marker
    return "".join(chr(b) if b in _PLAIN else f"{marker}{b:02X}" for b in text.encode())


def unescape(token: str) -> str:
    if token == EMPTY_TOKEN:
        return ""
    raw = bytearray()
    position = 0
    for match in _ESCAPE.finditer(token):
        raw += token[position : match.start()].encode()
        raw.append(int(match.group(1), 16))
        position = match.end()
    raw += token[position:].encode()
    return raw.decode()


class StreamSubjects:
    """Subject names within one stream."""

    def __init__(self, stream: str) -> None:
        self.stream = stream
        self.all = f"{stream}.>"
        self.events = f"{stream}.ev.>"
        self.markers = f"{stream}.cmd.>"
        self._events_prefix = f"{stream}.ev."

    def aggregate(self, originator_id: UUID | str) -> str:
        """The filter of one aggregate's events: every command's subject under it."""
        return f"{self._aggregate_prefix(originator_id)}.*"

    def event(self, originator_id: UUID | str, command: str = NO_COMMAND) -> str:
        """The subject of an event of ``originator_id`` appended by the command whose token is ``command``."""
        return f"{self._aggregate_prefix(originator_id)}.{command}"

    def _aggregate_prefix(self, originator_id: UUID | str) -> str:
        if isinstance(originator_id, UUID):
            return f"{self._events_prefix}u.{originator_id}"
        return f"{self._events_prefix}{_token(originator_id)}"

    def id_headers(self, originator_id: UUID | str, subject: str) -> dict[str, str]:
        """The headers that name the aggregate when its subject cannot."""
        if subject.startswith(f"{self._events_prefix}h."):
            escaped = escape(str(originator_id))
            if len(escaped) > MAX_ESCAPED_ID:
                raise ProgrammingError(
                    f"an aggregate id of {len(escaped):,} bytes once escaped; at most {MAX_ESCAPED_ID:,} are stored"
                )
            return {ORIGINATOR_ID: escaped}
        return {}

    def is_event(self, subject: str) -> bool:
        return subject.startswith(self._events_prefix) and subject.count(".") == self._events_prefix.count(".") + 2

    def originator_id(self, subject: str, headers: dict[str, str]) -> UUID | str:
        kind, _, rest = subject[len(self._events_prefix) :].partition(".")
        token = rest.rpartition(".")[0]
        if kind == "u":
            return UUID(token)
        return unescape(headers[ORIGINATOR_ID] if kind == "h" else token)

    @staticmethod
    def command_of(subject: str) -> str:
        """The token of the command that appended an event, or that a marker belongs to."""
        return subject.rpartition(".")[2]

    def tracking(self, application_name: str) -> str:
        return f"{self.stream}.trk.{_token(application_name)}"

    def marker(self, command: str) -> str:
        return f"{self.stream}.cmd.{command}"


def command_token(key: str) -> str:
    """The subject token of the command a retry key names: 128 bits of its SHA-256."""
    return hashlib.sha256(key.encode()).hexdigest()[:COMMAND_TOKEN_LENGTH]


def _token(name: str) -> str:
    token = escape(name)
    return f"s.{token}" if len(token) <= MAX_TOKEN else f"h.{_digest(name)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
