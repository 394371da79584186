"""The files of an original record's folder, listed with ``os.scandir`` and read with a plain
``open``: a ratification or a thread is a dozen small files, and ``pathlib`` costs more per
file (its paths, its checks) than reading the file does."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path


def files_under(folder: Path) -> list[str]:
    """The files under ``folder``, however deep, by their paths inside it (``/``-separated),
    sorted, as ``folder.rglob("*")`` finds them: a link to a file is one, a linked folder is
    not entered."""
    return sorted(_files(str(folder), ""))


def _files(folder: str, prefix: str) -> Iterator[str]:
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file():
                yield prefix + entry.name
            elif entry.is_dir(follow_symlinks=False):
                yield from _files(entry.path, prefix + entry.name + "/")


def listing(folder: Path) -> tuple[list[str], list[str]]:
    """The names of the files and of the folders in ``folder`` itself, each sorted."""
    files, folders = [], []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file():
                files.append(entry.name)
            elif entry.is_dir():
                folders.append(entry.name)
    return sorted(files), sorted(folders)


def contents(folder: Path, names: Iterable[str]) -> dict[str, bytes]:
    """The bytes of each of the files ``names`` inside ``folder``, by name."""
    read = {}
    inside = f"{folder}/"
    for name in names:
        with open(inside + name, "rb") as file:
            read[name] = file.read()
    return read
