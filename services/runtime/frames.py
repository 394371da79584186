"""Frames between a process and a worker process it started, over the worker's stdin and
stdout: a 4-byte big-endian length, then that many bytes."""

from __future__ import annotations

import struct
from typing import IO

_HEADER = struct.Struct(">I")


def write_frame(stream: IO[bytes], body: bytes) -> None:
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


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
