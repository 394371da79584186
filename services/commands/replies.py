"""Command replies on the wire: ``{"ok": true, "position", "events"}`` or
``{"ok": false, "error": {"code", "message", "field"}}``."""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from athenaeum.events import Event
from athenaeum.events.constraints import PAGE_PATH, PAGE_PATH_RULE


class ErrorBody(msgspec.Struct, omit_defaults=True):
    """Why a command or query was refused: the rule's code (PROTOCOLS.md), and the field at fault."""

    code: str
    message: str
    field: str | None = None
    # On ``unavailable``: the id to send the command again with, which applies it at most once.
    command_id: str | None = None


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
    def rejected(cls, code: str, message: str, field: str | None = None, command_id: str | None = None) -> Reply:
        return cls(ok=False, error=ErrorBody(code, message, field, command_id))


class AcceptedReply(msgspec.Struct, omit_defaults=True):
    """An accepted command: the events it appended, the last at stream ``position``; a retry
    of the same command id gets the same answer and appends nothing."""

    ok: bool
    position: int | None
    events: msgspec.Raw
    warnings: list[str] = []


class RejectedReply(msgspec.Struct):
    """A refused command or query: nothing was written."""

    ok: bool
    error: ErrorBody | None


_encoder = msgspec.json.Encoder()
_FIELD = re.compile(r"at `\$\.([^`]+)`")
_INDEX = re.compile(r"\[[^\]]*\]")  # a list's index or a dict's key in msgspec's path
_NAMED = re.compile(r"(?:unknown|missing required) field `([^`]+)`")


def encode_events(events: Sequence[Event]) -> msgspec.Raw:
    return msgspec.Raw(_encoder.encode(events))


def encode(reply: Reply) -> bytes:
    """Exactly the documented shape: an accepted reply has no error, a rejected one no events."""
    if reply.ok:
        return _encoder.encode(AcceptedReply(True, reply.position, reply.events, reply.warnings))
    return _encoder.encode(RejectedReply(False, reply.error))


decode = msgspec.json.Decoder(Reply).decode

# HTTP status of each rule code: malformed input 400, not found 404, a state the command
# conflicts with 409, any other rule 422 (see http_status).
_STATUS_OF = {  # the rest: 409 or 422
    "invalid": 400, "not_found": 404, "unavailable": 503,
    # Who sends is not proven (401), or is proven and may not (403).
    "bad_signature": 401, "unauthenticated": 401, "actor_mismatch": 403, "key_revoked": 403, "not_human": 403,
}
_CONFLICTS = frozenset({
    "already_exists", "already_voted", "arbitration_exists", "trigger_mismatch", "illegal_transition",
    "not_arbitrating", "finding_mismatch", "conflict", "not_open", "voting_closed", "not_pending_human",
    "thread_closed", "thread_not_open", "thread_not_closed", "reopen_exhausted", "stale_revision",
})


def http_status(code: str) -> int:
    return _STATUS_OF.get(code) or (409 if code in _CONFLICTS else 422)


# A pattern no reader of an error can follow: what it requires, in words instead.
_IN_WORDS = {f"matching regex {PAGE_PATH!r}": f"that is {PAGE_PATH_RULE}"}


def malformed(error: msgspec.DecodeError) -> Reply:
    """A command that does not decode: ``invalid``, naming the field when msgspec does."""
    return Reply.rejected("invalid", undecoded(error), field_named(str(error)))


def undecoded(error: msgspec.DecodeError) -> str:
    """What msgspec says of a body it could not decode, with any pattern too long to follow said in words."""
    message = str(error)
    for pattern, words in _IN_WORDS.items():
        message = message.replace(pattern, words)
    return message


def field_named(message: str) -> str | None:
    """The field a msgspec decoding error names, if any, as a dotted path without list indexes:
    ``... - at `$.caveats[0].verifier` `` names ``caveats.verifier``, and ``unknown field `x` -
    at `$.payload` `` names ``payload.x``."""
    path, named = _FIELD.search(message), _NAMED.search(message)
    fields = [_INDEX.sub("", path.group(1))] if path else []
    fields += [named.group(1)] if named else []
    return ".".join(fields) or None
