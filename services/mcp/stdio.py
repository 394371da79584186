"""``athenaeum mcp --as NAME``: the MCP server on stdin and stdout, for an agent runtime's own
tool configuration. It connects to NATS as NAME with NAME's key, as the command line does, and
signs every command with it: the agent acts only as itself."""

from __future__ import annotations

from typing import Any

from mcp.server.stdio import stdio_server

from athenaeum.services.client import AthenaeumClient
from athenaeum.services.client.nats_client import Seed
from athenaeum.services.mcp.server import mcp_server


class Signer:
    """The one sender of a stdio server: the agent it was started as."""

    def __init__(self, client: AthenaeumClient) -> None:
        self._client = client

    def client(self, ctx: Any) -> AthenaeumClient:
        return self._client

    def agent(self, ctx: Any) -> str | None:
        return self._client.actor


async def serve_stdio(url: str, actor: str, seed: Seed | None) -> None:
    """Until the runtime closes stdin. Raises ``Unreachable`` when NATS does not admit the agent."""
    async with await AthenaeumClient.connect(url, actor, seed=seed) as client:
        server = mcp_server(Signer(client), client.nc)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
