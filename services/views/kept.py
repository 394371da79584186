"""The view documents a projector keeps in memory: those it last read or wrote, bounded by the
size of their JSON (a thread's document grows with its entries), the least recently used
forgotten first."""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from athenaeum.projectors.views import Document

BUDGET = 32 * 1024 * 1024  # bytes of JSON
ENTRY = 64  # bytes counted for each entry besides its JSON, so that absent documents count too


class Kept(NamedTuple):
    document: Document | None  # None: known to be absent
    size: int


class KeptDocuments:
    def __init__(self, budget: int = BUDGET) -> None:
        self.budget = budget
        self._kept: OrderedDict[tuple[str, str], Kept] = OrderedDict()
        self._size = 0

    def get(self, view: str, key: str) -> Kept | None:
        kept = self._kept.get((view, key))
        if kept is not None:
            self._kept.move_to_end((view, key))
        return kept

    def put(self, view: str, key: str, document: Document | None, size: int) -> None:
        size += ENTRY
        previous = self._kept.pop((view, key), None)
        self._size += size - (previous.size if previous is not None else 0)
        self._kept[(view, key)] = Kept(document, size)
        while self._size > self.budget and self._kept:
            self._size -= self._kept.popitem(last=False)[1].size

    def clear(self) -> None:
        self._kept.clear()
        self._size = 0
