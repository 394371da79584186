"""The MCP server over Athenaeum, whatever carries it: tools, resources and their changes,
each request answered as the caller its transport proved (``Caller``)."""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from nats.aio.client import Client

from athenaeum.services.client import AthenaeumClient, Unreachable
from athenaeum.services.jetstream.factory import DEFAULT_STREAM, JetStreamFactory
from athenaeum.services.mcp import tools
from athenaeum.services.mcp.changes import Listening, Subscriptions
from athenaeum.services.mcp.listing import BadCursor, resources_page
from athenaeum.services.mcp.resources import MARKDOWN, TEMPLATES, UnknownResource, record_of
from athenaeum.services.views.bucket import bucket_of

Context = ServerRequestContext[Any, Any]
INSTRUCTIONS = (
    "Athenaeum is the ledger of how a fleet of agents decides together: ratifications, quorum proposals, "
    "dialogue threads, canon pages, review tasks. Call `check` first: it lists what waits on you, each item "
    "with the tool call that acts on it. Every other tool is one command or read; a refusal is a tool error "
    "whose `error.code` is the rule broken (PROTOCOLS.md), with the field at fault, and nothing was written. "
    "The rendered records are resources (listed, and reached by resource templates), which notify you when they "
    "change."
)


class Caller(Protocol):
    """Who sends a request, as the transport proved it."""

    def client(self, ctx: Context) -> AthenaeumClient:
        """The client that sends the request's commands as its sender."""

    def agent(self, ctx: Context) -> str | None:
        """Whom ``check`` is about when the call names nobody: the sender, when known."""


def views_bucket() -> str:
    """The views bucket of the ledger this deployment serves (``ATHENAEUM_STREAM``, as serve reads it)."""
    return bucket_of(os.environ.get(JetStreamFactory.STREAM, DEFAULT_STREAM))


def mcp_server(caller: Caller, nc: Client) -> Server[Any]:
    subscriptions = Subscriptions(nc, views_bucket())
    offered = tools.tools()

    async def list_tools(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=offered)

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await tools.call(caller.client(ctx), caller.agent(ctx), params.name, params.arguments)

    async def list_resources(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        try:
            return await resources_page(caller.client(ctx), params.cursor if params else None)
        except BadCursor as bad:
            raise MCPError(types.INVALID_PARAMS, str(bad), {"code": "invalid", "field": "cursor",
                                                            "message": str(bad)}) from None
        except (Unreachable, LookupError) as error:
            raise MCPError(types.INTERNAL_ERROR, str(error), {"code": "unavailable", "message": str(error)}) from None

    async def list_templates(ctx: Context, params: types.PaginatedRequestParams | None
                             ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[t.resource_template() for t in TEMPLATES])

    async def read_resource(ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            record = record_of(params.uri)
        except UnknownResource as unknown:
            raise MCPError(types.INVALID_PARAMS, str(unknown),
                           {"code": "not_found", "field": "uri", "message": str(unknown)}) from None
        try:
            answer = await caller.client(ctx).query(record.query, **record.fields)
        except Unreachable as error:
            raise MCPError(types.INTERNAL_ERROR, str(error), {"code": "unavailable", "message": str(error)}) from None
        if not answer["ok"]:
            error = answer["error"]
            kind = types.INTERNAL_ERROR if error["code"] == "unavailable" else types.INVALID_PARAMS
            raise MCPError(kind, error["message"], error)
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=params.uri, mime_type=MARKDOWN, text=answer["result"]["text"])])

    server: Server[Any] = Server(
        "athenaeum",
        version=metadata.version("athenaeum"),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscriptions.subscribe,
        on_unsubscribe_resource=subscriptions.unsubscribe,
        on_subscriptions_listen=Listening(nc, views_bucket()),
    )
    return server
