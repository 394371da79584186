"""An original canon page, ``wiki/<page>.md`` with its consensus block as front matter
(``../shared/FORMATS.md``), read: what it becomes (an ``ImportPage``) and every rule of
PROTOCOLS.md section 4 its block breaks, by line. A Markdown file whose front matter has no
``rev``, ``lifecycle`` or ``consensus`` is no canon page (None: the import lists it as unknown).
One with a lifecycle but neither ``rev`` nor ``consensus`` is a page no consensus was begun on
(the original's descriptive pages and drafts, which its protocol leaves out of consensus and
its checker only warns of): it is imported at its first revision, descriptive, with no standings."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from athenaeum.aggregates.page_canon import ConsensusIncomplete, ConsensusPending, StaleRevision
from athenaeum.aggregates.page_consensus import AGREEING
from athenaeum.aggregates.rules import SLUG, Invalid, require_page_path
from athenaeum.events.imported import SourceFile
from athenaeum.events.page import ImportedStanding, Lifecycle, Scope
from athenaeum.events.page_commands import ImportPage
from athenaeum.services.commands.handler import fingerprint
from athenaeum.services.importing import folder_files
from athenaeum.services.importing.findings import Findings, Reading
from athenaeum.services.importing.front_matter import split
from athenaeum.services.importing.yaml_lines import Located, Unparsable
from athenaeum.services.queries.pages import DIALOGUE

BLOCK = ("rev", "lifecycle", "consensus")  # what makes a page's front matter a consensus block
DERIVED = ("pending", "dormant")  # follow from the fleet's activity: listed, never recorded
RECORDED = ("reviewed", "accepted", "contributed", "disputed", "stale")
REV = re.compile(r"^v?([0-9]+)$")
DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
# A status may carry a note in parentheses (``contributed (added section 4)``); the note
# ``user decision: dialogue/canon-rules#2026-05-18`` is a human's word on a dispute.
STATUS = re.compile(r"^([a-z-]+)(?:\s*\((.+)\))?$")
USER_DECISION = re.compile(r"^user decision:\s*(.+)$")


class Entry(NamedTuple):
    """One line of the consensus block as read: the agent's status at a rev, on its line."""

    agent: str
    status: str
    rev: int | None  # None only for a dormant agent, whose rev says nothing
    line: int | None
    standing: ImportedStanding | None  # what is recorded of it; None for a derived status


def read(path: Path, page: str, source: str) -> Reading | None:
    """The page file at ``path``, whose id (its path inside ``wiki/``) is ``page``, found in the
    wiki folder ``source``; None when it is no canon page."""
    findings = Findings()
    content = folder_files.read(path)
    text = findings.texts({page: content}).get(page)
    if text is None:
        return Reading(page, None, findings, [])
    try:
        document = split(text)
    except Unparsable as error:
        findings.add(Invalid.code, page, (error.line or 0) + 1, f"front matter: {error}; nothing is imported")
        return Reading(page, None, findings, [])
    if document is None or not isinstance(document.front.value, dict) or not set(BLOCK) & set(document.front.value):
        return None
    front = document.front
    try:
        require_page_path(page, "page")
    except Invalid as error:
        findings.add(Invalid.code, page, None, f"{error}; nothing is imported")
    unbegun = "rev" not in front.value and "consensus" not in front.value  # no consensus begun on it
    rev = 1 if unbegun else _rev(front.value.get("rev"))
    if rev is None:
        findings.add(Invalid.code, page, front.line("rev"), f"rev {front.value.get('rev')!r} is not v1, v2, ...; "
                                                            "nothing is imported")
    lifecycle = _lifecycle(front, page, findings)
    if not document.body.strip():
        findings.add(Invalid.code, page, None, "the page has no content; nothing is imported")
    if rev is None or lifecycle is None or findings:
        return Reading(page, None, findings, [])
    entries = [] if unbegun else _entries(front, page, rev, findings)
    _lifecycle_rules(front, page, rev, lifecycle, entries, findings)
    standings = [entry.standing for entry in entries if entry.standing is not None]
    command = ImportPage(page=page, source=source, content=document.body, rev=rev, lifecycle=lifecycle,
                         scope=Scope.DESCRIPTIVE if unbegun else Scope.STRUCTURAL,
                         author=_author(standings, rev), standings=standings,
                         files=[SourceFile(name=page, content=content)], findings=list(findings))
    # The same file read again is the same command, by its id: sent again, it adds nothing.
    return Reading(page, msgspec.structs.replace(command, command_id=f"import:{fingerprint(command)}"), findings, [])


def _rev(value: Any) -> int | None:
    match = REV.match(str(value).strip()) if isinstance(value, str | int) and not isinstance(value, bool) else None
    return int(match.group(1)) if match and int(match.group(1)) >= 1 else None


def _lifecycle(front: Located, page: str, findings: Findings) -> Lifecycle | None:
    value = front.value.get("lifecycle")
    try:
        return Lifecycle(value)
    except ValueError:
        findings.add(Invalid.code, page, front.line("lifecycle"),
                     f"lifecycle {value!r} is none of {', '.join(v.value for v in Lifecycle)}; nothing is imported")
        return None


def _entries(front: Located, page: str, rev: int, findings: Findings) -> list[Entry]:
    """Every entry of the consensus block that says who stands where; each that does not is
    a finding, and is left out."""
    block = front.value.get("consensus")
    if not isinstance(block, dict):
        findings.add(Invalid.code, page, front.line("consensus"), "no consensus block (agent: \"status | ... | rev: "
                                                                  "vN\"); no agent's standing is imported")
        return []
    entries = []
    for agent, value in block.items():
        line = front.line("consensus", str(agent))
        if not isinstance(agent, str) or not SLUG.fullmatch(agent):
            findings.add(Invalid.code, page, line, f"consensus entry {agent!r} names no agent (a kebab slug)")
            continue
        try:
            entry = _entry(agent, value, line)
        except ValueError as error:
            findings.add(Invalid.code, page, line, f"{agent}: {error}; left out")
            continue
        if entry.rev is not None and entry.rev > rev:
            findings.add(Invalid.code, page, line, f"{agent} stands on v{entry.rev}, a rev the page (v{rev}) never had; "
                                                   "left out")
            continue
        if entry.rev is not None and entry.rev < rev and entry.status in ("reviewed", *AGREEING):
            findings.add(StaleRevision.code, page, line, f"{agent} is {entry.status} at v{entry.rev}, not the page's "
                                                         f"v{rev}: it counts as stale")
        entries.append(entry)
    return entries


def _entry(agent: str, value: Any, line: int | None) -> Entry:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not \"status | ... | rev: vN\"")
    head, *parts = [part.strip() for part in value.split("|")]
    status_match = STATUS.match(head)
    status, note = status_match.groups() if status_match else (head, None)
    decision = USER_DECISION.match(note) if note else None
    reference = decision.group(1) if decision else None
    if status not in (*DERIVED, *RECORDED):
        raise ValueError(f"status {status!r} is none of {', '.join((*DERIVED, *RECORDED))}")
    found: dict[str, Any] = {}
    for part in parts:
        key, _, rest = part.partition(":")
        if DAY.match(part):
            found["since"] = datetime.fromisoformat(part).replace(tzinfo=timezone.utc)
        elif key in ("rev", "section", "thread") and rest.strip():
            found[key] = rest.strip()
        else:
            raise ValueError(f"{part!r} is no part of an entry (a day, section:, thread:, rev: vN)")
    rev = _rev(found.get("rev"))
    if status == "dormant":  # an inactive agent blocks nothing, at whatever rev
        return Entry(agent, status, rev, line, None)
    if rev is None:
        raise ValueError("no rev: vN")
    if status == "pending":
        return Entry(agent, status, rev, line, None)
    if "since" not in found:
        raise ValueError(f"{status} needs its day (YYYY-MM-DD)")
    if status == "disputed" and "section" not in found:
        raise ValueError("a dispute names the section it contests (section: ...)")
    thread = found.get("thread") or (reference.partition("#")[0] if reference else None)
    standing = ImportedStanding(agent=agent, status=status, rev=rev, since=found["since"], disputed=found.get("section"),
                                thread=thread.removeprefix(f"{DIALOGUE}/") if thread else None, decision=reference,
                                note=None if decision else note)
    return Entry(agent, status, rev, line, standing)


def _lifecycle_rules(front: Located, page: str, rev: int, lifecycle: Lifecycle, entries: list[Entry],
                     findings: Findings) -> None:
    """What the lifecycle claims against the block: ``accepted`` with an agent pending (the
    original audit's C4), canon without the consensus its approval needs."""
    current = [e for e in entries if e.status != "dormant"]  # a dormant agent blocks nothing
    if lifecycle is Lifecycle.ACCEPTED:
        for e in current:
            if e.status == "pending" and e.rev == rev:
                findings.add(ConsensusPending.code, page, e.line, f"lifecycle accepted while {e.agent} is pending on v{rev}")
    agreeing = [e for e in current if e.status in AGREEING and e.rev == rev]
    if lifecycle is Lifecycle.CANONICAL:
        for e in current:
            if e not in agreeing:
                findings.add(ConsensusIncomplete.code, page, e.line,
                             f"canonical while {e.agent} is {e.status} at v{e.rev} (canon needs every agent accepted "
                             f"or contributed at v{rev})")
    if lifecycle is Lifecycle.SOFT_CANONICAL:
        for e in current:
            if e.status == "disputed":
                findings.add(ConsensusIncomplete.code, page, e.line, f"soft-canonical while {e.agent} disputes it")
        if 3 * len(agreeing) < 2 * len(current):
            findings.add(ConsensusIncomplete.code, page, front.line("lifecycle"),
                         f"soft-canonical with {len(agreeing)} of {len(current)} agents accepting at v{rev}, fewer "
                         "than two thirds")


def _author(standings: list[ImportedStanding], rev: int) -> str | None:
    """Who made the page's rev, as the block tells: the earliest to contribute to it."""
    contributed = sorted((s.since, s.agent) for s in standings if s.status == "contributed" and s.rev == rev)
    return contributed[0][1] if contributed else None
