"""An original ratification folder, ``.athenaeum/<topic>/`` (``../shared/FORMATS.md``), read:
what it becomes (an ``ImportRatification``), every rule of PROTOCOLS.md its history breaks,
by file and line, and the files no ratification has. Nothing is guessed: a folder without
the manifest's essentials is reported, not imported."""

from __future__ import annotations

import hashlib
import re
from enum import Enum
from pathlib import Path
from typing import Any

import msgspec

from athenaeum.aggregates.ratification import NotPendingHuman, NotRostered, ShaMismatch
from athenaeum.aggregates.ratification_import import ARTIFACT_FILE
from athenaeum.aggregates.rules import SLUG, ActorMismatch, Invalid, VotingClosed
from athenaeum.events.constraints import AGENT_SLUG
from athenaeum.events.imported import SourceFile
from athenaeum.events.ratification import (
    Decision, DissentItem, HumanChoice, ImportedStatus, ImportedVote, Mode,
)
from athenaeum.events.ratification_commands import ImportRatification
from athenaeum.services.commands.handler import fingerprint
from athenaeum.services.importing.findings import Findings, Reading
from athenaeum.services.importing.folder_files import contents, listing
from athenaeum.services.importing.times import NO_TIME, moment
from athenaeum.services.importing.yaml_lines import Located, Unparsable, located

MANIFEST, DECISION_FILE, LOG = "manifest.yaml", "human-decision.yaml", "log.md"
KNOWN = {MANIFEST, ARTIFACT_FILE, DECISION_FILE, LOG, "decomposition.md", "ratified.md"}
VOTE = re.compile(rf"^({AGENT_SLUG[1:-1]})\.vote\.yaml$")
LOG_EVENTS = ("OPENED", "NOTIFY", "VOTE", "TALLY", "DECOMPOSED", "PENDING-HUMAN", "CONVERGE", "RATIFIED", "REJECTED",
              "TIMEOUT")
LOG_LINE = re.compile(rf"^\[([^\]]+)\] (\S+) \| ({'|'.join(LOG_EVENTS)}): ?(.*)$")
ABSTAINED = "ABSTAIN_BY_TIMEOUT"  # a vote file the tally writes: no vote was cast
_dissent = msgspec.convert


def read(folder: Path, source: str) -> Reading:
    findings = Findings()
    names, unknown = listing(folder)  # a folder in it is no file of a ratification's
    files = contents(folder, names)
    unknown += [name for name in files if name not in KNOWN and not VOTE.match(name)]
    topic = folder.name
    texts = findings.texts(files)
    if MANIFEST not in texts or ARTIFACT_FILE not in texts:
        missing = [name for name in (MANIFEST, ARTIFACT_FILE) if name not in files]
        for name in missing:
            findings.add(Invalid.code, name, None, f"{name} is missing: a ratification needs it; nothing is imported")
        return Reading(topic, None, findings, unknown)
    artifact = texts[ARTIFACT_FILE]
    sha = hashlib.sha256(artifact.encode()).hexdigest()
    manifest = _yaml(texts[MANIFEST], MANIFEST, findings)
    fields = _manifest(manifest, topic, sha, findings) if manifest is not None else None
    votes = _votes(texts, fields, sha, findings) if fields is not None else []
    if fields is not None:
        _status_rules(fields, votes, texts, findings)
    if LOG in texts:
        _log(texts[LOG], findings)
    if fields is None or not artifact.strip():
        if not artifact.strip():
            findings.add(Invalid.code, ARTIFACT_FILE, None, "the artifact is empty; nothing is imported")
        return Reading(topic, None, findings, unknown)
    others = [SourceFile(name=name, content=content) for name, content in files.items()
              if name != ARTIFACT_FILE and name not in unknown and content is not None]
    command = ImportRatification(topic=fields["topic"], source=source, artifact=artifact, files=others,
                                 findings=list(findings), votes=votes,
                                 **{k: v for k, v in fields.items() if k != "topic"})
    # The same record read again is the same command, by its id: sent again, it adds nothing.
    # Named by the topic it is imported as (which a finding says is not its folder's name, if so).
    return Reading(command.topic, msgspec.structs.replace(command, command_id=f"import:{fingerprint(command)}"), findings,
                   unknown)


def _yaml(text: str, name: str, findings: Findings) -> Located | None:
    try:
        found = located(text)
    except Unparsable as error:
        findings.add(Invalid.code, name, error.line, str(error))
        return None
    if not isinstance(found.value, dict):
        findings.add(Invalid.code, name, 1, "not a YAML mapping")
        return None
    return found


def _manifest(manifest: Located, folder: str, sha: str, findings: Findings) -> dict[str, Any] | None:
    """The manifest's fields for the command; None when an essential one is unusable (each
    such is a finding, and the folder is not imported)."""
    value, line = manifest.value, manifest.line
    usable = True

    def bad(field: str, message: str, essential: bool = True) -> None:
        nonlocal usable
        findings.add(Invalid.code, MANIFEST, line(field), message + ("; nothing is imported" if essential else ""))
        usable = usable and not essential

    topic = value.get("topic")
    if not isinstance(topic, str) or not SLUG.fullmatch(topic):
        bad("topic", f"topic {topic!r} is not a kebab slug")
    elif topic != folder:
        findings.add(Invalid.code, MANIFEST, line("topic"), f"topic {topic!r} is not the folder's name {folder!r}")
    initiator = value.get("initiator")
    if not isinstance(initiator, str) or not initiator.strip():
        bad("initiator", "initiator is missing")
    elif not SLUG.fullmatch(initiator):
        bad("initiator", f"initiator {initiator!r} is not a kebab slug", essential=False)
    declared = value.get("artifact_sha256")
    if not isinstance(declared, str) or declared.lower() != sha:
        findings.add(ShaMismatch.code, MANIFEST, line("artifact_sha256"),
                     f"artifact_sha256 {declared!r} is not the SHA-256 of artifact.md ({sha})")
    roster = value.get("roster")
    if not isinstance(roster, list) or not roster:
        bad("roster", "roster must list at least one agent")
    elif not all(isinstance(a, str) and SLUG.fullmatch(a) for a in roster) or len(set(roster)) != len(roster):
        bad("roster", "roster must list distinct agent slugs")
    expires_at = moment(value.get("expires_at"))
    if expires_at is None:
        bad("expires_at", f"expires_at {value.get('expires_at')!r} {NO_TIME}")
    mode, status = value.get("mode", Mode.STANDARD.value), value.get("status")
    if not _one_of(mode, Mode):
        bad("mode", f"mode {mode!r} is not standard or fast")
    if not _one_of(status, ImportedStatus):
        bad("status", f"status {status!r} is not one of {', '.join(s.value for s in ImportedStatus)}")
    supersedes = value.get("supersedes")
    if supersedes is not None and not (isinstance(supersedes, str) and SLUG.fullmatch(supersedes)):
        bad("supersedes", f"supersedes {supersedes!r} is not a topic")
    origin = value.get("artifact_origin") or "inline"
    if not usable:
        return None
    return {"topic": topic, "initiator": initiator, "roster": roster, "expires_at": expires_at, "mode": Mode(mode),
            "status": ImportedStatus(status), "supersedes": supersedes, "artifact_origin": str(origin)}


def _votes(texts: dict[str, str], fields: dict[str, Any], sha: str, findings: Findings) -> list[ImportedVote]:
    votes = []
    for name, text in texts.items():
        if (named := VOTE.match(name)) is None:
            continue
        found = _yaml(text, name, findings)
        if found is not None and (vote := _vote(found, name, named.group(1), fields, sha, findings)) is not None:
            votes.append(vote)
    return votes


def _vote(found: Located, name: str, named: str, fields: dict[str, Any], sha: str,
          findings: Findings) -> ImportedVote | None:
    value, line = found.value, found.line
    decision = value.get("decision")
    if decision == ABSTAINED:
        if fields["status"] is ImportedStatus.OPEN:
            findings.add(Invalid.code, name, line("decision"), "an abstention recorded while the vote is open")
        return None
    agent = value.get("agent")
    if agent != named:
        findings.add(ActorMismatch.code, name, line("agent"), f"agent {agent!r} votes in {named}'s file")
    if not isinstance(agent, str) or not agent:
        return None
    if agent not in fields["roster"]:
        findings.add(NotRostered.code, name, line("agent"), f"{agent!r} is not on the roster")
    attested = value.get("artifact_sha256")
    if not isinstance(attested, str) or attested.lower() != sha:
        findings.add(ShaMismatch.code, name, line("artifact_sha256"),
                     f"attested artifact_sha256 {attested!r} is not the frozen {sha}: the vote is void")
    cast_at = moment(value.get("timestamp"))
    if cast_at is None:
        findings.add(Invalid.code, name, line("timestamp"), f"timestamp {value.get('timestamp')!r} {NO_TIME}; the vote "
                                                             "is not counted")
        return None
    if cast_at >= fields["expires_at"]:
        findings.add(VotingClosed.code, name, line("timestamp"), f"cast at {cast_at.isoformat()}, after expires_at")
    if not _one_of(decision, Decision):
        findings.add(Invalid.code, name, line("decision"), f"decision {decision!r} is not SIGN or DISSENT; "
                                                           "the vote is not counted")
        return None
    dissent = _dissent_items(value.get("dissent") or [], found, name, findings)
    if dissent is None:
        return None
    if decision == Decision.SIGN.value and dissent:
        findings.add(Invalid.code, name, line("dissent"), "a SIGN carries no dissent")
    if decision == Decision.DISSENT.value and not dissent:
        findings.add(Invalid.code, name, line("decision"), "a DISSENT needs at least one dissent item")
    return ImportedVote(agent=agent, decision=Decision(decision), artifact_sha256=str(attested), cast_at=cast_at,
                        dissent=tuple(dissent))


def _dissent_items(items: Any, found: Located, name: str, findings: Findings) -> list[DissentItem] | None:
    if not isinstance(items, list):
        findings.add(Invalid.code, name, found.line("dissent"), "dissent is not a list; the vote is not counted")
        return None
    parsed = []
    for index, item in enumerate(items):
        try:
            parsed.append(_dissent(item, DissentItem))
        except msgspec.ValidationError as error:
            findings.add(Invalid.code, name, found.line("dissent", index), f"dissent item: {error}; the vote is "
                                                                          "not counted")
            return None
    return parsed


def _status_rules(fields: dict[str, Any], votes: list[ImportedVote], texts: dict[str, str], findings: Findings) -> None:
    """What the manifest's status says against the votes and the human's decision."""
    status, roster = fields["status"], fields["roster"]
    signed = {v.agent for v in votes if v.decision is Decision.SIGN and v.agent in roster}
    decision = None
    if DECISION_FILE in texts and (found := _yaml(texts[DECISION_FILE], DECISION_FILE, findings)) is not None:
        decision = found.value.get("decision")
        if decision is not None and not _one_of(decision, HumanChoice):
            findings.add(Invalid.code, DECISION_FILE, found.line("decision"), f"decision {decision!r} is none of "
                                                                               "the four grain-gate choices")
        elif decision is not None and (status is ImportedStatus.OPEN or fields["mode"] is Mode.FAST):
            findings.add(NotPendingHuman.code, DECISION_FILE, found.line("decision"),
                         "a human decision on a ratification that was never pending-human")
    converged = decision in (HumanChoice.ACCEPT_SPLIT.value, HumanChoice.REWRITE_WITH_CAVEATS.value)
    if status is ImportedStatus.RATIFIED and signed != set(roster) and not converged:
        findings.add(Invalid.code, MANIFEST, None, "status ratified without every rostered agent's SIGN or a human "
                                                  "decision that converges")
    if status is ImportedStatus.PENDING_HUMAN and fields["mode"] is Mode.FAST:
        findings.add(Invalid.code, MANIFEST, None, "status pending-human in fast mode, which never decomposes")


def _log(text: str, findings: Findings) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = LOG_LINE.match(line)
        if match is None:
            findings.add(Invalid.code, LOG, number, f"not a log line '[<ISO8601 UTC>] <agent> | <EVENT>: <detail>': "
                                                    f"{line[:80]!r}")
        elif moment(match.group(1)) is None:
            findings.add(Invalid.code, LOG, number, f"{match.group(1)!r} {NO_TIME}")


def _one_of(value: Any, choices: type[Enum]) -> bool:
    """Whether ``value`` names one of ``choices`` (a list or a map where one is written names none)."""
    return isinstance(value, str) and value in {choice.value for choice in choices}
