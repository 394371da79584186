"""The MCP server as streamable HTTP, mounted on the gateway at ``/mcp``. The caller proves who
it is with its bearer token (``athenaeum agent token NAME``), on every request, and acts only
as the token's holder: the command service checks the token and refuses another name
(``actor_mismatch``). ``X-Agent-Name`` may name the holder, which ``check`` then defaults to."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
from litestar import Litestar, Request
from litestar.handlers import ASGIRouteHandler, asgi
from litestar.types import Receive, Scope, Send
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from nats.aio.client import Client

from athenaeum.aggregates.rules import SLUG, Invalid
from athenaeum.services.client import AthenaeumClient
from athenaeum.services.commands.reading import require_keys_once
from athenaeum.services.http.common import AGENT_HEADER, BEARER, MAX_BODY, header
from athenaeum.services.mcp.server import Context, mcp_server

PATH = "/mcp"
UNAUTHENTICATED = {"code": "unauthenticated", "field": "Authorization",
                   "message": "Authorization: Bearer <token> is required (athenaeum agent token NAME)"}


def bearer_token(request: Any) -> str | None:
    scheme, _, credentials = header(request, "Authorization").partition(" ")
    return (credentials.strip() or None) if scheme.lower() == BEARER else None


class TokenHolder:
    """Each request's sender: the holder of the token it carries."""

    def __init__(self, nc: Client, timeout: float = 10.0) -> None:
        self.nc, self.timeout = nc, timeout

    def client(self, ctx: Context) -> AthenaeumClient:
        return AthenaeumClient(self.nc, self.agent(ctx) or "", self.timeout, token=bearer_token(ctx.request))

    def agent(self, ctx: Context) -> str | None:
        return header(ctx.request, AGENT_HEADER) or None  # a slug: the mount refuses any other


async def _refuse(send: Send, status: int, error: dict[str, str], headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    """Refused before MCP: the error object every face gives, as the gateway's other routes do."""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *headers]})
    await send({"type": "http.response.body", "body": msgspec.json.encode({"ok": False, "error": error})})


async def _body(receive: Receive) -> bytes | None:
    """A request's whole body; None past MAX_BODY."""
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` as the app would have had it: the body read already, then whatever follows (a disconnect)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Any:
        return pending.pop() if pending else await receive()

    return replay


class McpMount:
    """The mounted app, and the lifespan its sessions need (they run in the manager's task group)."""

    def __init__(self, nc: Client) -> None:
        self.server = mcp_server(TokenHolder(nc), nc)
        self.manager = StreamableHTTPSessionManager(app=self.server)
        self.app = StreamableHTTPASGIApp(self.manager)

    def handler(self) -> ASGIRouteHandler:
        @asgi(PATH, is_mount=True, copy_scope=True)
        async def mcp(scope: Scope, receive: Receive, send: Send) -> None:
            request: Request[Any, Any, Any] = Request(scope)
            named = header(request, AGENT_HEADER)
            if bearer_token(request) is None:
                await _refuse(send, 401, UNAUTHENTICATED, ((b"www-authenticate", b"Bearer"),))
            elif named and not SLUG.fullmatch(named):
                await _refuse(send, 400, {"code": "invalid", "field": AGENT_HEADER,
                                          "message": f"the {AGENT_HEADER} header names the token's holder, as an "
                                                     f"agent slug: {named!r}"})
            elif scope["method"] != "POST":
                await self.app(scope, receive, send)  # type: ignore[arg-type]
            elif (read := await _body(receive)) is None:
                await _refuse(send, 413, {"code": "invalid", "field": "body", "message": f"the body is over {MAX_BODY} bytes"})
            else:
                try:  # the SDK's parser keeps the last of two values for a key: which one counts is the sender's to say
                    require_keys_once(read)
                except Invalid as refusal:
                    await _refuse(send, 400, {"code": refusal.code, "field": refusal.field or "body",
                                              "message": refusal.message})
                else:
                    await self.app(scope, _replaying(read, receive), send)  # type: ignore[arg-type]

        return mcp

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        async with self.manager.run():
            yield
