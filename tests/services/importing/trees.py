"""Original-format trees, written as the original ratification tools write them (FORMATS.md):
``.athenaeum/<topic>/`` with its manifest, artifact, vote files and log, broken on request."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml

ARTIFACT = "# ADR 7\n\n## Scope\nAll agents log to the ledger.\n\n## Retention\nKeep logs 30 days.\n"
SHA = hashlib.sha256(ARTIFACT.encode()).hexdigest()


def ratification(root: Path, topic: str, roster: list[str], votes: dict[str, dict[str, Any]], status: str = "open",
                 expires_at: str = "2099-01-01T00:00:00Z", mode: str = "standard", **manifest: Any) -> Path:
    folder = root / ".athenaeum" / topic
    folder.mkdir(parents=True)
    (folder / "artifact.md").write_text(ARTIFACT)
    fields = {"topic": topic, "initiator": roster[0], "artifact_sha256": SHA, "artifact_origin": "docs/adr-7.md@4f2a9c1",
              "roster": roster, "expires_at": expires_at, "mode": mode, "status": status} | manifest
    (folder / "manifest.yaml").write_text(yaml.safe_dump(fields, sort_keys=False))
    log = [f"[2026-05-15T09:00:00Z] {roster[0]} | OPENED: roster {', '.join(roster)}"]
    for agent, vote in votes.items():
        fields = {"agent": agent, "artifact_sha256": SHA, "decision": "SIGN", "timestamp": "2026-05-15T10:00:00Z"} | vote
        (folder / f"{agent}.vote.yaml").write_text(yaml.safe_dump(fields, sort_keys=False))
        log.append(f"[{fields['timestamp']}] {agent} | VOTE: {fields['decision']}")
    (folder / "log.md").write_text("\n".join(log) + "\n")
    return folder


def dissent(section: str = "Retention", objection: str = "30 days is too short") -> list[dict[str, Any]]:
    return [{"atom": {"section": section, "anchor": "Keep logs"}, "objection": objection,
             "proposed_resolution": "ticket"}]
