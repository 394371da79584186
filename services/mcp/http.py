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

from athenaeum.aggregates.rules import SLUG
from athenaeum.services.client import AthenaeumClient
from athenaeum.services.http.common import AGENT_HEADER, BEARER, header
from athenaeum.services.mcp.server import Context, mcp_server

PATH = "/mcp"
UNAUTHENTICATED = msgspec.json.encode({"ok": False, "error": {
    "code": "unauthenticated", "field": "Authorization",
    "message": "Authorization: Bearer <token> is required (a human issues one: athenaeum agent token NAME)"}})


def bearer_token(request: Any) -> str | None:
    scheme, _, credentials = header(request, "Authorization").partition(" ")
    return credentials.strip() or None if scheme.lower() == BEARER else None


class TokenHolder:
    """Each request's sender: the holder of the token it carries."""

    def __init__(self, nc: Client, timeout: float = 10.0) -> None:
        self.nc, self.timeout = nc, timeout

    def client(self, ctx: Context) -> AthenaeumClient:
        return AthenaeumClient(self.nc, self.agent(ctx) or "", self.timeout, token=bearer_token(ctx.request))

    def agent(self, ctx: Context) -> str | None:
        named = header(ctx.request, AGENT_HEADER)
        return named if SLUG.fullmatch(named) else None


class McpMount:
    """The mounted app, and the lifespan its sessions need (they run in the manager's task group)."""

    def __init__(self, nc: Client) -> None:
        self.server, self.subscriptions = mcp_server(TokenHolder(nc), nc)
        self.manager = StreamableHTTPSessionManager(app=self.server)
        self.app = StreamableHTTPASGIApp(self.manager)

    def handler(self) -> ASGIRouteHandler:
        @asgi(PATH, is_mount=True, copy_scope=True)
        async def mcp(scope: Scope, receive: Receive, send: Send) -> None:
            if bearer_token(Request(scope)) is None:
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": UNAUTHENTICATED})
                return
            await self.app(scope, receive, send)  # type: ignore[arg-type]

        return mcp

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Litestar) -> AsyncIterator[None]:
        async with self.manager.run():
            try:
                yield
            finally:
                await self.subscriptions.close()
