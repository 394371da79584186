"""The import itself: find the records under the paths, read each, and (unless it is a dry
run) send each importable one as its family's import command, as the importer."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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

TOGETHER = 100  # records on one call of ``send``: one write to the ledger for them all
IN_FLIGHT = 2  # calls of ``send`` at once: one is written while the next is decided


class TreeReading:
    """The records under some paths and in the original arbitrator's tables, read and judged
    one after the other as they are iterated (so the first are sent while the others are
    read); once all are, the unknown files and the wikis' logs."""

    def __init__(self, paths: Iterable[Path], postgres: str | None = None,
                 open_ones: OpenProposals = OpenProposals(None, None)) -> None:
        self.found = discover(paths)
        self.open_ones = open_ones
        self.tasks = [] if postgres is None else [(task_tables.database(postgres), task)
                                                  for task in task_tables.read(postgres)]
        self.read: list[Record] = []  # those iterated so far
        self.unknown = list(self.found.unknown)
        self.logs: list[Log] = []  # once all are read

    def __len__(self) -> int:
        """How many records there are at most (a Markdown file in a wiki may be no page)."""
        found = self.found
        return len(found.ratifications) + len(found.threads) + len(found.pages) + len(found.quorums) + len(self.tasks)

    def __iter__(self) -> Iterator[Record]:
        for record in self._records():
            self.read.append(record)
            yield record
        self.unknown.sort()
        self.logs = _logs(self.found, self.read)

    def _records(self) -> Iterator[Record]:
        found, unknown = self.found, self.unknown
        for folder in found.ratifications:
            reading = ratification_folder.read(folder, str(folder))
            command = reading.command
            yield Record("ratification", reading.key, folder, "RatificationImported" if command else None,
                         command.status.value if command else None, list(reading.findings), command)
            unknown += [folder / name for name in reading.unknown]
        for folder in found.threads:
            thread = thread_folder.read(folder, str(folder))
            yield Record("thread", thread.key, folder, "ThreadImported" if thread.command else None,
                         _thread_status(thread.command), list(thread.findings), thread.command)
            unknown += [folder / name for name in thread.unknown]
        for file in found.pages:
            page = page_file.read(file.path, file.page, str(file.wiki))
            if page is None:
                unknown.append(file.path)
                continue
            yield Record("page", page.key, file.wiki, "PageImported" if page.command else None,
                         page.command.lifecycle.value if page.command else None, list(page.findings), page.command)
        for file in found.quorums:
            proposal = quorum_file.read(file, self.open_ones)
            command = proposal.command
            yield Record("quorum", proposal.key, file.parent, "ProposalImported" if command else None,
                         command.status.value if command else None, list(proposal.findings), command)
        for where, task in self.tasks:
            command = task.command
            yield Record("task", task.key, where, "TaskImported" if command else None,
                         command.status.value if command else None, list(task.findings), command)


def records(paths: Iterable[Path], postgres: str | None = None, open_ones: OpenProposals = OpenProposals(None, None)
            ) -> tuple[list[Record], list[Path], list[Log]]:
    """Every record found under ``paths`` and in the original arbitrator's tables at the
    ``postgres`` URL, read and judged (an open proposal with the electorate and deadline
    ``open_ones`` gives it); the unknown files; the wikis' logs, which are no record (``replay``
    writes them anew from the threads' entries), each line checked against its wiki."""
    reading = TreeReading(paths, postgres, open_ones)
    return list(reading), reading.unknown, reading.logs


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


def send_all(found: Iterable[Record], send: Callable[[list[Command]], list[Reply]],
             advance: Callable[[int], None] = lambda done: None, together: int = TOGETHER,
             in_flight: int = IN_FLIGHT) -> list[str | None]:
    """Each importable record sent as it is read, ``together`` on one call of ``send`` and
    ``in_flight`` calls at once (from as many threads); what became of each, in the records'
    order (not by key: two records may share one, as two wikis' pages of one path): the
    position it was recorded at, ``unchanged`` when it was imported before, or the refusal;
    None for one not sent. A record whose key an earlier one has is sent after that one is
    answered; the others do not wait on each other."""
    records: list[Record] = []
    outcomes: list[str | None] = []
    done = 0

    def answered(indexes: list[int], replies: list[Reply]) -> None:
        nonlocal done
        for index, reply in zip(indexes, replies, strict=True):
            outcomes[index] = _outcome(reply)
        done += len(indexes)
        advance(done)

    def read() -> Iterator[int]:
        for record in found:
            records.append(record)
            outcomes.append(None)
            yield len(records) - 1

    calls = _Calls(lambda indexes: send([records[index].command for index in indexes]), answered, in_flight)
    try:
        wave: Iterator[int] = read()
        while True:
            keys: set[str] = set()
            later: list[int] = []  # a key's next record, for the next wave
            batch: list[int] = []
            for index in wave:
                record = records[index]
                if record.command is None:
                    done += 1
                    advance(done)
                elif record.ref in keys:
                    later.append(index)
                else:
                    keys.add(record.ref)
                    batch.append(index)
                    if len(batch) == together:
                        calls.make(batch)
                        batch = []
            if batch:
                calls.make(batch)
            calls.wait()
            if not later:
                return outcomes
            wave = iter(later)
    finally:
        calls.close()  # a call that raised: the ones not begun are not made


class _Calls:
    """Calls of ``send`` in flight, at most so many, each answered in the order it was made."""

    def __init__(self, send: Callable[[list[int]], list[Reply]], answered: Callable[[list[int], list[Reply]], None],
                 in_flight: int) -> None:
        self.send = send
        self.answered = answered
        self.in_flight = in_flight
        self.pool = ThreadPoolExecutor(in_flight, thread_name_prefix="import")
        self.flying: deque[tuple[list[int], Future[list[Reply]]]] = deque()

    def make(self, indexes: list[int]) -> None:
        while len(self.flying) >= self.in_flight:
            self._answer()
        self.flying.append((indexes, self.pool.submit(self.send, indexes)))

    def wait(self) -> None:
        while self.flying:
            self._answer()

    def _answer(self) -> None:
        indexes, call = self.flying.popleft()
        self.answered(indexes, call.result())

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


def _outcome(reply: Reply) -> str | None:
    if reply.ok:
        return f"recorded at {reply.position}" if reply.position else "unchanged"
    return f"refused: {reply.error.code}: {reply.error.message}" if reply.error is not None else None
