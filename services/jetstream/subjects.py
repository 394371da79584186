"""Subjects of the event stream (layout 2), and the injective encoding of ids into subject tokens.

Layout of a stream named S:
  S.ev.u.<uuid>        events of an aggregate whose id is a UUID
  S.ev.s.<escaped>     events of an aggregate whose id is a string
  S.cmd.<command>      a command's own marker, when one is written (see ``log``), by the
                       command's key token
  S.trk.s.<escaped>    tracking records of one upstream application
One literal subject per aggregate keeps its reads cheap and gives each aggregate its own
optimistic-concurrency sequence, which JetStream checks in constant time (an expectation on a
wildcard of subjects costs with their number: 760 us against 430 at 10,000 of them). An id
whose escaped token would be too long for a subject goes under S.ev.h.<sha256 of the id>, and
its messages carry the escaped id in a header instead.

A string id keeps ASCII letters, digits, '-' and '_' and writes every other UTF-8 byte as
'~XX', so ids with spaces, dots, slashes, '*', '>' or non-ASCII characters become legal
tokens and no two ids share one. UUIDs and strings live under different tokens, so the
string "1b4e..." and the UUID 1b4e... never collide either.
"""

from __future__ import annotations

import functools
import hashlib
import re
from uuid import UUID

from eventsourcing.persistence import ProgrammingError

_ALL_PLAIN = re.compile(r"[A-Za-z0-9_-]+")
_NOT_PLAIN = re.compile(rb"[^A-Za-z0-9_-]")
_ESCAPE = re.compile(r"~([0-9A-F]{2})")
EMPTY_TOKEN = "~"  # '~' never stands alone otherwise, and a subject token cannot be empty
# Past this the id is hashed: the server refuses a protocol line over 4 KiB, and nats-py then
# drops the connection for good.
MAX_TOKEN = 200
ORIGINATOR_ID = "Athenaeum-Originator-Id"
# A hashed id travels escaped in a header, and the server refuses over 64 KiB of headers.
MAX_ESCAPED_ID = 32 * 1024
COMMAND_TOKEN_LENGTH = 32


def escape(text: str, marker: str = "~") -> str:
    """``marker`` is '~' in subjects; KV keys, which refuse '~', use '='."""
    if not text:
        return marker
    if _ALL_PLAIN.fullmatch(text):  # most ids (slugs, agents' names): nothing to escape
        return text
    prefix = marker.encode()
    return _NOT_PLAIN.sub(lambda byte: b"%s%02X" % (prefix, byte[0][0]), text.encode()).decode()


def unescape(token: str) -> str:
    if token == EMPTY_TOKEN:
        return ""
    if "~" not in token:  # most ids: nothing to undo (the audit reads two a position)
        return token
    return _unescaped(token)


@functools.lru_cache(maxsize=4096)  # an aggregate's id comes back with each of its events
def _unescaped(token: str) -> str:
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
        self._events_prefix = f"{stream}.ev."

    def aggregate(self, originator_id: UUID | str) -> str:
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

    def originator_id(self, subject: str, headers: dict[str, str]) -> UUID | str:
        kind, _, token = subject[len(self._events_prefix) :].partition(".")
        if kind == "u":
            return UUID(token)
        return unescape(headers[ORIGINATOR_ID] if kind == "h" else token)

    def tracking(self, application_name: str) -> str:
        return f"{self.stream}.trk.{_token(application_name)}"

    def marker(self, command: str) -> str:
        return f"{self.stream}.cmd.{command}"


def command_token(key: str) -> str:
    """The token of the command a retry key names (its marker's subject token): 128 bits of
    its SHA-256."""
    return hashlib.sha256(key.encode()).hexdigest()[:COMMAND_TOKEN_LENGTH]


@functools.lru_cache(maxsize=4096)  # an aggregate's subject is built for each read and append of it
def _token(name: str) -> str:
    token = escape(name)
    return f"s.{token}" if len(token) <= MAX_TOKEN else f"h.{_digest(name)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
