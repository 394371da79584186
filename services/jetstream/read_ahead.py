"""A stream's entries read by a process of its own (``read_ahead_worker``), batch after batch,
while the process that started it works through the last: an audit then spends none of its
time on NATS's protocol, which nats-py parses in Python (a thread would share the audit's hold
on the GIL)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Generator, Iterator

import msgspec
from eventsourcing.persistence import OperationalError

from athenaeum.services.jetstream.connection import Settings
from athenaeum.services.jetstream.entries import Entry
from athenaeum.services.runtime.frames import read_frame

BATCH = 1000
WORKER = "athenaeum.services.jetstream.read_ahead_worker"


class Order(msgspec.Struct, frozen=True):
    """What to read, and how to connect."""

    urls: list[str]
    timeout: float
    name: str
    key: str | None
    stream: str
    subject: str
    start: int


_decode = msgspec.msgpack.Decoder(list[Entry] | str).decode


def entries_from(settings: Settings, stream: str, subject: str, start: int) -> ReadAhead:
    """The entries on ``subject`` from position ``start`` on, read ahead by a process of its
    own, started at once."""
    order = Order(list(settings.urls), settings.timeout, f"{settings.name}:read-ahead",
                  str(settings.key) if settings.key else None, stream, subject, start)
    return ReadAhead(stream, subprocess.Popen([sys.executable, "-m", WORKER, msgspec.json.encode(order).decode()],
                                              stdout=subprocess.PIPE))


class ReadAhead(Iterator[Entry]):
    """The entries a worker process reads, in order. Its process runs from the start, so it is
    ready by the time its caller has worked through what it read itself; ``close()`` stops it,
    whether or not it was read to the end (as does reading past its last entry)."""

    def __init__(self, stream: str, process: subprocess.Popen[bytes]) -> None:
        self._stream = stream
        self._process = process
        self._entries = self._read()

    def __next__(self) -> Entry:
        return next(self._entries)

    def close(self) -> None:
        self._entries.close()
        self._stop()

    def _read(self) -> Generator[Entry, None, None]:
        process = self._process
        assert process.stdout is not None
        try:
            try:
                while (frame := read_frame(process.stdout)) is not None:
                    read = _decode(frame)
                    if isinstance(read, str):
                        raise OperationalError(read)
                    yield from read
            except EOFError:
                pass  # the worker died inside a frame: its status says so
            if process.wait() != 0:
                raise OperationalError(f"reading {self._stream} ahead ended early (status {process.returncode})")
        finally:
            self._stop()

    def _stop(self) -> None:
        self._process.kill()
        self._process.wait()
