"""The import itself: find the records under the paths, read each, and (unless it is a dry
run) send each importable one as its family's import command, as the importer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from athenaeum.events.commands import Command
from athenaeum.services.commands.replies import Reply
from athenaeum.events.thread import EntryKind
from athenaeum.events.thread_commands import ImportThread
from athenaeum.services.importing import (
    page_file, quorum_file, ratification_folder, task_tables, thread_folder, wiki_log,
)
from athenaeum.services.importing.discovery import Found, discover
from athenaeum.services.importing.quorum_file import OpenProposals
from athenaeum.services.importing.report import Log, Record

IN_FLIGHT = 16  # calls of ``send`` at once


def records(paths: Iterable[Path], postgres: str | None = None, open_ones: OpenProposals = OpenProposals(None, None)
            ) -> tuple[list[Record], list[Path], list[Log]]:
    """Every record found under ``paths`` and in the original arbitrator's tables at the
    ``postgres`` URL, read and judged (an open proposal with the electorate and deadline
    ``open_ones`` gives it); the unknown files; the wikis' logs, which are no record (``replay``
    writes them anew from the threads' entries), each line checked against its wiki."""
    found = discover(paths)
    read: list[Record] = []
    unknown = list(found.unknown)
    for folder in found.ratifications:
        reading = ratification_folder.read(folder, str(folder))
        command = reading.command
        read.append(Record("ratification", reading.key, folder, "RatificationImported" if command else None,
                           command.status.value if command else None, list(reading.findings), command))
        unknown += [folder / name for name in reading.unknown]
    for folder in found.threads:
        thread = thread_folder.read(folder, str(folder))
        read.append(Record("thread", thread.key, folder, "ThreadImported" if thread.command else None,
                           _thread_status(thread.command), list(thread.findings), thread.command))
        unknown += [folder / name for name in thread.unknown]
    for file in found.pages:
        page = page_file.read(file.path, file.page, str(file.wiki))
        if page is None:
            unknown.append(file.path)
            continue
        read.append(Record("page", page.key, file.wiki, "PageImported" if page.command else None,
                           page.command.lifecycle.value if page.command else None, list(page.findings), page.command))
    for file in found.quorums:
        proposal = quorum_file.read(file, open_ones)
        command = proposal.command
        read.append(Record("quorum", proposal.key, file.parent, "ProposalImported" if command else None,
                           command.status.value if command else None, list(proposal.findings), command))
    if postgres is not None:
        where = task_tables.database(postgres)
        for task in task_tables.read(postgres):
            command = task.command
            read.append(Record("task", task.key, where, "TaskImported" if command else None,
                               command.status.value if command else None, list(task.findings), command))
    return read, sorted(unknown), _logs(found, read)


def _logs(found: Found, read: list[Record]) -> list[Log]:
    """Each wiki's log, checked against the threads and pages found in that wiki."""
    threads = [record for record in read if record.family == "thread"]
    checked = []
    for log in found.logs:
        in_wiki = {record.key: record.command for record in threads
                   if isinstance(record.folder, Path) and record.folder.is_relative_to(log.wiki)}
        pages = {file.page for file in found.pages if file.wiki == log.wiki}
        checked.append(Log(log.path, list(wiki_log.check(log.path, in_wiki, pages))))
    return checked


def _thread_status(command: ImportThread | None) -> str | None:
    """Where the thread stands after its last entry, as the rules would have it."""
    if command is None:
        return None
    last = command.entries[-1].kind if command.entries else None
    return "awaiting-crystallization" if last is EntryKind.CLOSURE else "open"


def send_all(found: list[Record], send: Callable[[Command], Reply],
             advance: Callable[[int], None] = lambda done: None, in_flight: int = IN_FLIGHT) -> list[str | None]:
    """Each importable record sent, ``in_flight`` at once (from as many threads); what became
    of each, in the records' order (not by key: two records may share one, as two wikis' pages
    of one path): the position it was recorded at, ``unchanged`` when it was imported before,
    or the refusal; None for one not sent. Records that share a key are sent one after the
    other, in their order; the others do not wait on each other."""
    outcomes: list[str | None] = [None] * len(found)
    waves: list[list[int]] = []  # the first record of each key, then the second, ...
    sent: Counter[str] = Counter()
    for index, record in enumerate(found):
        if record.command is not None:
            if sent[record.ref] == len(waves):
                waves.append([])
            waves[sent[record.ref]].append(index)
            sent[record.ref] += 1
    finished = len(found) - sum(map(len, waves))
    pool = ThreadPoolExecutor(in_flight, thread_name_prefix="import")
    try:
        for wave in waves:
            for index, reply in zip(wave, pool.map(lambda index: send(found[index].command), wave)):
                outcomes[index] = _outcome(reply)
                finished += 1
                advance(finished)
    finally:
        pool.shutdown(cancel_futures=True)  # a send that raised: the ones not begun are not sent
    return outcomes


def _outcome(reply: Reply) -> str | None:
    if reply.ok:
        return f"recorded at {reply.position}" if reply.position else "unchanged"
    return f"refused: {reply.error.code}: {reply.error.message}" if reply.error is not None else None
    return outcomes
