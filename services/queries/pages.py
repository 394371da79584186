"""``page show``: a page and where every registered agent stands on it, computed from the
page's own history with the clock and the fleet's activity (never stored: it changes with
time). Also the consensus block of the page's front matter, as the original tools write it."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import msgspec

from athenaeum.aggregates.page_consensus import Consensus, Standing, consensus
from athenaeum.aggregates.page_state import Endorsement, Page
from athenaeum.services.commands.handler import Activity

DIALOGUE = "dialogue"  # the threads' folder beside the wiki's pages, in references to a thread


def page_document(page: Page, activity: Activity, now: datetime) -> dict[str, Any]:
    report = consensus(page, activity.members, now)
    return {
        "page": page.key,
        "rev": page.rev,
        "lifecycle": page.lifecycle.value,
        "scope": page.scope.value,
        "author": page.author,
        "content_sha256": page.content_sha256,
        "consensus": {s.agent: _standing(s) for s in report.standings},
        "active_agents": report.active_agents,
        "canonical_ready": report.canonical_ready,
        "canonical_reasons": report.canonical_reasons,
        "soft_canonical_ready": report.soft_canonical_ready,
        "soft_canonical_reasons": report.soft_canonical_reasons,
        "as_of_position": activity.position,
    }


def page_file(page: Page, activity: Activity, now: datetime) -> str:
    """The page as the wiki keeps it: its consensus block as front matter, then its content."""
    return f"---\n{consensus_block(page, activity, now)}---\n\n{page.content}"


def consensus_block(page: Page, activity: Activity, now: datetime) -> str:
    """``rev``, ``lifecycle`` and ``consensus`` as in a structural page's front matter."""
    report: Consensus = consensus(page, activity.members, now)
    lines = [f"rev: v{page.rev}", f"lifecycle: {page.lifecycle.value}", "consensus:"]
    # As the original writes a new page's block, the active agents are pending on it; an agent
    # idle for 30 days that never looked at this revision is listed once it is active again.
    listed = [s for s in report.standings if s.active or s.status != "pending"]
    # A JSON string is a valid YAML double-quoted scalar: quotes and newlines stay escaped.
    lines += [f"  {s.agent}: {json.dumps(_entry(s), ensure_ascii=False)}" for s in listed]
    # A dispute blocks canon whoever raised it; one from outside the fleet's agents (a human, a
    # principal not registered) is listed too, or the block would not show what holds it back.
    members = {s.agent for s in report.standings}
    lines += [f"  {agent}: {json.dumps(_entry(_disputing(agent, e)), ensure_ascii=False)}"
              for agent, e in sorted(page.endorsements.items()) if e.status == "disputed" and agent not in members]
    return "\n".join(lines) + "\n"


def _disputing(agent: str, endorsement: Endorsement) -> Standing:
    return Standing(agent, "disputed", endorsement.rev, endorsement.since, active=False,
                    disputed=endorsement.disputed, thread=endorsement.thread)


def _standing(standing: Standing) -> dict[str, Any]:
    document = msgspec.to_builtins(standing)
    del document["agent"]
    return document


def _entry(s: Standing) -> str:
    day = f"{s.since:%Y-%m-%d}"
    rev = f"rev: v{s.rev}"
    # Threads are named by their path under the wiki's agents folder, as the original wrote them.
    thread = f"{DIALOGUE}/{s.thread}"
    if s.status in ("pending", "dormant"):
        return f"{s.status} | {rev}"
    if s.status == "disputed":
        parts = [s.status, f"section: {s.disputed}"] + ([f"thread: {thread}"] if s.thread else [])
        return " | ".join([*parts, day, rev])
    if s.decision is not None:
        return f"{s.status} (user decision: {thread}#{day}) | {day} | {rev}"
    if s.note is not None:
        return f"{s.status} ({s.note}) | {day} | {rev}"
    return f"{s.status} | {day} | {rev}"
