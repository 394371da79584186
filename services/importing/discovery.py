"""Where the original layouts lie under the paths given: every ``.athenaeum/<topic>/`` folder,
and every other file, listed as unknown (never guessed at)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

RATIFICATIONS = ".athenaeum"
THREAD = "thread.md"  # what marks a dialogue thread's folder
SKIPPED = {".git"}  # a repository's own machinery, no record of anyone's


class Found(NamedTuple):
    ratifications: list[Path]  # the topic folders
    threads: list[Path]  # the dialogue threads' folders
    unknown: list[Path]


def discover(paths: Iterable[Path]) -> Found:
    ratifications: list[Path] = []
    threads: list[Path] = []
    unknown: list[Path] = []
    for root in paths:
        if root.is_file():
            unknown.append(root)
            continue
        for folder, subfolders, files in os.walk(root):
            here = Path(folder)
            subfolders[:] = sorted(name for name in subfolders if name not in SKIPPED)
            if here.name == RATIFICATIONS:
                ratifications += [here / name for name in subfolders]
                unknown += [here / name for name in sorted(files)]
                subfolders[:] = []  # a topic folder is read whole, by its reader
                continue
            if THREAD in files:
                threads.append(here)
                subfolders[:] = []  # its entries are read by its reader
                continue
            unknown += [here / name for name in sorted(files)]
    return Found(sorted(set(ratifications)), sorted(set(threads)), sorted(set(unknown)))
