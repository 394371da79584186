"""An original quorum scratchpad, ``fleet/quorum/<proposal_id>`` (``../shared/FORMATS.md``:
``{proposal, proposer, threshold, acks, nacks, status, opened_at}``, and the result once it
resolved), read: what it becomes (an ``ImportProposal``), and every rule of PROTOCOLS.md
section 2 it breaks, by line.

The original keeps no electorate and no deadline. A closed proposal is history: its electorate
is its voters. An open one continues live, so it needs the electorate the importer names
(``--electorate``), and a deadline: the importer's (``--deadline``), else the default window
from its own opening."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from athenaeum.aggregates.quorum import DEFAULT_DEADLINE, PROPOSAL_ID, AlreadyVoted, NotInElectorate
from athenaeum.aggregates.rules import SLUG, Invalid, require_schedulable
from athenaeum.events.imported import SourceFile
from athenaeum.events.quorum import ImportedStatus, Nack
from athenaeum.events.quorum_commands import ImportProposal
from athenaeum.services.commands.handler import fingerprint
from athenaeum.services.importing import folder_files
from athenaeum.services.importing.findings import Findings, Reading
from athenaeum.services.importing.front_matter import BOM
from athenaeum.services.importing.json_lines import located
from athenaeum.services.importing.times import NO_TIME, moment
from athenaeum.services.importing.yaml_lines import Located, Unparsable

FOLDER = ("fleet", "quorum")  # the SOIL namespace, as folders
SUFFIXES = ("", ".json")  # the key itself, or the key saved as a JSON file
THRESHOLD = re.compile(r"^\s*([0-9]+)\s*(?:/\s*([0-9]+)\s*)?$")  # k, or "k/n" as the announcement says it
NACK_TEXT = re.compile(r"^\s*(\S+?)(?:\s*:\s*|\s+|$)(.*)$", re.DOTALL)  # "<agent> <reason>" or "<agent>: <reason>"
AWAITING = "awaiting-coordinator"


class OpenProposals(NamedTuple):
    """What the importer gives the open proposals, which the original does not keep."""

    electorate: list[str] | None  # who may vote on them
    deadline: datetime | None  # when they close; None: the default window from each one's opening


def is_scratchpad(path: Path) -> bool:
    return (path.parent.parent.name, path.parent.name) == FOLDER and path.suffix in SUFFIXES


def read(file: Path, open_ones: OpenProposals) -> Reading:
    findings = Findings()
    name, key, content = file.name, file.stem, folder_files.read(file)
    texts = findings.texts({name: content})
    if name not in texts:
        return Reading(key, None, findings, [])
    try:
        document = located(texts[name].removeprefix(BOM))  # as YAML's and the front matter's readers take it
    except Unparsable as error:
        findings.add(Invalid.code, name, error.line, f"{error}; nothing is imported")
        return Reading(key, None, findings, [])
    if not isinstance(document.value, dict):
        findings.add(Invalid.code, name, 1, "not a JSON object; nothing is imported")
        return Reading(key, None, findings, [])
    fields = _fields(key, name, document, open_ones, findings)
    if fields is None:
        return Reading(key, None, findings, [])
    command = ImportProposal(proposal_id=key, source=str(file.parent), files=[SourceFile(name, content)],
                             findings=list(findings), **fields)
    return Reading(key, msgspec.structs.replace(command, command_id=f"import:{fingerprint(command)}"), findings, [])


def _fields(key: str, name: str, document: Located, open_ones: OpenProposals, findings: Findings
            ) -> dict[str, Any] | None:
    """The command's fields; None (each reason a finding) when it cannot be imported."""
    value, line = document.value, document.line
    refused: list[str] = []

    def refuse(field: str | None, message: str) -> None:
        findings.add(Invalid.code, name, line(field) if field else None, f"{message}; nothing is imported")
        refused.append(message)

    if not PROPOSAL_ID.fullmatch(key):
        refuse(None, f"{key!r} is not a proposal id (8 uppercase hex characters)")
    text, proposer = value.get("proposal"), value.get("proposer")
    if not isinstance(text, str) or not text.strip():
        refuse("proposal", "proposal: the proposal's text is needed")
    if not isinstance(proposer, str) or not SLUG.fullmatch(proposer):
        refuse("proposer", f"proposer {proposer!r} is not an agent's slug")
    threshold = THRESHOLD.match(str(value.get("threshold"))) if isinstance(value.get("threshold"), int | str) else None
    k, of = (int(threshold.group(1)), threshold.group(2)) if threshold else (0, None)
    if k < 1:
        refuse("threshold", f"threshold {value.get('threshold')!r} is not k or k/n, with k from 1")
    opened_at = moment(value.get("opened_at"))
    if opened_at is None:
        refuse("opened_at", f"opened_at {NO_TIME}")
    status = _status(value.get("status"), line("status"), name, findings)
    votes = _votes(value, line, name, findings)
    if refused or status is None or opened_at is None or votes is None:
        return None
    acks, nacks = votes
    if status is ImportedStatus.OPEN:
        electorate = open_ones.electorate
        if electorate is None:
            refuse("status", "open, and the original names no electorate: give --electorate a,b,c to continue it "
                             "live (and --deadline, else it closes a day after its opening)")
            return None
        acks, nacks = _electors(acks, nacks, electorate, name, findings)
        if of is not None and int(of) != len(electorate):
            findings.add(Invalid.code, name, line("threshold"),
                         f"the threshold is of {of}; the electorate given has {len(electorate)}")
        if k > len(electorate):
            refuse("threshold", f"threshold {k} is more than the electorate's {len(electorate)}")
            return None
    else:
        electorate = [*acks, *(nack.agent for nack, _ in nacks)]  # history: who voted
    result = value.get("result")
    _judge(status, k, len(acks), result, line, name, findings)
    result = result if isinstance(result, dict) else {}
    closed_at = moment(result.get("closed_at"))
    try:
        window = opened_at + DEFAULT_DEADLINE  # as a proposal opened here without one
    except OverflowError:  # past the calendar's end: too far, as said below
        window = datetime.max.replace(tzinfo=timezone.utc)
    deadline = (open_ones.deadline or window) if status is ImportedStatus.OPEN else closed_at or window
    try:  # the rules refuse it so; said here, before anything is sent
        require_schedulable(deadline, "deadline")
    except Invalid as refusal:
        refuse("result" if deadline is closed_at else "opened_at" if deadline is window else None, refusal.message)
        return None
    return {"proposer": proposer, "text": text, "electorate": electorate, "threshold": k, "deadline": deadline,
            "opened_at": opened_at, "status": status, "acks": list(acks), "nacks": [nack for nack, _ in nacks],
            "closed_at": closed_at,
            "reason": result.get("reason") if isinstance(result.get("reason"), str) else None,
            "decided_by": result.get("decided_by") if isinstance(result.get("decided_by"), str) else None}


def _status(given: Any, line: int | None, name: str, findings: Findings) -> ImportedStatus | None:
    if given == AWAITING:
        findings.add(Invalid.code, name, line, "a tie awaiting its coordinator, whom the original does not name: "
                                               "nobody could break it; nothing is imported")
        return None
    try:
        return ImportedStatus(given)
    except ValueError:
        findings.add(Invalid.code, name, line, f"status {given!r} is not one of: "
                                               f"{', '.join(s.value for s in ImportedStatus)}; nothing is imported")
        return None


def _votes(value: dict[str, Any], line: Any, name: str, findings: Findings
           ) -> tuple[dict[str, int], list[tuple[Nack, int]]] | None:
    """The votes the rules count, each with its line: one per agent. An agent in both lists is
    counted by its NACK: the originals count every NACK as an ACK (a substring match). None
    when a list is not one."""
    acks: dict[str, int] = {}
    nacks: list[tuple[Nack, int]] = []
    for field in ("acks", "nacks"):
        if not isinstance(value.get(field, []), list):
            findings.add(Invalid.code, name, line(field), f"{field} is not a list; nothing is imported")
            return None
    for index, item in enumerate(value.get("acks", [])):
        agent, at = item.get("agent") if isinstance(item, dict) else item, line("acks", index)
        if not isinstance(agent, str) or not SLUG.fullmatch(agent):
            findings.add(Invalid.code, name, at, f"an ACK by {agent!r}, which is not an agent's slug (not counted)")
        elif agent in acks:
            findings.add(AlreadyVoted.code, name, at, f"{agent} ACKs twice (counted once)")
        else:
            acks[agent] = at
    nacked: set[str] = set()
    for index, item in enumerate(value.get("nacks", [])):
        nack, at = _nack(item), line("nacks", index)
        if nack is None:
            findings.add(Invalid.code, name, at,
                         f"{item!r} is not a NACK: an agent's slug and its reason (not counted)")
            continue
        if nack.agent in nacked:
            findings.add(AlreadyVoted.code, name, at, f"{nack.agent} NACKs twice (the first counts)")
            continue
        if not nack.reason.strip():
            findings.add(Invalid.code, name, at, f"{nack.agent}'s NACK gives no reason (counted)")
        if nack.agent in acks:
            findings.add(AlreadyVoted.code, name, acks.pop(nack.agent),
                         f"{nack.agent} is in both acks and nacks: one vote per agent, and the originals count every "
                         "NACK as an ACK; counted as its NACK")
        nacked.add(nack.agent)
        nacks.append((nack, at))
    return acks, nacks


def _nack(item: Any) -> Nack | None:
    if isinstance(item, dict):
        agent, reason = item.get("agent"), item.get("reason") or ""
    elif isinstance(item, str) and (match := NACK_TEXT.match(item)):
        agent, reason = match.group(1), match.group(2).strip()
    else:
        return None
    return Nack(agent, reason) if isinstance(agent, str) and SLUG.fullmatch(agent) and isinstance(reason, str) else None


def _electors(acks: dict[str, int], nacks: list[tuple[Nack, int]], electorate: list[str], name: str,
              findings: Findings) -> tuple[dict[str, int], list[tuple[Nack, int]]]:
    """The votes of the electorate given; the others are findings, and not counted."""
    for agent, at in [*acks.items(), *((nack.agent, at) for nack, at in nacks)]:
        if agent not in electorate:
            findings.add(NotInElectorate.code, name, at, f"{agent} is not in the electorate given (not counted)")
    return ({agent: at for agent, at in acks.items() if agent in electorate},
            [(nack, at) for nack, at in nacks if nack.agent in electorate])


def _judge(status: ImportedStatus, k: int, acked: int, result: Any, line: Any, name: str, findings: Findings) -> None:
    """Where the scratchpad says it stands, against what its votes make of it (unless its
    result says a coordinator decided: a tiebreak or an override need no threshold)."""
    reached, decided = acked >= k, isinstance(result, dict) and bool(result.get("decided_by"))
    if status is ImportedStatus.ACCEPTED and not reached and not decided:
        findings.add(Invalid.code, name, line("status"), f"accepted with {acked} counted ACKs of the {k} it needs")
    elif status is not ImportedStatus.ACCEPTED and reached and not decided:
        findings.add(Invalid.code, name, line("status"),
                     f"{status.value} with {acked} counted ACKs: it was accepted the moment ACK number {k} came")
    # A resolved one's result may be elsewhere ("Write result to KB when resolved"), and in any
    # shape: only an object's closed_at, reason and decided_by are read.
    if status is ImportedStatus.OPEN and result is not None:
        findings.add(Invalid.code, name, line("result"), "open, yet a result is written")
