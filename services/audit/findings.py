"""What an audit reports: findings, HARD, WARN or INFO, and their summary."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from athenaeum.events import family_of_id, natural_key
from athenaeum.services.jetstream.entries import Entry


class Finding(msgspec.Struct):
    severity: str  # HARD, WARN, INFO
    code: str
    family: str
    id: str
    position: int | None
    message: str


def found_at(entry: Entry, severity: str, code: str, message: str) -> Finding:
    """A finding at ``entry``, named by the aggregate it is an event of (else by its subject)."""
    originator = entry.originator()
    family, key = (family_of_id(originator[0]), natural_key(originator[0])) if originator else ("ledger", entry.subject)
    return Finding(severity, code, family, key, entry.position, message)


class FailuresReported:
    """A context in which whatever fails is a HARD finding, at ``entry``, added to ``findings``
    rather than raised: forged history may hold anything, and an auditor needs the rest."""

    SAID = 400  # characters of the failure's own words kept

    __slots__ = ("findings", "doing", "entry")

    def __init__(self, findings: list[Finding], doing: str, entry: Entry | None = None) -> None:
        self.findings = findings
        self.doing = doing
        self.entry = entry

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> bool:
        if not isinstance(error, Exception):
            return False
        said = repr(error)
        message = f"the audit failed {self.doing}: {said if len(said) <= self.SAID else said[:self.SAID] + '...'}"
        self.findings.append(found_at(self.entry, "HARD", "audit_failed", message) if self.entry is not None
                             else Finding("HARD", "audit_failed", "ledger", "*", None, message))
        return True


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    events: int = 0
    entries: int = 0  # every message of the stream read, events or not
    aggregates: int = 0

    @property
    def summary(self) -> dict[str, int]:
        counts = {severity: sum(f.severity == severity for f in self.findings) for severity in ("HARD", "WARN", "INFO")}
        return counts | {"events": self.events, "entries": self.entries, "aggregates": self.aggregates}
