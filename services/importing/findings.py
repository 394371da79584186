"""A record's folder as read: its findings, each a rule of PROTOCOLS.md broken (the code the
services use), in which file, on which line; what it becomes; the files no record has."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from athenaeum.aggregates.rules import Invalid
from athenaeum.events.imported import ImportFinding
from athenaeum.services.importing.folder_files import MAX_FILE


class Findings(list[ImportFinding]):
    def add(self, code: str, file: str, line: int | None, message: str) -> None:
        self.append(ImportFinding(code=code, file=file, line=line, message=message))

    def texts(self, contents: Mapping[str, bytes | None]) -> dict[str, str]:
        """The files that are UTF-8 text, decoded; each other (or one too large to read: None)
        is a finding."""
        texts: dict[str, str] = {}
        for name, content in contents.items():
            if content is None:
                self.add(Invalid.code, name, None, f"larger than {MAX_FILE:,} bytes: not read")
                continue
            try:
                texts[name] = content.decode()
            except UnicodeDecodeError as error:
                self.add(Invalid.code, name, None, f"not UTF-8 text ({error.reason} at byte {error.start})")
        return texts


class Reading(NamedTuple):
    """What a folder becomes (its import command; None: it cannot be imported), what its
    history breaks, and its files that no record of its kind has."""

    key: str
    command: Any
    findings: Findings
    unknown: list[str]
