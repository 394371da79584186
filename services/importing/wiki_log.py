"""A wiki's ``log.md``, checked line by line against the threads and pages found beside it: a
line naming a thread or page the wiki does not have, or an entry its thread does not have, or
saying of an entry what its file does not (its type, its author, its time), is a finding by
line. The log is no record: ``replay`` writes it anew from the threads' entries, as
``- <ts> dialogue/<slug>: entry <NNN-author.md> (<type>) by <author>``, the layout read here
first; any other line is checked for the threads (``dialogue/<slug>``) it names and the pages
it links (``[[page]]``, resolved among the wiki's Markdown files as the original checker does)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path

from athenaeum.aggregates.rules import Invalid, NotFound
from athenaeum.events.thread import ImportedEntry
from athenaeum.events.thread_commands import ImportThread
from athenaeum.projectors.record_text import utc_text
from athenaeum.services.importing import folder_files
from athenaeum.services.importing.findings import Findings
from athenaeum.services.importing.thread_folder import ENTRY_NAME
from athenaeum.services.importing.times import moment

ENTRY_LINE = re.compile(r"^\s*[-*]\s+(?P<ts>\S+)\s+(?:agents/)?dialogue/(?P<slug>[^:\s]+):\s+entry\s+(?P<file>\S+)"
                        r"\s+\((?P<kind>[^)]*)\)\s+by\s+(?P<author>\S+)\s*$")
THREAD_REFERENCE = re.compile(r"(?<![\w/.-])(?:agents/)?dialogue/([a-z0-9][a-z0-9-]{0,62})(?![\w-])")
PAGE_LINK = re.compile(r"(?<!!)\[\[([^\]|#]*)(?:[#|][^\]]*)?\]\]")  # ``![[...]]`` embeds, not links
FRONT = "---"

Threads = Mapping[str, ImportThread | None]  # the wiki's threads by slug: as read (None: unreadable)


def check(log: Path, threads: Threads, markdown: Collection[str]) -> Findings:
    """Each line of the log against the wiki's ``threads`` and its ``markdown`` files (their
    paths inside ``wiki/``: pages or not, as the original checker links to any)."""
    findings = Findings()
    texts = findings.texts({log.name: folder_files.read(log)})
    if log.name not in texts:
        return findings
    lines = texts[log.name].splitlines()
    first = _after_front_matter(lines)
    for number, line in enumerate(lines[first:], start=first + 1):
        if (entry := ENTRY_LINE.match(line)) is not None:
            _entry_line(entry, number, log.name, threads, findings)
            continue
        for slug in THREAD_REFERENCE.findall(line):
            if slug not in threads:
                findings.add(NotFound.code, log.name, number, f"names thread {slug!r}, which the wiki does not have")
        for name in PAGE_LINK.findall(line):
            if not _resolves(name.strip(), markdown):
                findings.add(NotFound.code, log.name, number, f"links page [[{name.strip()}]], which the wiki does "
                                                              "not have")
    return findings


def _after_front_matter(lines: list[str]) -> int:
    """The index of the first line after the front matter (0 when there is none)."""
    if lines and lines[0].strip() == FRONT:
        for index, line in enumerate(lines[1:], start=1):
            if line.strip() == FRONT:
                return index + 1
    return 0


def _entry_line(line: re.Match[str], number: int, name: str, threads: Threads, findings: Findings) -> None:
    slug, file = line["slug"], line["file"]
    if slug not in threads:
        findings.add(NotFound.code, name, number, f"names thread {slug!r}, which the wiki does not have")
        return
    thread = threads[slug]
    if thread is None:
        return  # its folder could not be read: its own findings say why
    entry = _entry(thread, file)
    if entry is None:
        findings.add(NotFound.code, name, number, f"names entry {file} of thread {slug!r}, which it does not have")
        return
    if line["kind"] != entry.kind.value:
        findings.add(Invalid.code, name, number, f"says entry {file} of {slug!r} is a {line['kind']}; its file "
                                                 f"says {entry.kind.value}")
    if line["author"] != entry.author:
        findings.add(Invalid.code, name, number, f"says entry {file} of {slug!r} is by {line['author']}; its file "
                                                 f"says {entry.author}")
    if moment(line["ts"]) != entry.ts:
        findings.add(Invalid.code, name, number, f"dates entry {file} of {slug!r} {line['ts']}; its file says "
                                                 f"{utc_text(entry.ts)}")


def _entry(thread: ImportThread, file: str) -> ImportedEntry | None:
    """The entry a log names by its file's name (``NNN-<author>.md``), if the thread has that file."""
    match = ENTRY_NAME.match(file)
    if match is None or not any(f.name == f"entries/{file}" for f in thread.files):
        return None
    return next((entry for entry in thread.entries if entry.n == int(match.group(1))), None)


def _resolves(name: str, markdown: Collection[str]) -> bool:
    """As the original checker resolves a wikilink in ``wiki/log.md``: a path (with a ``/``)
    inside ``wiki/``, else any file by its stem, or a file at the top of ``wiki/`` by its name."""
    name = name.replace("\\", "/")
    if not name:
        return True
    if "/" in name:
        return (name if name.endswith(".md") else f"{name}.md") in markdown
    return any(Path(path).stem == name or path in (name, f"{name}.md") for path in markdown)
