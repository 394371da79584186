"""What the HTTP routes share: the gateway to the NATS services, and responses in the shape of
the NATS replies, with each rule code's HTTP status."""

from __future__ import annotations

import functools
from typing import Annotated, Any

import msgspec
import nats.errors
from litestar import MediaType, Request, Response
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, QueryParameter
from nats.aio.client import Client

from athenaeum.aggregates.rules import SLUG, RuleViolation
from athenaeum.events.constraints import AGENT_SLUG, COMMAND_ID_LIMIT
from athenaeum.events.commands import Command
from athenaeum.projectors import a2a_tasks
from athenaeum.services.client import AthenaeumClient, Unreachable
from athenaeum.services.commands.credentials import UNISSUED, token_sha256
from athenaeum.services.commands.service import LEDGER_SUBJECT, SIGNATURE_HEADER, SIGNED_AT_HEADER, TOKEN_SUBJECT
from athenaeum.services.commands.reading import read_command
from athenaeum.services.commands.replies import AcceptedReply, RejectedReply, Reply, encode, field_named, http_status, undecoded

AGENT_HEADER = "X-Agent-Name"
BEARER = "bearer"  # the Authorization scheme, in any case (RFC 7235)
IDEMPOTENCY_HEADER = "Idempotency-Key"
# A text of 512,000 characters, JSON-escaped as \u surrogate pairs (12 bytes a character, as
# Python's json.dumps writes emoji), with room to spare; re-encoded for NATS it is 2 MB at most.
MAX_BODY = 7 * 1024 * 1024
# The headers, declared on the routes that read them so the OpenAPI document lists them.
AgentHeader = Annotated[str | None, HeaderParameter(
    name=AGENT_HEADER, required=False, description="who acts", schema_extra={"pattern": AGENT_SLUG})]
IdempotencyHeader = Annotated[str | None, HeaderParameter(
    name=IDEMPOTENCY_HEADER, required=False,
    description="the command's command_id: a retry appends nothing (a body that carries a command_id too must give "
                "the same one)",
    schema_extra={"maxLength": COMMAND_ID_LIMIT})]
# Required (400 without it, or empty, with the original's message), which the route checks itself.
ProjectHeader = Annotated[str | None, HeaderParameter(
    name="X-Project-Id", required=True, description="the task's project; 400 without it",
    schema_extra={"pattern": r"\S"})]
# A route that sends a command (``opt`` of its handler): its sender must offer proof before
# anything of the request is read, so an unproven caller learns nothing of a command's shape.
SENDS_COMMANDS = {"sends_commands": True}
# ``?after=<position>``: wait until the views reach the caller's own write (one the ledger holds).
After = Annotated[int | None, QueryParameter(name="after", required=False, ge=0, schema_extra={"minimum": 0})]


def documented(body: type, description: str) -> ResponseSpec:
    """A response in the OpenAPI document (the bodies are msgspec-encoded by the handlers)."""
    return ResponseSpec(body, description=description, generate_examples=False)


# Each rule code's status, as ``replies.http_status`` maps it.
READ_ERRORS = {
    400: documented(RejectedReply, "invalid: a parameter breaks a rule; the error names it"),
    404: documented(RejectedReply, "not_found: no such record"),
    503: documented(RejectedReply, "unavailable: the services behind the gateway did not answer"),
}
COMMAND_ERRORS = READ_ERRORS | {
    400: documented(RejectedReply, "invalid: the body, a header or a field breaks a rule; the error names the "
                                   "field, and nothing is written"),
    401: documented(RejectedReply, "who sends is not proven (unauthenticated, bad_signature)"),
    403: documented(RejectedReply, "who sends is proven, and may not (actor_mismatch, key_revoked, not_human)"),
    409: documented(RejectedReply, "the command conflicts with the record's state (already_voted, not_open, ...)"),
    422: documented(RejectedReply, "another rule of PROTOCOLS.md refuses the command (not_rostered, ...)"),
}
COMMAND_RESPONSES = {200: documented(AcceptedReply, "accepted: the events appended"), **COMMAND_ERRORS}


def body_refusal(body: bytes, shape: Any) -> dict[str, Any] | None:
    """The error object for a body that is not ``shape`` as the NATS service reads it (the
    framework's decoder would keep the last of two values), or None when it is."""
    try:
        read_command(body, _decoder(shape))
    except RuleViolation as violation:
        return {"code": violation.code, "message": violation.message, "field": violation.field}
    except msgspec.DecodeError as error:  # a ValidationError is a DecodeError too
        return {"code": "invalid", "message": f"the request is not valid: {undecoded(error)}",
                "field": field_named(str(error)) or "body"}
    return None


@functools.cache
def _decoder(shape: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(shape)


def waiting_for(after: int | None) -> dict[str, int]:
    """The query fields that make a read wait for ``after``, when the caller gave it."""
    return {} if after is None else {"after": after}


class Gateway:
    """Sends commands and queries over NATS on behalf of HTTP callers."""

    def __init__(self, nc: Client, timeout: float = 10.0, trusted: frozenset[str] = frozenset()) -> None:
        self.nc = nc
        self.timeout = timeout
        # Addresses whose X-Agent-Name is taken on their word (a local authenticating proxy):
        # the ledger stores what they send as header-asserted.
        self.trusted = trusted

    def client(self, actor: str, token: str | None = None, signature: tuple[str, str] | None = None) -> AthenaeumClient:
        return AthenaeumClient(self.nc, actor, self.timeout, token=token, signature=signature)

    async def send(self, request: Request, command: Command, *, a2a: bool = False) -> Reply:
        """``a2a``: sent by the A2A gateway, the only sender whose command ids name A2A tasks.
        The sender proves who it is with a bearer token (the command is then its holder's, and
        ``X-Agent-Name`` may be left out) or by signing the command with its own key
        (``Athenaeum-Signature`` and ``Athenaeum-Signed-At``, as over NATS); only a trusted
        address may name a sender and prove nothing."""
        if (unproven := self.unproven(request)) is not None:
            return unproven
        actor = header(request, AGENT_HEADER)
        token, signed = _token(request), _signature(request)
        if not SLUG.fullmatch(actor) and not (token and not actor):
            return Reply.rejected(
                "invalid", f"the {AGENT_HEADER} header names who sends the command, as an agent slug: {actor!r}",
                AGENT_HEADER,
            )
        id_field = "command_id"  # where the request gave the id, for its errors
        if key := header(request, IDEMPOTENCY_HEADER):
            if command.command_id is not None and command.command_id != key:
                return Reply.rejected("invalid", f"the {IDEMPOTENCY_HEADER} header ({key!r}) and the body's command_id "
                                      f"({command.command_id!r}) name two commands: give the id once",
                                      IDEMPOTENCY_HEADER)
            command, id_field = msgspec.structs.replace(command, command_id=key), IDEMPOTENCY_HEADER
        if not a2a and (command.command_id or "").startswith(a2a_tasks.COMMAND_PREFIX):
            return Reply.rejected("invalid", f"command ids starting {a2a_tasks.COMMAND_PREFIX!r} name A2A tasks; "
                                  "send those through /a2a", id_field)
        try:
            return await self.client(actor, token, signed).send(command)
        except Unreachable as error:
            return Reply.rejected("unavailable", str(error), command_id=error.command_id)

    def unproven(self, request: Request) -> Reply | None:
        """The refusal of a sender who offers no proof the gateway can take (no bearer token,
        no signature, an Authorization of another scheme or none), unless a trusted address
        names it; None when there is one to pass on (the command service checks it)."""
        authorization = header(request, "Authorization")
        token = _token(request)
        if (authorization and not token) or not (token or _signature(request) or self.trusts(request)):
            return Reply.rejected("unauthenticated", "Authorization: Bearer <token> is required (athenaeum agent token "
                                  "NAME --as NAME prints one, as does a human's --as), or a command signed with the "
                                  "sender's key", "Authorization")
        return None

    async def refused(self, request: Request) -> Reply | None:
        """``unproven``'s refusal, or that of a bearer token the ledger never issued (or
        revoked), asked of the command service before anything of the request is read."""
        if (unproven := self.unproven(request)) is not None:
            return unproven
        token = _token(request)
        if token is None or _signature(request) or await self._issued(token):
            return None
        return Reply.rejected("unauthenticated", UNISSUED, "Authorization")

    async def _issued(self, token: str) -> bool:
        """Whether the roster holds ``token``; when no command service answers, taken as held:
        the command it came with is then answered as unavailable, which says why."""
        try:
            answer = await self.nc.request(TOKEN_SUBJECT, token_sha256(token).encode(), timeout=self.timeout)
        except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
            return True
        return bool(msgspec.json.decode(answer.data).get("issued", True))

    async def ledger(self) -> dict[str, Any]:
        try:
            answer = await self.nc.request(LEDGER_SUBJECT, b"", timeout=self.timeout)
        except (nats.errors.NoRespondersError, nats.errors.TimeoutError) as error:
            return {"ok": False, "error": {"code": "unavailable", "message": f"no command service answers: {error!r}"}}
        return {"ok": True, "result": msgspec.json.decode(answer.data)}

    def trusts(self, request: Request) -> bool:
        return request.client is not None and request.client.host in self.trusted

    async def query(self, name: str, **fields: Any) -> dict[str, Any]:
        try:
            return await self.client("http-gateway").query(name, **fields)
        except Unreachable as error:
            return {"ok": False, "error": {"code": "unavailable", "message": str(error)}}


def header(request: Request, name: str) -> str:
    """A header's text: HTTP hands headers over as Latin-1, clients send UTF-8."""
    value = request.headers.get(name, "")
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:  # not UTF-8 after all: keep what HTTP gave
        return value


def _token(request: Request) -> str | None:
    scheme, _, credentials = header(request, "Authorization").partition(" ")
    return credentials.strip() if scheme.lower() == BEARER else None


def _signature(request: Request) -> tuple[str, str] | None:
    signature = header(request, SIGNATURE_HEADER), header(request, SIGNED_AT_HEADER)
    return signature if any(signature) else None


def reply_response(reply: Reply) -> Response[bytes]:
    status = 200 if reply.ok or reply.error is None else http_status(reply.error.code)
    return Response(encode(reply), status_code=status, media_type=MediaType.JSON)


def answer_response(answer: dict[str, Any]) -> Response[Any]:
    """A query's answer: its result as JSON, or as markdown when it is a rendered record."""
    if not answer["ok"]:
        return error_response(answer["error"])
    result = answer["result"]
    if isinstance(result, dict) and "record" in result:
        return Response(result["text"], media_type="text/markdown")
    return Response(msgspec.json.encode(result), media_type=MediaType.JSON)


def error_response(error: dict[str, Any]) -> Response[bytes]:
    body = msgspec.json.encode({"ok": False, "error": error})
    return Response(body, status_code=http_status(error["code"]), media_type=MediaType.JSON)
