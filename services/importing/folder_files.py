"""The files of the original records, listed with ``os.scandir`` and read with a plain ``open``:
a ratification or a thread is a dozen small files, and ``pathlib`` costs more per file (its
paths, its checks) than reading the file does.

Only the tree's own regular files are read. A symbolic link may lead out of the tree (to a key,
to /etc), and whatever it is would be kept in an append-only ledger; a FIFO or a device may never
end. Such entries are listed as unknown, never opened; a file larger than ``MAX_FILE`` is not
read past it (``Findings.texts`` reports it)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

MAX_FILE = 4 * 1024 * 1024  # bytes: a record goes to the ledger in one message of at most 8 MiB, all its files with it
FIRST_READ = 64 * 1024  # bytes: what the original tools wrote, in one read


def regular(path: Path) -> bool:
    """Whether ``path`` is a regular file itself, not through a link."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def files_under(folder: Path) -> tuple[list[str], list[str]]:
    """The regular files under ``folder``, however deep, by their paths inside it
    (``/``-separated), sorted; and, apart, every other entry met (links, FIFOs, devices), never
    entered or opened."""
    files: list[str] = []
    others: list[str] = []
    _walk(str(folder), "", files, others)
    return sorted(files), sorted(others)


def _walk(folder: str, prefix: str, files: list[str], others: list[str]) -> None:
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False):
                files.append(prefix + entry.name)
            elif entry.is_dir(follow_symlinks=False):
                _walk(entry.path, prefix + entry.name + "/", files, others)
            else:
                others.append(prefix + entry.name)


def listing(folder: Path) -> tuple[list[str], list[str]]:
    """The names of the regular files in ``folder`` itself, and of everything else in it
    (folders, links, FIFOs, devices), each sorted."""
    folders, files, others = kinds(folder)
    return files, sorted(folders + others)


def kinds(folder: Path) -> tuple[list[str], list[str], list[str]]:
    """The names of the folders in ``folder`` itself (not links to one), of its regular files,
    and of everything else in it (links, FIFOs, devices), each sorted: told apart by the
    directory's own listing, with no call on each file."""
    folders: list[str] = []
    files: list[str] = []
    others: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False):
                files.append(entry.name)
            elif entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            else:
                others.append(entry.name)
    return sorted(folders), sorted(files), sorted(others)


def contents(folder: Path, names: Iterable[str]) -> dict[str, bytes | None]:
    """The bytes of each of the files ``names`` inside ``folder``, by name (None: too large)."""
    inside = f"{folder}/"
    return {name: read(inside + name) for name in names}


def read(path: str | Path) -> bytes | None:
    """A regular file's bytes; None when it holds more than ``MAX_FILE``. Read with ``os.read``:
    a buffered read of ``MAX_FILE`` allocates that much for every file, and costs seven times
    the whole read of a small one. A small file is read whole by one read of ``FIRST_READ``,
    which ends short of it (a regular file's read is short only at its end): no call to ask
    its size, nor one more read to see its end, each a system call per file."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        content = os.read(descriptor, FIRST_READ)
        if len(content) == FIRST_READ:  # more, maybe: read on for the size it has (a byte more, to see its end)
            content += os.read(descriptor, max(min(os.fstat(descriptor).st_size, MAX_FILE) + 1 - len(content), 1))
            while 0 < len(content) <= MAX_FILE and (more := os.read(descriptor, MAX_FILE + 1 - len(content))):
                content += more  # it grew since: read on to its end, or past MAX_FILE
    finally:
        os.close(descriptor)
    return None if len(content) > MAX_FILE else content

