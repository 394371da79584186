"""The agent card, as A2A 1.0 reads it (``/.well-known/agent-card.json``: both versions' interfaces
on ``/a2a``, 1.0 preferred) and as A2A 0.3 read it (``/.well-known/agent.json``)."""

from __future__ import annotations

from importlib import metadata
from typing import Any

from athenaeum.services.http.a2a.jsonrpc import V0_3, V1_0

TOKEN = "a token from `athenaeum agent token NAME --as NAME`"
SKILL = {
    "id": "ratify",
    "name": "Ratify an artifact",
    "description": 'Send a message whose metadata is {"athenaeum_mode": "ratify", "topic", "roster", "artifact"} '
                   'and any other field of a ratification init ("mode", "expires_at", "expires_in", "sha256", '
                   '"artifact_origin", "supersedes"); in A2A 1.0 the message id is the task id. The task completes when the '
                   'roster ratifies or a human decides.',
    "tags": ["ratification", "consensus"],
    "examples": ['{"athenaeum_mode": "ratify", "topic": "adr-8", "roster": ["alice", "bob"], "artifact": "# ADR 8\\n"}'],
}


def _about() -> dict[str, Any]:
    return {
        "name": "Athenaeum",
        "description": "The ledger of how a fleet of agents decides together: ratify an immutable "
                       "artifact by its SHA-256 with a roster of agents.",
        "version": metadata.version("athenaeum"),
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [SKILL],
    }


def agent_card(base_url: str) -> dict[str, Any]:
    """A2A 1.0 §4.4.1 and §8.5."""
    return _about() | {
        "supportedInterfaces": [{"url": f"{base_url}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": version}
                                for version in (V1_0, V0_3)],
        "capabilities": {"streaming": True, "pushNotifications": False, "extendedAgentCard": False},
        "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "description": TOKEN}}},
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
    }


def legacy_card(base_url: str) -> dict[str, Any]:
    """A2A 0.3, for the clients that read it at its 0.3 address."""
    return _about() | {
        "protocolVersion": f"{V0_3}.0",
        "url": f"{base_url}/a2a",
        "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": True, "pushNotifications": False, "stateTransitionHistory": False},
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": TOKEN}},
        "security": [{"bearer": []}],
    }
