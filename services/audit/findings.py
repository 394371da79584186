"""What an audit reports: findings, HARD, WARN or INFO, and their summary."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec


class Finding(msgspec.Struct):
    severity: str  # HARD, WARN, INFO
    code: str
    family: str
    id: str
    position: int | None
    message: str


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
