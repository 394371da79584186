"""What a log knows of where things are in its stream, learnt from its own appends and reads.

Appends expect the sequences of ``heads``; a stale one costs one retry, never a wrong write.
``sequences`` maps an aggregate version to its stream sequence (every head seen, and the
event a snapshot was taken at), so a cache fast-forward or a load after a snapshot reads only
the tail. Both are touched only from the loop thread, so they need no lock.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, NamedTuple, TypeVar

from athenaeum.services.jetstream.messages import Stored

K = TypeVar("K")
V = TypeVar("V")

VERSION = "Athenaeum-Version"
TRACKING = "Athenaeum-Tracking"


class Head(NamedTuple):
    """The newest known message of a subject: its version (or tracking id) and sequence."""

    position: int
    seq: int

    @classmethod
    def of(cls, message: Stored) -> Head:
        return cls(position_of(message.headers), message.seq)


def position_of(headers: dict[str, str]) -> int:
    """An event's version, or a tracking record's notification id."""
    return int(headers.get(VERSION) or headers[TRACKING])


class LRU(Generic[K, V]):
    """A bounded map that forgets the least recently used entries."""

    def __init__(self, maxsize: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._maxsize = maxsize

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self._maxsize:
            self._items.popitem(last=False)

    def forget(self, key: K) -> None:
        self._items.pop(key, None)


class Positions:
    def __init__(self, maxsize: int = 100_000) -> None:
        self.heads: LRU[str, Head] = LRU(maxsize)
        self.sequences: LRU[tuple[str, int], int] = LRU(maxsize)

    def remember(self, subject: str, head: Head) -> None:
        known = self.heads.get(subject)
        # A read answered before a concurrent append landed must not move the head back.
        if known is None or head.seq > known.seq:
            self.heads.put(subject, head)
        self.sequences.put((subject, head.position), head.seq)

    def start_after(self, subject: str, version: int | None) -> int:
        """The first stream sequence that can hold a version after ``version``."""
        if version is None:
            return 1
        head = self.heads.get(subject)
        if head is not None and head.position <= version:
            return head.seq + 1
        return (self.sequences.get((subject, version)) or 0) + 1
