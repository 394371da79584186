"""Athenaeum as an MCP server (the Model Context Protocol, on the official ``mcp`` SDK): a tool
per command of the route table and per read, the rendered records as resources that notify
their readers when they change, over stdio (``athenaeum mcp --as NAME``) or streamable HTTP at
the gateway's ``/mcp``. Another face over the same NATS command and query services, like the
HTTP gateway."""
