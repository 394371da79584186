"""What ``athenaeum import`` says before it writes: each record, what it becomes, and the rules
its history breaks by file and line; the files it does not know."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from athenaeum.events.imported import ImportFinding


class Record(NamedTuple):
    family: str
    key: str
    folder: Path | str  # a folder, or the database whose tables hold the record
    becomes: str | None  # the event it becomes; None: it cannot be imported
    status: str | None
    findings: list[ImportFinding]
    command: Any  # the command that imports it, if it can be

    @property
    def ref(self) -> str:
        """Its name in the report, unique across families: task 7 and thread 7 are ``task:7``
        and ``thread:7``."""
        return f"{self.family}:{self.key}"


class Log(NamedTuple):
    """A wiki's log: no record, but its lines are checked against the wiki's threads and pages."""

    path: Path
    findings: list[ImportFinding]


def where(record: Record, finding: ImportFinding) -> str:
    if isinstance(record.folder, str):
        return f"{record.folder}#{finding.file}"  # a table's row
    return _place(record.folder / finding.file, finding.line)


def _at(log: Log, finding: ImportFinding) -> str:
    return _place(log.path, finding.line)


def _place(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line is not None else str(path)


def findings(records: list[Record], logs: list[Log]) -> int:
    return sum(len(r.findings) for r in records) + sum(len(log.findings) for log in logs)


def as_json(records: list[Record], unknown: list[Path], logs: list[Log], outcomes: list[str | None] | None
            ) -> dict[str, Any]:
    """The report; ``outcomes`` (once written) lie in the records' order, one to a record."""
    return {
        "records": [
            {"family": r.family, "id": r.key, "key": r.ref, "source": str(r.folder), "becomes": r.becomes,
             "status": r.status, "findings": [msgspec.to_builtins(f) | {"at": where(r, f)} for f in r.findings]}
            | ({"outcome": outcomes[n]} if outcomes is not None else {})
            for n, r in enumerate(records)
        ],
        "unknown": [str(path) for path in unknown],
        "logs": [{"path": str(log.path), "findings": [msgspec.to_builtins(f) | {"at": _at(log, f)}
                                                      for f in log.findings]} for log in logs],
        "findings": findings(records, logs),
        "written": outcomes is not None,
    }


def as_text(records: list[Record], unknown: list[Path], logs: list[Log]) -> list[str]:
    lines = []
    for record in records:
        becomes = f"becomes {record.becomes} ({record.status})" if record.becomes else "cannot be imported"
        lines.append(f"{record.ref} ({record.folder}): {becomes}")
        lines += [f"  {where(record, f)}: {f.code}: {f.message}" for f in record.findings]
    lines += [f"unknown: {path}" for path in unknown]
    for log in logs:
        lines.append(f"log: {log.path} (the wiki's log: not a record; replay writes it anew from the threads' entries)")
        lines += [f"  {_at(log, f)}: {f.code}: {f.message}" for f in log.findings]
    lines.append(f"{len(records)} records, {findings(records, logs)} findings, {len(unknown)} unknown files")
    return lines


def outcome_lines(records: list[Record], outcomes: list[str | None]) -> list[str]:
    """What became of each record sent, by its name in the report."""
    return [f"{record.ref}: {outcome}" for record, outcome in zip(records, outcomes) if outcome is not None]
