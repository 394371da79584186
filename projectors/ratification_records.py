"""A ratification's records in the original tool's layout (``../shared/FORMATS.md``):
``manifest.yaml``, ``decomposition.md``, ``ratified.md`` and ``log.md``, rendered from its
events alone, so the same history always gives the same bytes. Votes stay blind until tallied.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from athenaeum.events import Event
from athenaeum.events.ratification import (
    ArtifactDecomposed,
    ArtifactFrozen,
    ArtifactRatified,
    AtomSplit,
    ContestedAtom,
    HumanChoice,
    HumanDecisionRecorded,
    ImportedStatus,
    RatificationCanceled,
    RatificationImported,
    RatificationRejected,
    VoteCast,
    VotesTallied,
    atoms_of,
)
from athenaeum.projectors.record_text import one_line, utc_text

RECORDS = ("manifest", "decomposition", "ratified", "log")
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@:+-]*$")
GRAIN_GATE = (
    ("accept-split", "ratify what all signed; the contested atoms are carved out"),
    ("decompose-further", "send named atoms back to the merge writer to split finer"),
    ("rewrite-with-caveats", "ratify every atom, each contested one with a verifier or ticket"),
    ("reject", "ratify nothing"),
)


class NotRendered(LookupError):
    """The record does not exist (yet) for this ratification."""


class UnknownRecord(ValueError):
    """No ratification has a record of this name."""


def render(record: str, events: Sequence[Event]) -> str:
    frozen = next(e for e in events if isinstance(e, ArtifactFrozen))
    if record == "manifest":
        return _manifest(frozen, events)
    if record == "log":
        return "".join(log_lines(events))
    if record == "decomposition":
        return _decomposition(frozen, events)
    if record == "ratified":
        return _ratified(frozen, events)
    raise UnknownRecord(f"no record {record!r}; choose from {', '.join(RECORDS)}")


def status_of(events: Sequence[Event]) -> str:
    status = "open"
    for event in events:
        match event:
            case RatificationImported():
                status = event.status.value
            case ArtifactDecomposed():
                status = "pending-human"
            case ArtifactRatified():
                status = "ratified"
            case RatificationRejected() | RatificationCanceled():
                status = "rejected"
    return status


def _yaml(value: str) -> str:
    return value if _PLAIN.match(value) else json.dumps(value, ensure_ascii=False)


def _manifest(frozen: ArtifactFrozen, events: Sequence[Event]) -> str:
    lines = [
        f"topic: {_yaml(frozen.originator_id)}",
        f"initiator: {_yaml(frozen.initiator)}",
        f"artifact_sha256: {frozen.artifact_sha256}",
        f"artifact_origin: {_yaml(frozen.artifact_origin)}",
    ]
    if frozen.supersedes:
        lines.append(f"supersedes: {_yaml(frozen.supersedes)}")
    lines.append("roster:")
    lines += [f"  - {_yaml(agent)}" for agent in frozen.roster]
    lines += [f"expires_at: {utc_text(frozen.expires_at)}", f"mode: {frozen.mode.value}", f"status: {status_of(events)}"]
    return "\n".join(lines) + "\n"


def _tally_line(tally: VotesTallied, roster: int) -> str:
    return (
        f"{len(tally.signs)} SIGN · {len(tally.dissents)} DISSENT · "
        f"{len(tally.abstentions)} ABSTAIN_BY_TIMEOUT (roster of {roster})"
    )


def _atoms(events: Sequence[Event]) -> list[ContestedAtom]:
    atoms: list[ContestedAtom] = []
    for event in events:
        if isinstance(event, RatificationImported) and event.status is ImportedStatus.PENDING_HUMAN:
            atoms = list(atoms_of(event.counted_votes()))  # as the aggregate has them
        elif isinstance(event, ArtifactDecomposed):
            atoms = list(event.atoms)
        elif isinstance(event, AtomSplit):
            atoms = [a for a in atoms if a.id != event.atom] + list(event.into)
    return atoms


def _decomposition(frozen: ArtifactFrozen, events: Sequence[Event]) -> str:
    tally = next((e for e in events if isinstance(e, VotesTallied)), None)
    if tally is None or not any(isinstance(e, ArtifactDecomposed) for e in events):
        raise NotRendered(f"{frozen.originator_id!r} has not been decomposed")
    atoms = _atoms(events)
    # The sections no atom contests are the unanimous atoms (an artifact without headings is
    # one section); the contested atoms are the rest, and N counts both kinds.
    titles = [line.lstrip("#").strip() for line in frozen.artifact.splitlines() if line.startswith("#")]
    contested = {atom.section for atom in atoms}
    unanimous = sum(title not in contested for title in titles) if titles else int(not atoms)
    lines = [
        f"# Decomposition: {frozen.originator_id}",
        "",
        f"**Artifact:** {frozen.originator_id}",
        f"**artifact_sha256:** {frozen.artifact_sha256}",
        f"**Tally:** {_tally_line(tally, len(frozen.roster))}",
        "",
        f"The artifact splits into {unanimous + len(atoms)} atoms — {unanimous} unanimous, {len(atoms)} contested.",
        "",
    ]
    for atom in atoms:
        lines += [
            f'## {atom.id} — §{one_line(atom.section)} "{one_line(atom.anchor)}"',
            "",
            f"- objection: {one_line(atom.objection)}",
            f"- raised_by: {atom.raised_by}",
            f"- proposed_resolution: {atom.proposed_resolution.value}",
            "",
        ]
    lines += ["## Grain gate (the human chooses one)", ""]
    lines += [f"- `{choice}` — {meaning}" for choice, meaning in GRAIN_GATE]
    lines += ["", f"Cost of consensus: {len(atoms)} contested atom(s)"]
    return "\n".join(lines) + "\n"


def _ratified(frozen: ArtifactFrozen, events: Sequence[Event]) -> str:
    ratified = next((e for e in events if isinstance(e, ArtifactRatified)), None)
    if ratified is None:
        raise NotRendered(f"{frozen.originator_id!r} is not ratified")
    atoms = {atom.id: atom for atom in _atoms(events)}
    lines = [
        f"# Ratified: {frozen.originator_id}",
        "",
        f"**artifact_sha256:** {frozen.artifact_sha256}",
        f"**Ratified:** {utc_text(ratified.timestamp)}",
        f"**Mode:** {frozen.mode.value}",
        f"**Grain-gate:** {ratified.path}",
        f"**Supersedes:** {frozen.supersedes or 'none'}",
        "",
        "## Ratified atom-refs",
        "",
    ]
    # The spans every signer signed: all of the artifact but what a dissent contests. Under
    # rewrite-with-caveats the contested atoms are ratified too, each under its caveat below.
    decided = next((e.decision for e in reversed(events) if isinstance(e, HumanDecisionRecorded)), None)
    if not atoms:
        lines.append("- the whole artifact")
    elif decided is HumanChoice.REWRITE_WITH_CAVEATS:
        lines.append(f"- the whole artifact but its contested atoms, ratified under the caveats below: {', '.join(atoms)}")
    else:
        lines.append(f"- the whole artifact but its contested atoms, carved out: {', '.join(atoms)}")
    lines += ["", "## Signatures", "", "| Agent | Timestamp | artifact_sha256 |", "|---|---|---|"]
    lines += [f"| {s.agent} | {utc_text(s.cast_at)} | {s.artifact_sha256} |" for s in ratified.signatures]
    lines += ["", "## Caveats", ""]
    for number, caveat in enumerate(ratified.caveats, start=1):
        atom = atoms.get(caveat.atom)
        check = " — ".join(f"{kind}: {one_line(value)}" for kind, value in
                           (("verifier", caveat.verifier), ("ticket", caveat.ticket)) if value)
        about = (f' §{one_line(atom.section)} "{one_line(atom.anchor)}": {one_line(atom.objection)} '
                 f"(raised_by {atom.raised_by})" if atom else "")
        lines.append(f"- C{number} — {caveat.atom}{about} — {check}")
    if not ratified.caveats:
        lines.append("- none")
    lines += ["", "## Abstentions", ""]
    lines += [f"- {agent} — ABSTAIN_BY_TIMEOUT" for agent in _abstentions(events)] or ["- none"]
    return "\n".join(lines) + "\n"


def _abstentions(events: Sequence[Event]) -> tuple[str, ...]:
    """Who abstained by timeout: as the tally recorded, or as an imported decomposition found."""
    tally = next((e for e in events if isinstance(e, VotesTallied)), None)
    if tally is not None:
        return tally.abstentions
    imported = events[0]
    if isinstance(imported, RatificationImported):
        voted = {vote.agent for vote in imported.counted_votes()}
        return tuple(agent for agent in sorted(imported.roster) if agent not in voted)
    return ()


def log_lines(events: Sequence[Event]) -> list[str]:
    tallied = any(isinstance(e, VotesTallied) for e in events)
    lines = []
    tally: VotesTallied | None = None

    def line(event: Event, who: str, what: str, detail: str) -> None:
        lines.append(f"[{utc_text(event.timestamp)}] {who} | {what}: {detail}\n")

    def writer(event: Event) -> str:
        # What the tally makes follow (a decomposition, an all-SIGN ratification, a fast-mode
        # rejection) is the merge writer's to write, as FORMATS.md has it; the rest is its actor's.
        return (tally.merge_writer or event.actor) if tally is not None and tally.command == event.command else event.actor

    for event in events:
        match event:
            case ArtifactFrozen():
                line(event, event.initiator, "OPENED", f"roster {', '.join(event.roster)}; expires_at {utc_text(event.expires_at)}")
            case VoteCast():
                # Blind until the tally: the log says who voted, never how.
                how = event.decision.value if tallied else "cast"
                extra = f" ({len(event.dissent)} atom(s))" if tallied and event.dissent else ""
                line(event, event.agent, "VOTE", how + extra)
            case VotesTallied():
                if event.abstentions:
                    line(event, event.actor, "TIMEOUT", f"ABSTAIN_BY_TIMEOUT {', '.join(event.abstentions)}")
                roster = len(event.signs) + len(event.dissents) + len(event.abstentions)
                tally = event
                line(event, writer(event), "TALLY", _tally_line(event, roster))
            case ArtifactDecomposed():
                line(event, writer(event), "DECOMPOSED", f"{len(event.atoms)} contested atom(s)")
                line(event, writer(event), "PENDING-HUMAN", "awaiting the human's grain-gate decision")
            case HumanDecisionRecorded():
                line(event, event.decided_by, "CONVERGE", f"human-decision: {event.decision.value}")
            case AtomSplit():
                line(event, event.actor, "DECOMPOSED", f"{event.atom} split into {', '.join(a.id for a in event.into)}")
            case ArtifactRatified():
                line(event, writer(event), "RATIFIED", event.path)
            case RatificationRejected():
                line(event, writer(event), "REJECTED", event.reason)
            case RatificationCanceled():
                line(event, event.by, "REJECTED", f"canceled by {event.by}")
    return lines
