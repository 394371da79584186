"""For each thing ``check`` says waits on an agent, the tool call that acts on it: ready to make,
or with ``<...>`` where only the agent can say (its evaluation, its reasons). The MCP twin of
the command line's ``next_steps``."""

from __future__ import annotations

from typing import Any

from athenaeum.services.mcp.naming import tool_name

# The field that names each kind of record in its family's commands and show.
ID_FIELDS = {"ratification": "topic", "quorum": "proposal_id", "thread": "slug", "page": "page", "task": "task_id"}
_FILL_IN = "<{}>"  # a value the agent supplies


def call_for(item: dict[str, Any]) -> dict[str, Any]:
    """``{"name": tool, "arguments": {...}}`` that acts on ``item``, or shows its record."""
    kind, action, named = item["kind"], item["action"], item["id"]
    ident = {ID_FIELDS.get(kind, "id"): named}
    match kind, action:
        case "ratification", "vote":
            return _call("ratification", "vote", ident | {"sha256": item.get("sha256"), "decision": "SIGN"})
        case "ratification", "decide":
            return _call("ratification", "decide", ident | {"decision": "accept-split"})
        case "ratification", "split":
            into = {"atom": {"section": _FILL_IN.format("section"), "anchor": _FILL_IN.format("anchor")},
                    "objection": _FILL_IN.format("objection"), "proposed_resolution": "ticket"}
            return _call("ratification", "split", ident | {"atom": "A1", "into": [into]})
        case "quorum", "vote":
            return _call("quorum", "ack", ident)
        case "quorum", "tiebreak":
            return _call("quorum", "tiebreak", ident | {"decision": "accept"})
        case "thread", "contribute":
            scores = {axis: _FILL_IN.format(axis) for axis in ("N", "C", "R")}
            return _call("thread", "contribute", ident | {"eval": scores, "body": _FILL_IN.format("body")})
        case "thread", "recognize":
            return _call("thread", "recognize", ident)
        case "page", "review":
            return _call("page", "read", ident | {"session_id": _FILL_IN.format("session")})
        case "page", "resolve":
            return _call("page", "resolve", ident | {"agent": _FILL_IN.format("agent"),
                                                     "decision": _FILL_IN.format("decision"),
                                                     "thread": _FILL_IN.format("thread")})
        case "page", "approve":
            return _call("page", "approve", ident | {"level": "canonical"})
    return {"name": f"{kind}_show", "arguments": ident}


def _call(group: str, verb: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool_name(group, verb), "arguments": arguments}
