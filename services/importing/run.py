"""The import itself: find the records under the paths, read each, and (unless it is a dry
run) send each importable one as its family's import command, as the importer."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from functools import partial
from pathlib import Path

import msgspec

from athenaeum.aggregates.rules import Invalid
from athenaeum.events.commands import Command
from athenaeum.events.imported import FILES_LIMIT, FINDINGS_LIMIT, ImportFinding
from athenaeum.events.page_commands import ImportPage
from athenaeum.events.quorum_commands import ImportProposal
from athenaeum.events.ratification_commands import ImportRatification
from athenaeum.events.thread import EntryKind
from athenaeum.events.thread_commands import ImportThread
from athenaeum.services.commands.replies import Reply
from athenaeum.services.importing import (
    folder_files, page_file, quorum_file, ratification_folder, task_tables, thread_folder, wiki_log,
)
from athenaeum.services.importing.discovery import PAGE_SUFFIX, Found, WikiFile, discover
from athenaeum.services.importing.quorum_file import OpenProposals
from athenaeum.services.importing.report import Log, Record

TOGETHER = 100  # records on one call of ``send``: one write to the ledger for them all
IN_FLIGHT = 2  # calls of ``send`` at once: one is written while the next is decided
PARALLEL_FROM = 200  # records from which a tree is read in worker processes: fewer do not pay for forking
CHUNK = 32  # records a worker reads on one request
MAX_RECORD_BYTES = 6 * 1024 * 1024  # of a record's files: its command goes in one message of at most 8 MiB


class TreeReading:
    """The records under some paths and in the original arbitrator's tables, read and judged
    in order as they are iterated (so the first are sent while the others are read: in
    ``processes`` worker processes, by default one a core for a tree of PARALLEL_FROM records
    or more); once all are, the unknown files and the wikis' logs."""

    def __init__(self, paths: Iterable[Path], postgres: str | None = None,
                 open_ones: OpenProposals = OpenProposals(None, None), processes: int | None = None) -> None:
        self.found = found = discover(paths)
        self.tasks = [] if postgres is None else [(task_tables.database(postgres), task)
                                                  for task in task_tables.read(postgres)]
        self.read: list[Record] = []  # those iterated so far
        self.unknown = list(found.unknown)
        self.logs: list[Log] = []  # once all are read
        self._jobs = [*(partial(_ratification, folder) for folder in found.ratifications),
                      *(partial(_thread, folder) for folder in found.threads),
                      *(partial(_page, file) for file in found.pages),
                      *(partial(_quorum, file, open_ones) for file in found.quorums)]
        if processes is None:
            processes = (os.cpu_count() or 1) if len(self._jobs) >= PARALLEL_FROM else 0
        fork = multiprocessing.get_context("fork")
        # The workers leave Ctrl-C to the importing process, which says what became of the import.
        self._pool = ProcessPoolExecutor(processes, mp_context=fork, initializer=signal.signal,
                                         initargs=(signal.SIGINT, signal.SIG_IGN)) if processes else None
        if self._pool is not None:
            # Forked now, with what this process has loaded (no worker loads it again), and
            # before its caller starts threads (a connection's): a fork while another thread
            # holds a lock leaves the lock held for good in the worker.
            self._pool.submit(int).result()

    def __len__(self) -> int:
        """How many records there are at most (a Markdown file in a wiki may be no page)."""
        return len(self._jobs) + len(self.tasks)

    def __iter__(self) -> Iterator[Record]:
        first: dict[str, Record] = {}  # by ref, each record of an id to import read first
        for record in self._records():
            if record.command is not None and first.setdefault(record.ref, record) is not record:
                record = _read_already(record, first[record.ref])
            self.read.append(record)
            yield record
        self.unknown.sort()
        self.logs = _logs(self.found, self.read)

    def _records(self) -> Iterator[Record]:
        try:
            read = map(_packed, self._jobs) if self._pool is None else self._pool.map(_packed, self._jobs,
                                                                                       chunksize=CHUNK)
            for record, carried, unknown in read:
                self.unknown += unknown
                if record is not None:
                    yield record._replace(command=_CARRIED[record.family].decode(carried)) if carried else record
        finally:
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
        for where, task in self.tasks:
            command = task.command
            yield Record("task", task.key, where, "TaskImported" if command else None,
                         command.status.value if command else None, list(task.findings), command)


Read = tuple[Record | None, list[Path]]  # a record, if the file or folder is one, and the unknown files in it
_COMMANDS = {"ratification": ImportRatification, "thread": ImportThread, "page": ImportPage, "quorum": ImportProposal}
_CARRIED = {family: msgspec.msgpack.Decoder(command) for family, command in _COMMANDS.items()}
_carry = msgspec.msgpack.Encoder().encode


def _packed(job: Callable[[], Read]) -> tuple[Record | None, bytes, list[Path]]:
    """What ``job`` reads, with its record's command apart, in MessagePack (empty: none). Pickled,
    a command's Structs are rebuilt field by field in Python, which cost the importing process
    more than sending them does."""
    record, unknown = job()
    if record is None or record.command is None:
        return record, b"", unknown
    return record._replace(command=None), _carry(record.command), unknown


def _ratification(folder: Path) -> Read:
    reading = ratification_folder.read(folder, str(folder))
    if reading is None:  # no ratification's: what it holds is unknown
        files, others = folder_files.listing(folder)
        return None, [folder / name for name in files + others]
    command = reading.command
    return (_sendable(Record("ratification", reading.key, folder, "RatificationImported" if command else None,
                             command.status.value if command else None, list(reading.findings), command), ""),
            [folder / name for name in reading.unknown])


def _thread(folder: Path) -> Read:
    thread = thread_folder.read(folder, str(folder))
    return (_sendable(Record("thread", thread.key, folder, "ThreadImported" if thread.command else None,
                             _thread_status(thread.command), list(thread.findings), thread.command), ""),
            [folder / name for name in thread.unknown])


def _page(file: WikiFile) -> Read:
    page = page_file.read(file.path, file.page, str(file.wiki))
    if page is None:
        return None, [file.path]
    return (_sendable(Record("page", page.key, file.wiki, "PageImported" if page.command else None,
                             page.command.lifecycle.value if page.command else None, list(page.findings),
                             page.command), file.page), [])


def _quorum(file: Path, open_ones: OpenProposals) -> Read:
    proposal = quorum_file.read(file, open_ones)
    command = proposal.command
    return (_sendable(Record("quorum", proposal.key, file.parent, "ProposalImported" if command else None,
                             command.status.value if command else None, list(proposal.findings), command),
                      file.name), [])


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
        checked.append(Log(log.path, list(wiki_log.check(log.path, in_wiki, _markdown(found, log)))))
    return checked


def _markdown(found: Found, log: WikiFile) -> set[str]:
    """Every Markdown file of the log's wiki, by its path inside it: the pages (canon or not),
    the log, and the threads' files."""
    threads = [folder for folder in found.threads if folder.is_relative_to(log.wiki)]
    files = [file.page for file in (*found.pages, log) if file.wiki == log.wiki]
    files += [(folder / name).relative_to(log.wiki).as_posix() for folder in threads
              for name in folder_files.files_under(folder)[0]]
    return {name for name in files if name.endswith(PAGE_SUFFIX)}


def _thread_status(command: ImportThread | None) -> str | None:
    """Where the thread stands after its last entry, as the rules would have it."""
    if command is None:
        return None
    if command.settled is not None:
        return command.settled.status.value
    if command.archival:
        return "archival"
    last = command.entries[-1].kind if command.entries else None
    return "awaiting-crystallization" if last is EntryKind.CLOSURE else "open"


def send_all(found: Iterable[Record], send: Callable[[list[Command]], list[Reply]],
             advance: Callable[[int], None] = lambda done: None, together: int = TOGETHER,
             in_flight: int = IN_FLIGHT) -> list[str | None]:
    """Each importable record sent as it is read, ``together`` on one call of ``send`` and
    ``in_flight`` calls at once (from as many threads); what became of each, in the records'
    order (not by key: two records may share one, as two wikis' pages of one path): the
    position it was recorded at (the same record sent again gets its first answer: the same
    position), ``unchanged`` when its content was imported before from elsewhere (another
    command, appending nothing), or the refusal; None for one not sent. A record whose key an earlier one has is sent after that one is
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


def _sendable(record: Record, file: str) -> Record:
    """``record``, unless the ledger would refuse its command for its size (its files, its
    findings, its bytes): then a finding at ``file``, and nothing to send. What a dry run says
    is what the import does."""
    command = record.command
    if command is None:
        return record
    files = getattr(command, "files", ())
    size = sum(len(each.content) for each in files) + len(getattr(command, "artifact", "") or "")
    too_much = [said for said, over in (
        (f"{len(files):,} files, more than the {FILES_LIMIT:,} a record holds", len(files) > FILES_LIMIT),
        (f"{len(record.findings):,} findings, more than the {FINDINGS_LIMIT:,} a record holds",
         len(record.findings) > FINDINGS_LIMIT),
        (f"{size:,} bytes of files, more than the {MAX_RECORD_BYTES:,} one message to the ledger holds",
         size > MAX_RECORD_BYTES)) if over]
    if not too_much:
        try:  # decoded as the ledger decodes what it is sent, each field within its limits
            _CARRIED[record.family].decode(_carry(command))
            return record
        except msgspec.ValidationError as error:
            too_much = [f"the ledger would refuse its command ({error})"]
    findings = [*record.findings, *(ImportFinding(code=Invalid.code, file=file, line=None,
                                                  message=f"{said}; nothing is imported") for said in too_much)]
    return record._replace(becomes=None, status=None, findings=findings, command=None)


def _read_already(record: Record, first: Record) -> Record:
    """A second record of an id (the same proposal in two files, a page in two wikis): not
    imported, as the ledger would refuse it, which a dry run says too."""
    said = (f"{record.ref} is read already from {first.folder}: a record of one id is imported once, "
            "from where it is read first; nothing is imported from here")
    return record._replace(becomes=None, status=None, command=None,
                           findings=[*record.findings, ImportFinding(code=Invalid.code, file="", line=None, message=said)])
