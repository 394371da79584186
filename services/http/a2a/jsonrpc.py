"""JSON-RPC 2.0 as A2A speaks it: the error codes, which A2A version a request speaks, and the
replies, as one JSON object or as server-sent events that stay alive while nothing happens."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any, NamedTuple, TypeVar

import msgspec
from litestar import MediaType, Request, Response
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
TASK_NOT_FOUND, TASK_NOT_CANCELABLE, PUSH_NOTIFICATION_NOT_SUPPORTED, UNSUPPORTED_OPERATION = -32001, -32002, -32003, -32004
VERSION_NOT_SUPPORTED = -32009
# A2A 1.0 details every error with a google.rpc.ErrorInfo whose reason names the error (§3.3.2, §9.5).
REASONS = {
    PARSE_ERROR: "PARSE_ERROR", INVALID_REQUEST: "INVALID_REQUEST", METHOD_NOT_FOUND: "METHOD_NOT_FOUND",
    INVALID_PARAMS: "INVALID_PARAMS", TASK_NOT_FOUND: "TASK_NOT_FOUND", TASK_NOT_CANCELABLE: "TASK_NOT_CANCELABLE",
    PUSH_NOTIFICATION_NOT_SUPPORTED: "PUSH_NOTIFICATION_NOT_SUPPORTED", UNSUPPORTED_OPERATION: "UNSUPPORTED_OPERATION",
    VERSION_NOT_SUPPORTED: "VERSION_NOT_SUPPORTED",
}
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
VERSION_HEADER = "A2A-Version"
V0_3, V1_0 = "0.3", "1.0"
SPOKEN = (V1_0, V0_3)
T = TypeVar("T")


class RpcError(Exception):
    """``data``: what names the cause (the ledger's error object, the task id), as flat fields;
    ``status``: the HTTP status, 200 but where the sender is not proven (401) or may not (403),
    which A2A answers at the HTTP layer (A2A §4.4)."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.data, self.status = code, message, data, status


class Call(NamedTuple):
    id: Any
    params: dict[str, Any]
    request: Request


def spoken_version(header: str) -> str:
    """The version a request speaks, by its ``A2A-Version`` header: Major.Minor, the patch
    ignored; no header is 0.3 (A2A 1.0 §3.6)."""
    given = header.strip()
    if not given:
        return V0_3
    major_minor = ".".join(given.split(".")[:2])
    if major_minor not in SPOKEN:
        raise RpcError(VERSION_NOT_SUPPORTED, f"{VERSION_HEADER} {given!r} is not spoken here: send {VERSION_HEADER}: "
                       f"{V1_0}, or {V0_3} (or no header) for the 0.3 methods",
                       {"requested": given, "supported": ", ".join(SPOKEN)})
    return major_minor


def error_response(rpc_id: Any, error: RpcError, version: str) -> Response[bytes]:
    """In 0.3 the data is the cause as it is; in 1.0 a list of typed details, the cause in an
    ErrorInfo's metadata (a map of strings)."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if version == V0_3:
        if error.data is not None:
            body["data"] = error.data
    else:
        metadata = {key: str(value) for key, value in (error.data or {}).items() if value is not None}
        body["data"] = [{"@type": ERROR_INFO, "reason": REASONS[error.code], "domain": "a2a-protocol.org",
                         "metadata": metadata}]
    # A 401 names the scheme that proves a sender (RFC 9110 §11.6.1), as the card declares it.
    challenge = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
    return _json({"jsonrpc": "2.0", "id": rpc_id, "error": body}, error.status, challenge)


def result_response(rpc_id: Any, result: Any) -> Response[bytes]:
    return _json({"jsonrpc": "2.0", "id": rpc_id, "result": result})


def event_stream(rpc_id: Any, results: AsyncIterator[Any]) -> ServerSentEvent:
    """One event per result; a None result is a comment line, which every SSE client skips and
    which keeps an idle stream from reaching its client's read timeout."""

    async def events() -> AsyncIterator[ServerSentEventMessage]:
        async for result in results:
            if result is None:
                yield ServerSentEventMessage(data=None, comment="keep-alive")
            else:
                body = msgspec.json.encode({"jsonrpc": "2.0", "id": rpc_id, "result": result}).decode()
                yield ServerSentEventMessage(data=body)

    return ServerSentEvent(events())


async def unless_disconnected(request: Request, work: Awaitable[T]) -> T | None:
    """``work``'s result, or None as soon as the client goes away: a wait it no longer reads
    must not hold a watch open. Once the body is read, the next ASGI message is the disconnect."""
    working, gone = asyncio.ensure_future(work), asyncio.ensure_future(request.receive())
    try:
        await asyncio.wait((working, gone), return_when=asyncio.FIRST_COMPLETED)
        return working.result() if working.done() else None
    finally:
        working.cancel()
        gone.cancel()


def _json(body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response[bytes]:
    return Response(msgspec.json.encode(body), status_code=status, media_type=MediaType.JSON, headers=headers)
