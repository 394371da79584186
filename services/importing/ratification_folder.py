"""An original ratification folder, dancer's ``.athenaeum/<topic>/`` or fleet-ratify's
``.fleet-ratify/<topic>/`` (``../shared/FORMATS.md``), read: what it becomes (an
``ImportRatification``), every rule of PROTOCOLS.md its history breaks, by file and line, and
the files no ratification has. Nothing is guessed: a folder without the manifest's essentials
is reported, not imported; one holding no file of a ratification's at all is none (dancer's
design and reconcile scaffolds lie beside its ratifications)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import msgspec

from athenaeum.aggregates.ratification import NotPendingHuman, ShaMismatch
from athenaeum.aggregates.ratification_import import ARTIFACT_FILE
from athenaeum.aggregates.rules import SLUG, Invalid
from athenaeum.events.imported import SourceFile
from athenaeum.events.ratification import Decision, HumanChoice, ImportedStatus, ImportedVote, Mode
from athenaeum.events.ratification_commands import ImportRatification
from athenaeum.services.commands.handler import fingerprint
from athenaeum.services.importing import ratification_log, ratification_votes
from athenaeum.services.importing.findings import Findings, Reading
from athenaeum.services.importing.folder_files import contents, files_under, kinds
from athenaeum.services.importing.original_yaml import SHA_PLACEHOLDER, UNFILLED_SHA, TextFields, mapping, one_of
from athenaeum.services.importing.ratification_log import LOG, Tallied
from athenaeum.services.importing.ratification_votes import VOTE
from athenaeum.services.importing.times import NO_TIME, moment
from athenaeum.services.importing.yaml_lines import Located

MANIFEST, DECISION_FILE = "manifest.yaml", "human-decision.yaml"
# dancer's merge writer draws the ratified artifact too (its REFERENCE.md, JAC-33).
KNOWN = {MANIFEST, ARTIFACT_FILE, DECISION_FILE, LOG, "decomposition.md", "ratified.md", "ratified-artifact.svg",
         "ratified-artifact.excalidraw"}
MANIFEST_TEXTS: TextFields = frozenset({("topic",), ("initiator",), ("artifact_sha256",), ("roster",)})
A2A_TASK = "task.json"  # dancer's ``init --transport a2a`` saves it in ``athenaeum-ratify-<topic>-<8 hex>/``


def read(folder: Path, source: str) -> Reading | None:
    """None when ``folder`` holds no manifest, artifact or vote: no ratification."""
    folders, names, others = kinds(folder)
    if not any(name in (MANIFEST, ARTIFACT_FILE) or VOTE.match(name) for name in names):
        return None
    topic = folder.name
    known = [name for name in names if name in KNOWN or VOTE.match(name)]
    tasks, unknown = _a2a_tasks(folder, topic, folders)
    unknown += others + [name for name in names if name not in known]
    findings = Findings()
    files = contents(folder, known + tasks)
    texts = findings.texts(files)
    if MANIFEST not in texts or ARTIFACT_FILE not in texts:
        missing = [name for name in (MANIFEST, ARTIFACT_FILE) if name not in files]
        for name in missing:
            findings.add(Invalid.code, name, None, f"{name} is missing: a ratification needs it; nothing is imported")
        return Reading(topic, None, findings, unknown)
    artifact = texts[ARTIFACT_FILE]
    sha = hashlib.sha256(artifact.encode()).hexdigest()
    manifest = mapping(texts[MANIFEST], MANIFEST, findings, MANIFEST_TEXTS, UNFILLED_SHA)
    fields = _manifest(manifest, topic, sha, findings) if manifest is not None else None
    votes = ratification_votes.read(texts, fields, sha, findings) if fields is not None else []
    tallied = ratification_log.read(texts[LOG], findings) if LOG in texts else None
    if fields is not None:
        _status_rules(fields, votes, texts, tallied, findings)
    if fields is None or not artifact.strip():
        if not artifact.strip():
            findings.add(Invalid.code, ARTIFACT_FILE, None, "the artifact is empty; nothing is imported")
        return Reading(topic, None, findings, unknown)
    others = [SourceFile(name=name, content=content) for name, content in files.items()
              if name != ARTIFACT_FILE and content is not None]
    command = ImportRatification(topic=fields["topic"], source=source, artifact=artifact, files=others,
                                 findings=list(findings), votes=votes,
                                 **{k: v for k, v in fields.items() if k != "topic"})
    # The same record read again is the same command, by its id: sent again, it adds nothing.
    # Named by the topic it is imported as (which a finding says is not its folder's name, if so).
    return Reading(command.topic, msgspec.structs.replace(command, command_id=f"import:{fingerprint(command)}"), findings,
                   unknown)


def _a2a_tasks(folder: Path, topic: str, folders: list[str]) -> tuple[list[str], list[str]]:
    """The A2A task files in ``folder`` by their paths in it; and, unknown, its other folders
    and whatever else the tasks' folders hold."""
    task_folder = re.compile(rf"athenaeum-ratify-{re.escape(topic)}-[0-9a-f]{{8}}")
    tasks: list[str] = []
    unknown: list[str] = []
    for name in folders:
        if not task_folder.fullmatch(name):
            unknown.append(name)
            continue
        files, others = files_under(folder / name)
        tasks += [f"{name}/{file}" for file in files if file == A2A_TASK]
        unknown += [f"{name}/{entry}" for entry in files + others if entry != A2A_TASK]
    return tasks, unknown


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
    if declared == SHA_PLACEHOLDER:
        findings.add(ShaMismatch.code, MANIFEST, line("artifact_sha256"),
                     f"artifact_sha256 is still dancer's placeholder {declared!r}: the SHA-256 of artifact.md ({sha}) "
                     "was never computed")
    elif not isinstance(declared, str) or declared.lower() != sha:
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
    if not one_of(mode, Mode):
        bad("mode", f"mode {mode!r} is not standard or fast")
    if not one_of(status, ImportedStatus):
        bad("status", f"status {status!r} is not one of {', '.join(s.value for s in ImportedStatus)}")
    supersedes = value.get("supersedes")
    if supersedes is not None and not (isinstance(supersedes, str) and SLUG.fullmatch(supersedes)):
        bad("supersedes", f"supersedes {supersedes!r} is not a topic")
    origin = value.get("artifact_origin") or "inline"
    if not usable:
        return None
    return {"topic": topic, "initiator": initiator, "roster": roster, "expires_at": expires_at, "mode": Mode(mode),
            "status": ImportedStatus(status), "supersedes": supersedes, "artifact_origin": str(origin)}


def _status_rules(fields: dict[str, Any], votes: list[ImportedVote], texts: dict[str, str], tallied: Tallied | None,
                  findings: Findings) -> None:
    """What the manifest's status says against the votes, the tally's time and the human's decision."""
    status, roster = fields["status"], fields["roster"]
    signed = {v.agent for v in votes if v.decision is Decision.SIGN and v.agent in roster}
    decision = None
    if DECISION_FILE in texts and (found := mapping(texts[DECISION_FILE], DECISION_FILE, findings)) is not None:
        decision = found.value.get("decision")
        if decision is not None and not one_of(decision, HumanChoice):
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
    if status is not ImportedStatus.OPEN and tallied is not None and tallied.at < fields["expires_at"]:
        _early_tally(roster, votes, tallied, findings)


def _early_tally(roster: list[str], votes: list[ImportedVote], tallied: Tallied, findings: Findings) -> None:
    """Before expires_at, the tally comes with the last rostered agent's vote, not before."""
    cast = {vote.agent: vote.cast_at for vote in votes if vote.agent in roster}
    awaited = [agent for agent in roster if agent not in cast or cast[agent] > tallied.at]
    if awaited:
        findings.add(Invalid.code, LOG, tallied.line, f"tallied at {tallied.at.isoformat()}, before expires_at and "
                                                      f"before the votes of {', '.join(awaited)}")
