"""The findings of one record being read: each a rule of PROTOCOLS.md broken (the code the
services use), in which file, on which line."""

from __future__ import annotations

from athenaeum.events.imported import ImportFinding


class Findings(list[ImportFinding]):
    def add(self, code: str, file: str, line: int | None, message: str) -> None:
        self.append(ImportFinding(code=code, file=file, line=line, message=message))
