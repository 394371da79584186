"""The auditor: replays the ledger from position 0 without trusting the running services.

It reads every entry of the stream. Each command is decided again, from the command and the
context stored with its events, on the state before it, and what that appends must be what the
ledger holds, byte for byte (``redecide``); an event no command appended, a marker that marks
nothing, a tracking record that is not one, or any other message, is a finding. It checks every
aggregate's versions run without a gap, and the ledger's positions too, recomputes the running
digest and checks each checkpoint against it, checks the ledger against what is kept outside it
(its anchors, the digests an auditor kept, its snapshots: ``kept_outside``), rebuilds every view
in memory and compares it with the live read models and the views bucket, and warns of smells
that break no rule (a vote still open past its deadline: a timer that never fired). Whatever
fails on the way, on history forged to hold anything, is a finding at its entry, not the end.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from typing import Any, NamedTuple

from eventsourcing.persistence import Mapper

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.context import Member
from athenaeum.aggregates.families import fold_of
from athenaeum.events import Event
from athenaeum.events.ledger import LedgerCheckpoint
from athenaeum.services.audit.bucket_check import BucketCheck
from athenaeum.services.audit.commands import Appended
from athenaeum.services.audit.decisions import Decisions
from athenaeum.services.audit.digest import Digest
from athenaeum.services.audit.findings import FailuresReported, Finding, Report, found_at
from athenaeum.services.audit.imported import imported_findings
from athenaeum.services.audit.kept_outside import KeptOutside
from athenaeum.services.audit.smells import overdue, views_compared
from athenaeum.services.audit.views_rebuilt import RebuiltViews
from athenaeum.services.commands.handler import utc_now
from athenaeum.services.jetstream.entries import Entry, Unreadable
from athenaeum.services.views.read_models import ReadModelStore

READ_BATCH = 1000


class Reading(NamedTuple):
    """Where an audit reads a ledger: its entries in order, how its events decode, and its id
    (which signatures name). A live ledger's by default; an export's, offline (``export.verify``)."""

    entries: Callable[[], Iterator[Entry]]
    mapper: Mapper[Any]
    ledger_id: str


def reading_of(app: AthenaeumApplication) -> Reading:
    """The ledger ``app`` stores: its first batch read here, the rest (of a ledger of more) by a
    process of its own, ahead of the audit."""

    def entries() -> Iterator[Entry]:
        recorder = app.recorder
        first = recorder.select_messages(1, READ_BATCH)  # type: ignore[attr-defined]
        if len(first) < READ_BATCH:
            yield from map(Entry.of, first)
            return
        # Started before the first batch is audited: the process starts while the audit works.
        with closing(recorder.read_ahead(first[-1].seq + 1)) as ahead:  # type: ignore[attr-defined]
            yield from map(Entry.of, first)
            yield from ahead

    return Reading(entries, app.mapper, app.recorder.log.ledger_id)  # type: ignore[attr-defined]


@contextmanager
def _uncollected() -> Iterator[None]:
    """No collection of cycles while an audit runs. It allocates millions of objects that live
    as long as it does (every aggregate's state, every view, every command's key), which each
    collection traverses again: on 200,000 events, a fifth of the audit's time at Python's
    default thresholds, a sixth with the youngest generation collected 70 times less often.
    An audit makes no cycles of note (its findings are text), and only the commands that run
    one (audit, replay, verify-export) run it: collections resume, as before, once it ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Audit:
    def __init__(
        self,
        app: AthenaeumApplication | None,
        humans: frozenset[str] = frozenset(),
        live: ReadModelStore | None = None,
        clock: Callable[[], datetime] = utc_now,
        family: str | None = None,
        progress: Callable[[int], None] = lambda entries: None,
        keep_history: bool = False,
        outside: KeptOutside | None = None,
        bucket: BucketCheck | None = None,
        reading: Reading | None = None,
    ) -> None:
        """``humans``: the deployment's human principals, if known: then the audit also checks
        that what was decided as from a human was. ``outside``: what is kept outside the ledger
        to check it against (its anchors, its snapshots). ``bucket``: the views bucket, read
        before the replay, to compare with the views it rebuilds."""
        if reading is None:
            assert app is not None, "an audit reads an application's ledger, or the one its reading gives"
            reading = reading_of(app)
        self.reading = reading
        self.outside = outside or KeptOutside()
        self.live = live
        self.clock = clock
        self.family = family
        self.progress = progress
        self.report = Report()
        self.states: dict[str, Any] = {}
        self.versions: dict[str, int] = {}
        self.rebuilt = RebuiltViews(bucket)
        self.views = self.rebuilt.documents
        self.bucket = bucket
        self.digest = Digest()
        self.digests: dict[int, tuple[str, int]] = {}  # count -> (digest, position), until a checkpoint checks it
        self.pending: Appended | None = None
        self.commands: set[str] = set()  # the keys of the commands read so far
        self.last_position = 0  # of the last entry read
        self.last_event_position = 0  # of the last event: where the views reach
        self.last_time: datetime | None = None
        # Every aggregate's events, for those who render records from them (replay).
        self.history: dict[str, list[Event]] | None = {} if keep_history else None
        self.decisions = Decisions(self.states, self.members, humans, reading.ledger_id)

    def run(self, until_position: int | None = None, until_time: datetime | None = None) -> Report:
        """The ledger as of a position or a time. A command is atomic: one whose first event is
        within the cut is taken whole, even where its last event lies past the position."""
        with self.decisions.signatures, _uncollected():
            for entry in self.reading.entries():
                continuing = self.pending is not None and self.pending.continued_by(entry)
                if until_position is not None and entry.position > until_position and not continuing:
                    break
                event = None
                if entry.kind == "event":
                    with self._failures_reported("decoding it", entry):
                        event = self._decoded(entry)
                if event is not None and until_time is not None and event.timestamp > until_time and not continuing:
                    break
                self.report.entries += 1
                self._check_position(entry)
                self.last_position = entry.position
                self.digest.update(entry)
                self.digests[self.digest.count] = (self.digest.sha256, entry.position)
                self.outside.passed(entry.position, self.digest.sha256)
                with self._failures_reported("auditing it", entry):
                    self._take(entry, event, continuing)
                if self.report.entries % READ_BATCH == 0:
                    self.progress(self.report.entries)
            self._settle()
            with self._failures_reported("checking the signatures"):
                self.report.findings += self.decisions.findings()
        cut = until_position is not None or until_time is not None
        with self._failures_reported("checking what is kept outside the ledger"):
            self.report.findings += self.outside.settled(self.last_position, cut)
        # As of a position, "now" is when its last event was recorded, not the auditor's clock.
        now = until_time or (self.last_time if until_position is not None else None) or self.clock()
        with self._failures_reported("looking for deadlines missed"):
            self._check_overdue(now)
        if until_position is None and until_time is None:
            self._compare_views()
        self.report.aggregates = len(self.states)
        if self.family is not None:
            self.report.findings = [f for f in self.report.findings if f.family == self.family]
        return self.report

    def _check_position(self, entry: Entry) -> None:
        """Positions run from 1 without a hole: nothing is ever removed from the ledger."""
        if entry.position != self.last_position + 1:
            gap = range(self.last_position + 1, entry.position)
            where = f"position {gap[0]}" if len(gap) == 1 else f"positions {gap[0]}-{gap[-1]}"
            self.report.findings.append(Finding("HARD", "entries_missing", "ledger", "positions", entry.position,
                                                f"the ledger holds nothing at {where}: entries were removed"))

    def _take(self, entry: Entry, event: Event | None, continuing: bool) -> None:
        """One entry, in its place: the next of the command being read, the first of another,
        or something no command explains."""
        if continuing and self.pending is not None:
            self.pending.take(entry, event)
        elif entry.kind == "event":
            self._settle()
            if entry.carries_command:
                if entry.command in self.commands:
                    self._hard("command_repeated", entry, "a command whose key an earlier command already has: "
                                                          "applied twice")
                self.commands.add(entry.command or "")
                self.pending = Appended.starting(entry, event)
            elif event is not None:  # (one that does not even decode is reported as such)
                self._hard("no_command", entry, "an event that no command appended (it carries none, nor follows one)")
                self._apply_entry(entry, event)
        else:
            self._settle()
            self._check_other(entry)
        if self.pending is not None and self.pending.complete:
            self._settle()

    def _check_other(self, entry: Entry) -> None:
        if entry.kind == "marker":
            self._hard("stray_marker", entry, "a message on a marker subject that marks no command just before it")
        elif entry.kind == "tracking" and not entry.well_formed_tracking:
            self._hard("malformed_tracking", entry, "a message on a tracking subject that is not a tracking record")
        elif entry.kind == "other":
            self._hard("unknown_subject", entry, f"a message on {entry.subject}, which no part of the ledger uses")

    def _decoded(self, entry: Entry) -> Event | None:
        try:
            event = entry.event(self.reading.mapper)
        except Unreadable as unreadable:
            self._hard(unreadable.code, entry, unreadable.message)
            return None
        self._check_version(entry, event)
        return event

    def _check_version(self, entry: Entry, event: Event) -> None:
        expected = self.versions.get(event.originator_id, 0) + 1
        if event.originator_version != expected:
            self._hard("version_gap", entry,
                       f"version {event.originator_version} of {event.originator_id} follows {expected - 1}")
        self.versions[event.originator_id] = max(event.originator_version, self.versions.get(event.originator_id, 0))

    def _settle(self) -> None:
        """Decide again the command whose entries were read, then apply its events."""
        appended, self.pending = self.pending, None
        if appended is None:
            return
        with self._failures_reported("deciding its command again", appended.first):
            problem = self.decisions.problem(appended)
            if problem is not None:
                self._finding(problem.severity, problem.code, appended.first, problem.message)
        for entry, event in appended.events:
            self._apply_entry(entry, event)

    def _apply_entry(self, entry: Entry, event: Event | None) -> None:
        if event is None:
            return
        if isinstance(event, LedgerCheckpoint):
            self._check_checkpoint(entry, event)
        self._apply(entry, event)
        with self._failures_reported("comparing its snapshots", entry):
            self.outside.applied(entry, event.originator_id, event.originator_version, self.states.get(event.originator_id))

    def _check_checkpoint(self, entry: Entry, checkpoint: LedgerCheckpoint) -> None:
        computed = self.digests.get(checkpoint.count)
        if computed != (checkpoint.sha256, checkpoint.position):
            at = f"the digest of the first {checkpoint.count} entries"
            self._hard("checkpoint_mismatch", entry, f"{at} is {computed[0] if computed else 'unknown'}, the "
                                                     f"checkpoint says {checkpoint.sha256}: history before it was changed")
        self.digests = {count: value for count, value in self.digests.items() if count > checkpoint.count}

    def _apply(self, entry: Entry, event: Event) -> None:
        self.report.events += 1
        with self._failures_reported(f"folding its {event.tag}", entry):
            self.states[event.originator_id] = fold_of(event.originator_id)(self.states.get(event.originator_id), [event])
        self.last_time = self.decisions.last_times[event.originator_id] = event.timestamp
        self.last_event_position = entry.position
        if self.history is not None:
            self.history.setdefault(event.originator_id, []).append(event)
        if (failed := self.rebuilt.apply(entry.position, event)) is not None:
            self.report.findings.append(failed)
        self.report.findings += imported_findings(entry, event)

    def members(self, as_of: int | None = None) -> list[Member]:
        """The fleet's agents as the views had them after position ``as_of`` (by default, now)."""
        return self.rebuilt.members(as_of)

    def _check_overdue(self, now: datetime) -> None:
        self.report.findings += overdue(self.states, self.members(), now)

    def _compare_views(self) -> None:
        if self.live is not None:
            with self._failures_reported("comparing the live views"):
                self.report.findings += views_compared(self.live, self.views, self.last_event_position)
        if self.bucket is not None:
            with self._failures_reported("comparing the views bucket"):
                self.report.findings += self.bucket.findings(self.views, self.last_position)

    def _failures_reported(self, doing: str, entry: Entry | None = None) -> FailuresReported:
        """Whatever fails while the audit is ``doing`` something is a HARD finding, and it goes on."""
        return FailuresReported(self.report.findings, doing, entry)

    def _hard(self, code: str, entry: Entry, message: str) -> None:
        self._finding("HARD", code, entry, message)

    def _finding(self, severity: str, code: str, entry: Entry, message: str) -> None:
        self.report.findings.append(found_at(entry, severity, code, message))
