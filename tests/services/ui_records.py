"""Records for the web page's tests, made over HTTP by agents the gateway takes at their word
(a serve that trusts ``X-Agent-Name`` from 127.0.0.1); only the human, ada, must sign."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import httpx
import nkeys

from athenaeum.services.identity.keys import key_path
from tests.services.conftest import Served

ARTIFACT = "# ADR\n\n## Scope\nEvery agent logs to the ledger.\n"
SHA = hashlib.sha256(ARTIFACT.encode()).hexdigest()


def sent(http: httpx.Client, path: str, agent: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = http.post(f"/commands/{path}", headers={"X-Agent-Name": agent}, json=body)
    assert reply.status_code == 200, reply.text
    return reply.json()


def pending_human(http: httpx.Client, topic: str, roster: tuple[str, ...] = ("alice", "bob")) -> None:
    """``topic`` decomposed by bob's dissent on A1, waiting on the human."""
    sent(http, "ratification/init", "alice", {"topic": topic, "roster": list(roster), "artifact": ARTIFACT})
    for agent in roster[:-1]:
        sent(http, "ratification/vote", agent, {"topic": topic, "sha256": SHA, "decision": "SIGN"})
    sent(http, "ratification/vote", roster[-1], {"topic": topic, "sha256": SHA, "decision": "DISSENT", "dissent": [{
        "atom": {"section": "Scope", "anchor": "ledger"}, "objection": "which ledger?",
        "proposed_resolution": "rewrite"}]})


def seed_of(served: Served, human: str = "ada") -> str:
    return key_path(served.data_dir, human).read_text().strip()


def signed_as(http: httpx.Client, seed: str, actor: str, path: str, command: dict[str, Any]) -> httpx.Response:
    """What the page's script does: ask the bytes to sign, sign them, send the command."""
    asked = http.post(f"/ui/signing/{path}", json={"actor": actor, "command": command})
    if asked.status_code != 200:
        return asked
    to_sign = asked.json()
    signature = nkeys.from_seed(seed.encode()).sign(base64.b64decode(to_sign["message"]))
    return http.post(f"/commands/{path}", content=to_sign["command"], headers={
        "Content-Type": "application/json", "X-Agent-Name": actor,
        "Athenaeum-Signature": base64.urlsafe_b64encode(signature).decode(),
        "Athenaeum-Signed-At": to_sign["signed_at"]})
