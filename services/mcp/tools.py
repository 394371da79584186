"""The tools: one per command of the route table, generated from its row (a new command is a new
tool), and one per read (``check``, each family's show and list). A command's result is its
reply as the NATS service gave it; a refusal is a tool error keeping the rule's code, field and
message, so an agent refuses what the command line refuses, with the same codes."""

from __future__ import annotations

import functools
from typing import Any

import mcp_types as types
import msgspec

from athenaeum.aggregates.rules import RuleViolation
from athenaeum.services.client import AthenaeumClient, NotPermitted, Unreachable
from athenaeum.services.commands.reading import read_command
from athenaeum.services.commands.replies import ErrorBody, Reply, encode, field_named, malformed
from athenaeum.services.commands.routes import EXPOSED, Route
from athenaeum.services.mcp.naming import tool_name
from athenaeum.services.mcp.next_calls import call_for
from athenaeum.services.mcp.schemas import input_schema
from athenaeum.services.queries.service import QUERIES
from athenaeum.services.queries.wire import Check, Query

COMMANDS: dict[str, Route] = {tool_name(route.group, route.verb): route for route in EXPOSED}
# Each family's show and list, and check: the reads an agent acts from.
READS: dict[str, tuple[str, type[Query]]] = {
    "check": ("check", Check),
    **{tool_name(*name.split(".")): (name, query) for name, (query, _) in QUERIES.items()
       if name.endswith((".show", ".list"))},
}
_CHECKED = ("What waits on you (or on `agent`), the soonest due first; each item carries `call`, the tool call "
            "that acts on it (`<...>` where only you can say).")


def tools() -> list[types.Tool]:
    listed = [types.Tool(name=name, description=_described(route), input_schema=input_schema(route.command))
              for name, route in COMMANDS.items()]
    for name, (query, struct) in READS.items():
        schema = input_schema(struct, optional=frozenset({"agent"}) if struct is Check else frozenset())
        listed.append(types.Tool(name=name, description=_read_described(query, struct), input_schema=schema,
                                 annotations=types.ToolAnnotations(read_only_hint=True)))
    return listed


def _described(route: Route) -> str:
    doc = " ".join((route.command.__doc__ or "").split())
    said = f"{route.group} {route.verb} (athenaeum.cmd.{route.group}.{route.verb})"
    return f"{said}: {doc}" if doc else said


def _read_described(query: str, struct: type[Query]) -> str:
    family, _, verb = query.rpartition(".")
    if struct is Check:
        return _CHECKED
    if verb == "show":
        return f"One {family} record, as its read model holds it."
    return f"{family}: {' '.join((struct.__doc__ or '').split())}"


@functools.cache
def _decoder(command: type) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(command)


async def call(client: AthenaeumClient, agent: str | None, name: str, arguments: dict[str, Any] | None
               ) -> types.CallToolResult:
    """Run tool ``name`` as ``client``'s sender; ``agent``: whom ``check`` is about by default."""
    if (route := COMMANDS.get(name)) is not None:
        return replied(await _send(client, route, arguments or {}))
    if name in READS:
        return await _read(client, agent, name, arguments or {})
    return refused(ErrorBody("not_found", f"no tool {name!r}; tools/list names them", "name"))


async def _send(client: AthenaeumClient, route: Route, arguments: dict[str, Any]) -> Reply:
    try:  # decoded as the NATS service and the HTTP gateway decode a command
        command = read_command(msgspec.json.encode(arguments), _decoder(route.command))
    except RuleViolation as violation:
        return Reply.rejected(violation.code, violation.message, violation.field)
    except msgspec.DecodeError as error:
        return malformed(error)
    try:
        return await client.send(command)
    except Unreachable as error:
        return Reply.rejected("unavailable", str(error), command_id=error.command_id)
    except NotPermitted as error:
        return Reply.rejected("not_permitted", str(error))


async def _read(client: AthenaeumClient, agent: str | None, name: str, arguments: dict[str, Any]
                ) -> types.CallToolResult:
    query, struct = READS[name]
    if name == "check":
        arguments = {"agent": agent} | arguments
        if arguments["agent"] is None:
            return refused(ErrorBody("invalid", "name the agent whose work to check: the connection names nobody",
                                     "agent"))
    try:  # refused here as the query service would, before a field could pass for the query's name
        msgspec.convert(arguments, struct)
    except msgspec.ValidationError as error:
        return refused(ErrorBody("invalid", str(error), field_named(str(error))))
    try:
        answer = await client.query(query, **arguments)
    except Unreachable as error:
        return refused(ErrorBody("unavailable", str(error)))
    if not answer["ok"]:
        return refused(msgspec.convert(answer["error"], ErrorBody))
    result = answer["result"]
    if name == "check":
        result = result | {"items": [item | {"call": call_for(item)} for item in result["items"]]}
    return _result(result)


def replied(reply: Reply) -> types.CallToolResult:
    if reply.ok or reply.error is None:
        return _result(msgspec.json.decode(encode(reply)))
    return refused(reply.error)


def refused(error: ErrorBody) -> types.CallToolResult:
    """A tool error whose structured content is the refusal as every face gives it."""
    where = f" ({error.field})" if error.field else ""
    return types.CallToolResult(
        content=[types.TextContent(text=f"refused: {error.code}{where}: {error.message}")],
        structured_content={"ok": False, "error": msgspec.to_builtins(error)},
        is_error=True,
    )


def _result(result: Any) -> types.CallToolResult:
    text = msgspec.json.encode(result).decode()
    structured = result if isinstance(result, dict) else {"result": result}
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)
