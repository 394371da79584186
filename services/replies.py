"""Command replies on the wire: ``{"ok": true, "position", "events"}`` or
``{"ok": false, "error": {"code", "message", "field"}}``."""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from athenaeum.events import Event


class ErrorBody(msgspec.Struct, omit_defaults=True):
    code: str
    message: str
    field: str | None = None


NO_EVENTS = msgspec.Raw(b"[]")


class Reply(msgspec.Struct):
    ok: bool
    position: int | None = None
    events: msgspec.Raw = NO_EVENTS  # the JSON array of the events appended
    error: ErrorBody | None = None
    warnings: list[str] = []  # accepted, but worth a second look (a proposal over short form)

    @classmethod
    def accepted(cls, position: int | None, events: msgspec.Raw) -> Reply:
        return cls(ok=True, position=position, events=events)

    @classmethod
    def rejected(cls, code: str, message: str, field: str | None = None) -> Reply:
        return cls(ok=False, error=ErrorBody(code, message, field))


class _Accepted(msgspec.Struct, omit_defaults=True):
    ok: bool
    position: int | None
    events: msgspec.Raw
    warnings: list[str] = []


class _Rejected(msgspec.Struct):
    ok: bool
    error: ErrorBody | None
_encoder = msgspec.json.Encoder()
_FIELD = re.compile(r"at `\$\.([^`\[]+)")
_UNKNOWN = re.compile(r"unknown field `([^`]+)`")


def encode_events(events: Sequence[Event]) -> msgspec.Raw:
    return msgspec.Raw(_encoder.encode(events))


def encode(reply: Reply) -> bytes:
    """Exactly the documented shape: an accepted reply has no error, a rejected one no events."""
    if reply.ok:
        return _encoder.encode(_Accepted(True, reply.position, reply.events, reply.warnings))
    return _encoder.encode(_Rejected(False, reply.error))


decode = msgspec.json.Decoder(Reply).decode


def malformed(error: msgspec.DecodeError) -> Reply:
    """A command that does not decode: ``invalid``, naming the field when msgspec does."""
    message = str(error)
    found = _FIELD.search(message) or _UNKNOWN.search(message)
    return Reply.rejected("invalid", message, found.group(1) if found else None)
