"""The files of a ratification that the original tools count: each agent's ``<agent>.vote.yaml``
and the human's ``human-decision.yaml`` (``../shared/FORMATS.md``), from its events alone.

dancer's and fleet-ratify's ``check`` take a missing vote file for a vote still awaited. Votes
are blind until the tally, so a vote cast before it is written sealed: who voted, when, on which
sha, and nothing of how; the tally reveals it whole, and writes the abstentions it records. A
decomposition leaves the human's file blank, as the original merge writer does, until the human
decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from athenaeum.events import Event
from athenaeum.events.ratification import (
    ArtifactDecomposed,
    AtomSplit,
    HumanChoice,
    HumanDecisionRecorded,
    VoteCast,
    VotesTallied,
)
from athenaeum.projectors.record_text import utc_text
from athenaeum.projectors.yaml_text import dump, scalar

SEALED = "# Sealed: votes are blind until the tally, which reveals how this one was cast.\n"
ABSTAINED = "# Written by the tally: no vote was cast before expires_at.\n"
BLANK_DECISION = (
    "# Written blank when the artifact was decomposed; the human decides (athenaeum ratify decide).\n"
    "topic: {topic}\n"
    f"decision:                        # {' | '.join(choice.value for choice in HumanChoice)}\n"
    "decided_at:\n"
    "notes: []\n"
)


def files(topic: str, events: Sequence[Event]) -> dict[str, str]:
    """Each file's name in the ratification's folder, and its text."""
    tally = next((e for e in events if isinstance(e, VotesTallied)), None)
    written = {f"{vote.agent}.vote.yaml": _vote(vote, revealed=tally is not None)
               for vote in events if isinstance(vote, VoteCast)}
    for agent in tally.abstentions if tally else ():
        written[f"{agent}.vote.yaml"] = ABSTAINED + dump(
            {"agent": agent, "decision": "ABSTAIN_BY_TIMEOUT", "timestamp": utc_text(tally.timestamp)})
    if (decision := _human_decision(topic, events)) is not None:
        written["human-decision.yaml"] = decision
    return written


def _vote(vote: VoteCast, revealed: bool) -> str:
    shown: dict[str, Any] = {"agent": vote.agent, "artifact_sha256": vote.artifact_sha256}
    if not revealed:
        return SEALED + dump(shown | {"timestamp": utc_text(vote.timestamp), "sealed": True})
    shown |= {"decision": vote.decision.value, "timestamp": utc_text(vote.timestamp)}
    if vote.dissent:
        shown["dissent"] = msgspec.to_builtins(vote.dissent)
    return dump(shown)


def _human_decision(topic: str, events: Sequence[Event]) -> str | None:
    """Blank while a decision is awaited (after a decomposition, or once every atom sent back
    is split); the decision itself once recorded; nothing before a decomposition."""
    text: str | None = None
    to_split: set[str] = set()
    for event in events:
        match event:
            case ArtifactDecomposed():
                text = BLANK_DECISION.format(topic=scalar(topic))
            case HumanDecisionRecorded():
                to_split = set(event.atoms)
                text = dump({"topic": topic, "decision": event.decision.value, "decided_at": utc_text(event.timestamp),
                             "notes": msgspec.to_builtins(event.notes)})
            case AtomSplit() if to_split:
                to_split.discard(event.atom)
                if not to_split:
                    text = BLANK_DECISION.format(topic=scalar(topic))
    return text
