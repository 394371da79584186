"""Frames between a process and a worker process it started, over the worker's stdin and
stdout: a 4-byte big-endian length, then that many bytes."""

from __future__ import annotations

import struct
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO

_HEADER = struct.Struct(">I")


def write_frame(stream: IO[bytes], body: bytes) -> None:
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


class FrameWriter:
    """Frames written to ``stream`` in order by a thread of their own: their sender goes on while
    the process at the pipe's other end is still busy with the last, and waits only once
    ``waiting`` frames are queued behind the one being written."""

    def __init__(self, stream: IO[bytes], waiting: int, name: str) -> None:
        self._stream = stream
        self._waiting = waiting
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=name)
        self._writes: deque[Future[None]] = deque()

    def send(self, body: bytes) -> None:
        self._writes.append(self._thread.submit(write_frame, self._stream, body))
        while len(self._writes) > self._waiting:
            self._writes.popleft().result()

    def finish(self) -> None:
        """Every frame sent, written (a write's failure raised here); then no more."""
        while self._writes:
            self._writes.popleft().result()
        self._thread.shutdown()

    def abandon(self) -> None:
        """No more frames: those queued are dropped, the one being written ends whole."""
        self._thread.shutdown(cancel_futures=True)


def read_frame(stream: IO[bytes]) -> bytes | None:
    """The next frame's bytes; None at the end of the stream (the writer closed it), EOFError
    when it ends inside a frame (the writer died writing it)."""
    header = stream.read(_HEADER.size)
    if not header:
        return None
    size = _HEADER.unpack(header)[0] if len(header) == _HEADER.size else -1
    body = stream.read(size) if size >= 0 else b""
    if len(body) != size:
        raise EOFError("the stream ends inside a frame")
    return body
