"""The original arbitrator's task tables in PostgreSQL (ue-claude-scaffold's ``tasks``,
``review_runs``, ``review_findings``, ``arbitration_runs``), read: each task, with its reviews,
their findings and its rulings, becomes an ``ImportTask``; every rule of PROTOCOLS.md section 5
its history breaks is a finding naming its table and row (a database's "file:line")."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from typing import Any

import msgspec

from athenaeum.aggregates.rules import Invalid
from athenaeum.aggregates.task_checks import ArbitrationExists, FindingMismatch, IllegalTransition
from athenaeum.events.imported import SourceFile
from athenaeum.events.task import (
    DEFAULT_REVIEW_CYCLE_BUDGET, BuildStatus, FailureReason, Finding, ImportedReview, ImportedRuling, Resolution,
    Ruling, Severity, TaskStatus,
    Trigger, Verdict,
)
from athenaeum.events.task_commands import ROLE, ImportTask, ResolutionInput
from athenaeum.services.commands.handler import fingerprint
from athenaeum.services.importing.findings import Findings, Reading
from athenaeum.services.importing.times import NO_TIME, moment

TASKS, RUNS, FINDINGS, RULINGS = "tasks", "review_runs", "review_findings", "arbitration_runs"
_ROLE = re.compile(ROLE)
_encode = msgspec.json.Encoder(order="sorted")


class Unreadable(Exception):
    """The database cannot be reached, or lacks the original's tables."""


def database(url: str) -> str:
    """``postgres://host/db`` of ``url``: where the rows were found, without user or password."""
    from psycopg.conninfo import conninfo_to_dict  # psycopg loads only for the verb that reads a database

    parts = conninfo_to_dict(url)
    port = f":{parts['port']}" if parts.get("port") and str(parts["port"]) != "5432" else ""
    return f"postgres://{parts.get('host') or 'localhost'}{port}/{parts.get('dbname') or ''}"


def read(url: str) -> list[Reading]:
    """Every task of the database at ``url``, in id order, read and judged."""
    import psycopg
    from psycopg.rows import dict_row

    try:
        with psycopg.connect(url, row_factory=dict_row) as connection:
            _times_as_found(connection)
            tasks, runs, findings, rulings = (connection.execute(query).fetchall() for query in (
                # The highest id first: it moves the task-ids counter past every other, which
                # then need not move it (imports sent together would race on it).
                f"SELECT * FROM {TASKS} ORDER BY id DESC",
                f"SELECT * FROM {RUNS} ORDER BY task_id, cycle, id",
                f"SELECT * FROM {FINDINGS} ORDER BY run_id, ordinal, id",
                f"SELECT * FROM {RULINGS} ORDER BY task_id, posted_at, id"))
    except psycopg.Error as error:
        raise Unreadable(f"{database(url)}: {str(error).strip()}") from error
    runs_of, findings_of, rulings_of = defaultdict(list), defaultdict(list), defaultdict(list)
    for run in runs:
        runs_of[run["task_id"]].append(run)
    for finding in findings:
        findings_of[finding["run_id"]].append(finding)
    for ruling in rulings:
        rulings_of[ruling["task_id"]].append(ruling)
    return [_task(database(url), task, runs_of[task["id"]], findings_of, rulings_of[task["id"]]) for task in tasks]


def _times_as_found(connection: Any) -> None:
    """Have ``connection`` read a time Python's calendar lacks (``infinity``, the year 10000,
    which PostgreSQL keeps) as its text, for a finding at its row: psycopg's own loaders fail
    the whole read on it."""
    import psycopg
    from psycopg.types.datetime import TimestampLoader, TimestamptzLoader

    for name, loader in (("timestamp", TimestampLoader), ("timestamptz", TimestamptzLoader)):
        class AsFound(loader):  # type: ignore[valid-type, misc]
            def load(self, data: Any) -> Any:
                try:
                    return super().load(data)
                except psycopg.DataError:
                    return bytes(data).decode()

        connection.adapters.register_loader(name, AsFound)


def _time(name: str, column: str, value: Any, found: Findings, required: bool = True) -> datetime | None:
    """The time ``column`` holds; None, and a finding when it is set (or ``required``), if it names none."""
    at = moment(value)
    if at is None and (value is not None or required):
        found.add(Invalid.code, name, None, f"{column} is NULL; nothing is imported" if value is None else
                  f"{column} {value!r} {NO_TIME}; nothing is imported")
    return at


def _file(table: str, row: dict[str, Any]) -> SourceFile:
    """A row as found, as JSON with sorted keys, named by its table and id."""
    return SourceFile(name=f"{table}/{row['id']}", content=_encode.encode(row))


def _task(where: str, row: dict[str, Any], runs: list[dict[str, Any]], findings_of: dict[int, list[dict[str, Any]]],
          rulings: list[dict[str, Any]]) -> Reading:
    found = Findings()
    key, name = str(row["id"]), f"{TASKS}/{row['id']}"
    files = [_file(TASKS, row)] + [_file(RUNS, run) for run in runs] + [
        _file(FINDINGS, finding) for run in runs for finding in findings_of[run["id"]]] + [
        _file(RULINGS, ruling) for ruling in rulings]
    status = _enum(TaskStatus, row["status"], name, "status", found)
    reviews = [_review(run, findings_of[run["id"]], found) for run in runs]
    read_rulings = [_ruling(ruling, found) for ruling in rulings]
    titled = bool(str(row["title"] or "").strip())
    if not titled:
        found.add(Invalid.code, name, None, "title is empty; nothing is imported")
    count = row.get("review_cycle_count") or 0
    budget = row.get("review_cycle_budget", DEFAULT_REVIEW_CYCLE_BUDGET)  # the first schema had none
    counted = all([_counted(name, "id", row["id"], found, least=1), _counted(name, "review_cycle_count", count, found),
                   _counted(name, "review_cycle_budget", budget, found)])
    created = _time(name, "created_at", row.get("created_at"), found, required=False)
    timeless = created is None and row.get("created_at") is not None
    if status is None or None in reviews or None in read_rulings or not titled or not counted or timeless:
        return Reading(key, None, found, [])
    trigger = _enum(Trigger, row.get("arbitration_pending_trigger"), name, "arbitration_pending_trigger", found)
    _judge(name, status, count, budget, trigger, row, runs, reviews, rulings, read_rulings, found)
    if status is TaskStatus.ARBITRATING and trigger is None:
        return Reading(key, None, found, [])  # it would wait for a ruling on nothing
    roles = sorted({review.reviewer_role for review in reviews})
    build = _enum(BuildStatus, row.get("build_status"), name, "build_status", found, absent=("pending",))
    failure = _enum(FailureReason, row.get("failure_reason"), name, "failure_reason", found)
    command = ImportTask(
        project_id=str(row["project_id"]), task_id=row["id"], source=f"{where}#{name}", title=row["title"],
        status=status, plan_path=row.get("source_path") or None,
        review_cycle_budget=budget, reviewer_roles=roles,
        review_cycle_count=count,
        build_status=build,
        commit_sha=row.get("commit_sha"), claimed_by=_claimant(row),
        pending_trigger=trigger if status is TaskStatus.ARBITRATING else None,
        failure_reason=failure,
        failure_detail=row.get("failure_detail") or "", created_at=created,
        reviews=reviews, rulings=read_rulings, files=files, findings=list(found),
    )
    return Reading(key, msgspec.structs.replace(command, command_id=f"import:{fingerprint(command)}"), found, [])


def _claimant(row: dict[str, Any]) -> str | None:
    """Who claimed it: the agent's id (the current schema) or name (the first one)."""
    claimant = row.get("claimed_by_agent_id") or row.get("claimed_by")
    return None if claimant is None else str(claimant)


def _enum(kind: type, value: Any, name: str, column: str, found: Findings, absent: tuple[str, ...] = ()) -> Any:
    """``value`` as one of ``kind``; None (a finding when it is set and unknown) otherwise."""
    if value is None or value in absent:
        return None
    try:
        return kind(value)
    except ValueError:
        found.add(Invalid.code, name, None, f"{column} {value!r} is not one of: {', '.join(v.value for v in kind)}")
        return None


def _review(run: dict[str, Any], findings: list[dict[str, Any]], found: Findings) -> ImportedReview | None:
    name = f"{RUNS}/{run['id']}"
    verdict = _enum(Verdict, run["verdict"], name, "verdict", found)
    if not _ROLE.match(str(run["reviewer_role"])):
        found.add(Invalid.code, name, None, f"reviewer_role {run['reviewer_role']!r} is not a role ({ROLE})")
        return None
    read = [_finding(finding, found) for finding in findings]
    posted = _time(name, "posted_at", run["posted_at"], found)
    if verdict is None or None in read or posted is None:
        return None
    return ImportedReview(cycle=run["cycle"], reviewer_role=run["reviewer_role"], verdict=verdict,
                          raw_markdown=run["raw_markdown"] or "", findings=tuple(read), posted_at=posted)


def _finding(row: dict[str, Any], found: Findings) -> Finding | None:
    severity = _enum(Severity, row["severity"], f"{FINDINGS}/{row['id']}", "severity", found)
    if severity is None:
        return None
    return Finding(id=row["id"], severity=severity, ordinal=row["ordinal"], title=row["title"],
                   description=row["description"] or "", evidence=row.get("evidence") or "", fix=row.get("fix") or "",
                   file_path=row.get("file_path"), line=row.get("line"))


def _ruling(row: dict[str, Any], found: Findings) -> ImportedRuling | None:
    name = f"{RULINGS}/{row['id']}"
    trigger, ruling = (_enum(Trigger, row["trigger"], name, "trigger", found),
                       _enum(Ruling, row["ruling"], name, "ruling", found))
    resolution = None
    if row.get("contradiction_resolution") is not None:
        try:
            given = msgspec.convert(row["contradiction_resolution"], ResolutionInput)
        except msgspec.ValidationError as error:
            found.add(Invalid.code, name, None, f"contradiction_resolution: {error}")
            return None
        resolution = Resolution(upheld_finding_id=given.upheld_finding_id,
                                retired_finding_id=given.retired_finding_id, rationale=given.rationale)
    posted = _time(name, "posted_at", row["posted_at"], found)
    if trigger is None or ruling is None or posted is None:
        return None
    return ImportedRuling(trigger=trigger, ruling=ruling, ruling_markdown=row["ruling_markdown"] or "",
                          contradiction_resolution=resolution, posted_at=posted)


def _counted(name: str, column: str, value: Any, found: Findings, least: int = 0) -> bool:
    """Whether ``column`` holds a whole number from ``least`` on; a finding if not."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= least:
        return True
    found.add(Invalid.code, name, None, f"{column} is {value!r}, not a whole number from {least}; nothing is imported")
    return False


def _judge(name: str, status: TaskStatus, count: int, budget: int, trigger: Trigger | None, row: dict[str, Any],
           runs: list[dict[str, Any]], reviews: list[ImportedReview], rulings: list[dict[str, Any]],
           read_rulings: list[ImportedRuling], found: Findings) -> None:
    """The rules the task's rows break, as the services would have refused the steps."""
    arbitrating = status is TaskStatus.ARBITRATING
    ruled = {r.trigger for r in read_rulings}
    if arbitrating and trigger is None:
        found.add(Invalid.code, name, None, "arbitrating with no arbitration_pending_trigger; nothing is imported")
    if not arbitrating and trigger is not None:
        found.add(Invalid.code, name, None, f"{status.value} yet arbitration_pending_trigger is {trigger.value!r} "
                                            "(not kept)")
    if arbitrating and trigger in ruled:
        found.add(ArbitrationExists.code, name, None, f"arbitrating on {trigger.value} which was already ruled on")
    if count > budget and not arbitrating and Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED not in ruled:
        found.add(IllegalTransition.code, name, None,
                  f"cycle {count} is past the budget of {budget}: the task left arbitrating (or never went) without "
                  f"a ruling, and is {status.value}")
    if row.get("failure_reason") == FailureReason.ARBITRATOR_ESCALATED.value and not any(
            r.ruling is Ruling.ESCALATE for r in read_rulings):
        found.add(IllegalTransition.code, name, None, "failed as arbitrator_escalated without an escalate ruling")
    for run, review in zip(runs, reviews):
        if review.cycle > count:
            found.add(IllegalTransition.code, f"{RUNS}/{run['id']}", None,
                      f"a review of cycle {review.cycle}; the task's cycle is {count}")
    for ruling_row, ruling in zip(rulings, read_rulings):
        resolution = ruling.contradiction_resolution
        if resolution is None:
            continue
        before = [r for r in reviews if r.posted_at <= ruling.posted_at]
        cycle = max((r.cycle for r in before), default=None)
        reviewed = {f.id for r in before if r.cycle == cycle for f in r.findings}
        named = {resolution.upheld_finding_id, resolution.retired_finding_id}
        if not named <= reviewed:
            found.add(FindingMismatch.code, f"{RULINGS}/{ruling_row['id']}", None,
                      f"the ruling names findings {sorted(named - reviewed)}, which are not of the reviewed cycle "
                      f"{cycle}")
