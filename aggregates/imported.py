"""What the import of any family's original record shares: the files' bytes with their
SHA-256, the digest of the whole record that makes a second import of it add nothing, and the
checks a file name must pass before it is written back (``replay``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from athenaeum.aggregates.rules import AlreadyExists, Invalid
from athenaeum.events.imported import ImportedFile, SourceFile


def imported_files(files: Sequence[SourceFile]) -> tuple[ImportedFile, ...]:
    """The files with their SHA-256, by name (each a name in the record's folder, as its type
    says); one given twice is ``invalid``."""
    seen: set[str] = set()
    for file in files:
        if file.name in seen:
            raise Invalid(f"files: {file.name!r} is given twice", "files")
        seen.add(file.name)
    return tuple(ImportedFile(file.name, hashlib.sha256(file.content).hexdigest(), file.content) for file in files)


def content_sha256(files: Sequence[ImportedFile]) -> str:
    """The record's digest: every file's name and SHA-256, in name order (wherever it was found)."""
    listing = "".join(f"{file.sha256}  {file.name}\n" for file in sorted(files, key=lambda f: f.name))
    return hashlib.sha256(listing.encode()).hexdigest()


def imported_again(imported_sha256: str | None, digest: str, what: str, field: str) -> bool:
    """Whether an existing aggregate is this very record, imported before (then nothing is
    appended); another aggregate of the same id is ``already_exists``."""
    if imported_sha256 == digest:
        return True
    raise AlreadyExists(f"{what} already exists{'' if imported_sha256 is None else ', imported from other files'}",
                        field)


def recorded(files: Sequence[SourceFile], existing: str | None | bool, what: str, field: str
             ) -> tuple[tuple[ImportedFile, ...], str] | None:
    """The files of a record to import, with its digest; None when the aggregate ``existing``
    (its imported digest; False: none yet) is this very record, imported before."""
    found = imported_files(files)
    digest = content_sha256(found)
    if existing is not False and imported_again(existing, digest, what, field):  # type: ignore[arg-type]
        return None
    return found, digest
