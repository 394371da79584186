"""What is kept outside the ledger, checked against it as the audit replays it: digests it must
show at given positions (its anchors in the data dir and the read models, and any an auditor
kept from an earlier export or audit), and the snapshots, each of which must summarize an
event the ledger holds and hold the state that event's aggregate folds to there."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from eventsourcing.persistence import Mapper, StoredEvent

from athenaeum.aggregates.state import Snapshot
from athenaeum.events import family_of_id, natural_key
from athenaeum.services.audit.findings import Finding
from athenaeum.services.jetstream.entries import Entry
from athenaeum.services.jetstream.log import TOPIC
from athenaeum.services.jetstream.messages import Stored
from athenaeum.services.jetstream.positions import VERSION
from athenaeum.services.jetstream.snapshots import Summarized, digest
from athenaeum.services.jetstream.subjects import StreamSubjects


class Expected(NamedTuple):
    """The digest of the ledger's entries through ``position``, as ``source`` keeps it."""

    position: int
    sha256: str
    source: str


class Taken(NamedTuple):
    """A snapshot as stored, and the state it holds (None: it holds none that decodes)."""

    message: Stored
    aggregate: str
    version: int
    state: Any


class KeptOutside:
    def __init__(self, expected: Iterable[Expected] = (), snapshots: Iterable[Stored] = (),
                 mapper: Mapper[Any] | None = None) -> None:
        self.expected = sorted(expected)
        self.findings: list[Finding] = []
        self.snapshots: dict[tuple[str, int], list[Taken]] = {}
        for message in snapshots:
            taken = self._taken(message, mapper)
            if taken is not None:
                self.snapshots.setdefault((taken.aggregate, taken.version), []).append(taken)

    def passed(self, position: int, sha256: str) -> None:
        """The digest through ``position``, the entry just chained: every expectation up to it is settled."""
        while self.expected and self.expected[0].position <= position:
            expected = self.expected.pop(0)
            if expected.position < position:
                self._hard("anchor_mismatch", "ledger", "anchor", None, f"{expected.source} keeps the digest through "
                           f"position {expected.position}, and the ledger holds no entry there: entries were removed")
            elif expected.sha256 != sha256:
                self._hard("anchor_mismatch", "ledger", "anchor", position, f"the digest through position "
                           f"{position} is {sha256}, {expected.source} keeps {expected.sha256}: history up to it "
                           "was changed")

    def applied(self, entry: Entry, aggregate: str, version: int, state: Any) -> None:
        """The audit folded ``entry``, version ``version`` of ``aggregate``, to ``state``."""
        for taken in self.snapshots.pop((aggregate, version), []):
            said = Summarized.of(taken.message)
            where = _where(taken)
            if said is None or (said.seq, said.sha256) != (entry.position, digest(entry.payload)):
                self._snapshot("snapshot_unanchored", taken, entry.position, f"{where} does not name the event it "
                               f"summarizes, version {version} at position {entry.position}, as the ledger holds it")
            elif taken.state is not None and taken.state != state:
                self._snapshot("snapshot_differs", taken, entry.position, f"{where} holds another state than its "
                               f"events fold to at version {version}: a load from it would decide on that")

    def settled(self, last_position: int, cut: bool) -> list[Finding]:
        """The findings, once the audit read the ledger to ``last_position`` (``cut``: it
        stopped there by request, so what lies further is not looked at)."""
        if not cut:
            for expected in self.expected:
                self._hard("ledger_shorter", "ledger", "anchor", None, f"the ledger ends at position {last_position}, "
                           f"and {expected.source} keeps its digest through position {expected.position}: "
                           "history was cut, or the stream made again")
            for takens in self.snapshots.values():
                for taken in takens:
                    self._snapshot("snapshot_unanchored", taken, None, f"{_where(taken)} is of version "
                                   f"{taken.version} of {taken.aggregate!r}, which the ledger does not hold")
        return self.findings

    def _taken(self, message: Stored, mapper: Mapper[Any] | None) -> Taken | None:
        stream = message.subject.partition(".")[0]
        try:
            aggregate = str(StreamSubjects(stream).originator_id(message.subject, message.headers))
            version = int(message.headers[VERSION])
        except (KeyError, ValueError):
            self._hard("snapshot_unanchored", "ledger", message.subject, None,
                       f"snapshot {message.seq} of {stream} names no aggregate and version")
            return None
        try:
            snapshot = mapper.to_domain_event(StoredEvent(aggregate, version, message.headers.get(TOPIC, ""),
                                                          message.payload)) if mapper else None
            state = snapshot.restore() if isinstance(snapshot, Snapshot) else None
        except Exception as error:  # noqa: BLE001  whatever it holds, a finding and not a crash
            state, snapshot = None, error
        taken = Taken(message, aggregate, version, state)
        if mapper is not None and state is None:
            self._snapshot("snapshot_undecodable", taken, None,
                           f"{_where(taken)} holds no state to restore: {snapshot!r}")
        return taken

    def _snapshot(self, code: str, taken: Taken, position: int | None, message: str) -> None:
        self._hard(code, family_of_id(taken.aggregate), natural_key(taken.aggregate), position, message)

    def _hard(self, code: str, family: str, key: str, position: int | None, message: str) -> None:
        self.findings.append(Finding("HARD", code, family, key, position, message))


def _where(taken: Taken) -> str:
    return f"snapshot {taken.message.seq} of {taken.message.subject.partition('.')[0]}"


Reading = Callable[[int, int], list[Stored]]


def every_message(read: Reading, batch: int = 1000) -> list[Stored]:
    """Every message a ``select_messages`` reads, from the first on."""
    found: list[Stored] = []
    while True:
        messages = read(found[-1].seq + 1 if found else 1, batch)
        found += messages
        if len(messages) < batch:
            return found
