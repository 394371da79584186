"""Where the original layouts lie under the paths given: every ``.athenaeum/<topic>/`` (dancer's)
and ``.fleet-ratify/<topic>/`` folder (fleet-ratify's),
every dialogue thread's folder, every Markdown file inside a ``wiki/`` folder (a canon page, if
its front matter says so) and the wiki's log, every quorum scratchpad ``fleet/quorum/<id>``,
and every other file, listed as unknown (never guessed at), links and FIFOs among them (never
followed or opened)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from athenaeum.events.page import WIKI, WIKI_LOG
from athenaeum.events.ratification import RATIFICATION_FOLDERS
from athenaeum.services.importing import folder_files
from athenaeum.services.importing.quorum_file import is_scratchpad

THREAD = "thread.md"  # what marks a dialogue thread's folder
WIKI_FOLDER = WIKI.rstrip("/")
PAGE_SUFFIX = ".md"
SKIPPED = {".git"}  # a repository's own machinery, no record of anyone's


class WikiFile(NamedTuple):
    wiki: Path  # the ``wiki/`` folder it lies in
    path: Path

    @property
    def page(self) -> str:
        """Its page id: its path inside ``wiki/``."""
        return self.path.relative_to(self.wiki).as_posix()


class Found(NamedTuple):
    ratifications: list[Path]  # the topic folders (one its reader finds no ratification in is unknown)
    threads: list[Path]  # the dialogue threads' folders
    pages: list[WikiFile]  # Markdown files inside a wiki: canon pages, or unknown
    logs: list[WikiFile]  # the wikis' logs
    quorums: list[Path]  # the quorum scratchpads
    unknown: list[Path]


def discover(paths: Iterable[Path]) -> Found:
    ratifications: list[Path] = []
    threads: list[Path] = []
    pages: list[WikiFile] = []
    logs: list[WikiFile] = []
    quorums: list[Path] = []
    unknown: list[Path] = []
    for root in paths:
        if root.is_file():
            (quorums if is_scratchpad(root.absolute()) else unknown).append(root)
            continue
        if root.absolute().parent.name in RATIFICATION_FOLDERS:  # a topic folder itself, given alone
            ratifications.append(root)
            continue
        waiting = [root]
        while waiting:
            here = waiting.pop()
            try:
                # Only the tree's own folders and regular files: see ``folder_files``.
                folders, files, others = folder_files.kinds(here)
            except OSError:  # a folder it may not read: said, as any file it does not know
                unknown.append(here)
                continue
            unknown += [here / name for name in others]
            folders = [name for name in folders if name not in SKIPPED]
            if here.name in RATIFICATION_FOLDERS:
                ratifications += [here / name for name in folders]  # each read whole, by its reader
                unknown += [here / name for name in files]
                continue
            if THREAD in files:
                threads.append(here)  # its entries are read by its reader
                continue
            wiki = _wiki(root, here)
            for name in files:
                if is_scratchpad((here / name).absolute()):
                    quorums.append(here / name)
                elif wiki is not None and here / name == wiki / WIKI_LOG:
                    logs.append(WikiFile(wiki, here / name))
                elif wiki is not None and name.endswith(PAGE_SUFFIX):
                    pages.append(WikiFile(wiki, here / name))
                else:
                    unknown.append(here / name)
            waiting += [here / name for name in folders]
    return Found(sorted(set(ratifications)), sorted(set(threads)), sorted(set(pages)), sorted(set(logs)),
                 sorted(set(quorums)), sorted(set(unknown)))


def _wiki(root: Path, here: Path) -> Path | None:
    """The outermost ``wiki/`` folder ``here`` lies in, from ``root`` down (``root`` itself, if
    the wiki was the path given)."""
    if root.absolute().name == WIKI_FOLDER:  # (``.`` has no name of its own)
        return root
    folder = root
    for part in here.relative_to(root).parts:
        folder = folder / part
        if part == WIKI_FOLDER:
            return folder
    return None
