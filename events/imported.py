"""What every imported record carries: the original files' bytes and their SHA-256, where
they were found, and what the rules found wrong with them (``athenaeum import``). The
importer is the events' actor; nothing imported is recorded as signed by anyone else."""

from __future__ import annotations

from typing import Annotated

import msgspec

from athenaeum.events.constraints import ARTIFACT_LIMIT, Said, listing, schema_only, texts

FILES_LIMIT = 1000  # files in one record's folder
FINDINGS_LIMIT = 1000  # broken rules reported of one record

BASE64 = r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"  # JSON carries bytes so
_SEGMENT = r"(?!\.\.?(/|$))[^/\\\x00]+"  # a name, not . or ..
FILE_NAME = rf"^{_SEGMENT}(/{_SEGMENT})*$"  # a file inside the record's own folder
OriginalBytes = Annotated[bytes, msgspec.Meta(max_length=ARTIFACT_LIMIT), schema_only(pattern=BASE64)]


class SourceFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A file of the original record as read: its name inside the record's folder, its bytes."""

    name: Annotated[str, texts(255), msgspec.Meta(pattern=FILE_NAME)]
    content: OriginalBytes


class ImportedFile(msgspec.Struct, frozen=True):
    name: str
    sha256: str  # of ``content``, computed when it was imported
    content: bytes


class ImportFinding(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A rule of PROTOCOLS.md the original history breaks, with the code the services use, and
    where: the file and its line (none when the rule is about the record as a whole)."""

    code: Annotated[str, texts(64)]
    file: Annotated[str, texts(255)]
    line: int | None
    message: Said


SourceFiles = Annotated[list[SourceFile], listing(FILES_LIMIT, "files")]
ImportFindings = Annotated[list[ImportFinding], listing(FINDINGS_LIMIT, "findings")]
