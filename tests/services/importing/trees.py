"""Original-format trees, written as the original tools write them (FORMATS.md): ratification
folders ``.athenaeum/<topic>/``, dialogue threads and canon pages under ``wiki/``, broken on request."""

from __future__ import annotations

import hashlib
import json
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


def thread(root: Path, slug: str, entries: list[dict[str, Any]], status: str = "open", **meta_fields: Any) -> Path:
    """A dialogue thread as the wiki's agents write it: ``entries`` give each entry's front
    matter beyond n, type and ts (author, last_eval's v, ...); refs name the entry before. An
    entry's file is named by its author in kebab case (``Agent A`` writes ``001-agent-a.md``);
    ``meta_fields`` are meta.yaml's beyond the usual."""
    folder = root / "wiki" / "agents" / "dialogue" / slug
    (folder / "entries").mkdir(parents=True)
    (folder / "thread.md").write_text(
        f"---\nslug: {slug}\nopened_by: {entries[0]['author']}\nopened_at: 2026-05-10T08:00:00Z\n---\n\n"
        "## Context\n\nShould canon pages carry a soft-canonical state?\n\n"
        "## Open Questions (OQ)\n\n- **OQ-1**: who approves?\n")
    authors = sorted({e["author"] for e in entries})
    meta = {"slug": slug, "status": status, "created": "2026-05-10T08:00:00Z", "last_updated": "2026-05-12T08:00:00Z",
            "participants": authors, "topics": ["canon"], "rolespace": {"target": {"N": 1.0, "C": 1.0, "R": 1.0}},
            "crystallization": {"signed_by": None, "signature": None, "canon_pages": []}} | meta_fields
    (folder / "meta.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    previous = None
    for n, fields in enumerate(entries, start=1):
        name = f"{n:03d}-{fields['author'].lower().replace(' ', '-')}.md"
        front = {"n": n, "type": fields.get("type", "contribution"), "author": fields["author"],
                 "ts": f"2026-05-1{n % 10}T09:00:00Z", "declared_axis": "R"}
        if previous is not None and "v" in fields:
            front["last_eval"] = {"ref": fields.get("ref", previous), "v": fields["v"]}
        front |= {key: value for key, value in fields.items() if key not in ("author", "type", "v", "ref")}
        (folder / "entries" / name).write_text(f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n\nEntry {n}.\n")
        previous = name
    return folder


PAGE = "# Canon rules\n\n## Soft canonical\nA page two thirds accept waits 14 days.\n"


def page(root: Path, path: str, consensus: dict[str, str], rev: str = "v2", lifecycle: str = "working",
         content: str = PAGE) -> Path:
    """A canon page as the wiki's agents write it: its consensus block as front matter (each
    agent's entry as written, ``"accepted | 2026-05-16 | rev: v2"``), then its content."""
    file = root / "wiki" / path
    file.parent.mkdir(parents=True, exist_ok=True)
    block = "".join(f"  {agent}: \"{entry}\"\n" for agent, entry in consensus.items())
    file.write_text(f"---\nrev: {rev}\nlifecycle: {lifecycle}\nconsensus:\n{block}---\n\n{content}")
    return file


def scratchpad(root: Path, proposal_id: str, acks: list[Any], nacks: list[Any], status: str = "open",
               threshold: Any = 2, **more: Any) -> Path:
    """A quorum scratchpad as grove's proposer keeps it in SOIL, ``fleet/quorum/<proposal_id>``:
    the proposal, the votes as the proposer tallied them, and (``result=...``) its result."""
    file = root / "fleet" / "quorum" / proposal_id
    file.parent.mkdir(parents=True, exist_ok=True)
    document = {"proposal": "Adopt the ledger for fleet decisions", "proposer": "heimdallr", "threshold": threshold,
                "acks": acks, "nacks": nacks, "status": status, "opened_at": "2026-05-01T09:00:00Z"} | more
    file.write_text(json.dumps(document, indent=2) + "\n")
    return file


def fleet_ratify(root: Path, topic: str, roster: list[str], votes: dict[str, str | None], status: str = "open",
                 log: tuple[str, ...] = ()) -> Path:
    """A topic as fleet-ratify's ``init`` and ``vote`` write it, under ``.fleet-ratify/``, by
    formatting strings: each of ``votes`` a SIGN (None) or a DISSENT with that reason, written
    in as given, unquoted; ``log`` the lines after the opening and the votes."""
    folder = root / ".fleet-ratify" / topic
    folder.mkdir(parents=True)
    (folder / "artifact.md").write_text(ARTIFACT)
    (folder / "manifest.yaml").write_text(
        f"topic: {topic}\ninitiator: {roster[0]}\nartifact_sha256: {SHA}\nartifact_origin: /vault/docs/{topic}.md\n"
        f"roster:\n{''.join(f'  - {agent}' + chr(10) for agent in roster)}expires_at: 2099-01-01T00:00:00Z\n"
        f"mode: standard\nstatus: {status}\n")
    lines = [f"[2026-05-15T09:00:00Z] {roster[0]} | OPENED: artifact={topic}.md sha256={SHA[:8]}"]
    for agent, reason in votes.items():
        decision = "SIGN" if reason is None else "DISSENT"
        vote = f"agent: {agent}\nartifact_sha256: {SHA}\ndecision: {decision}\ntimestamp: 2026-05-15T10:00:00Z\n"
        if reason is not None:
            vote += ('dissent:\n  - atom:\n      section: "general"\n      anchor: "entire document"\n'
                     f"    objection: {reason}\n    proposed_resolution: carve-caveat\n")
        (folder / f"{agent}.vote.yaml").write_text(vote)
        lines.append(f"[2026-05-15T10:00:00Z] {agent} | VOTE: {decision}")
    (folder / "log.md").write_text("".join(line + "\n" for line in [*lines, *log]))
    return folder
