"""How tools are named: ``<group>_<verb>`` as the route table spells the command
(``ratification_vote``, ``agent_rotate_key``), in the characters every MCP client accepts."""

from __future__ import annotations


def tool_name(group: str, verb: str) -> str:
    return f"{group}_{verb}".replace("-", "_")
