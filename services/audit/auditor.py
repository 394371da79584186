"""The auditor: replays the ledger from position 0 without trusting the running services.

It reads every entry of the stream. Each command is decided again, from the command and the
context stored with its events, on the state before it, and what that appends must be what the
ledger holds, byte for byte (``redecide``); an event no command appended, a marker that marks
nothing, a tracking record that is not one, or any other message, is a finding. It checks every
aggregate's versions run without a gap, and the ledger's positions too, recomputes the running
digest and checks each checkpoint against it, checks the ledger against what is kept outside it
(its anchors, the digests an auditor kept, its snapshots: ``kept_outside``), rebuilds every view
in memory and compares it with the live read models, and warns of smells that break no rule (a
vote still open past its deadline: a timer that never fired).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import msgspec

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.context import Member
from athenaeum.aggregates.families import fold_of
from athenaeum.events import Event, family_of_id, natural_key
from athenaeum.events.commands import CommandRecord
from athenaeum.events.fleet import FLEET_ID
from athenaeum.events.ledger import LedgerCheckpoint
from athenaeum.projectors import fleet_activity
from athenaeum.projectors.registry import PROJECTORS
from athenaeum.projectors.views import project_all
from athenaeum.services.audit.commands import Appended
from athenaeum.services.audit.digest import Digest
from athenaeum.services.audit.findings import Finding, Report
from athenaeum.services.audit.kept_outside import KeptOutside
from athenaeum.services.audit.proofs import Signatures, proof_problem
from athenaeum.services.audit.redecide import Knowledge, Problem, redecide
from athenaeum.services.audit.smells import overdue, views_compared
from athenaeum.services.commands.handler import utc_now
from athenaeum.services.jetstream.entries import Entry, Unreadable
from athenaeum.services.views.read_models import ReadModelStore

READ_BATCH = 1000


class Audit:
    def __init__(
        self,
        app: AthenaeumApplication,
        humans: frozenset[str] = frozenset(),
        live: ReadModelStore | None = None,
        clock: Callable[[], datetime] = utc_now,
        family: str | None = None,
        progress: Callable[[int], None] = lambda entries: None,
        keep_history: bool = False,
        outside: KeptOutside | None = None,
    ) -> None:
        """``humans``: the deployment's human principals, if known: then the audit also checks
        that what was decided as from a human was. ``outside``: what is kept outside the ledger
        to check it against (its anchors, its snapshots)."""
        self.app = app
        self.outside = outside or KeptOutside()
        self.ledger_id: str = app.recorder.log.ledger_id  # type: ignore[attr-defined]  # what signatures name
        self.humans = humans
        self.live = live
        self.clock = clock
        self.family = family
        self.progress = progress
        self.report = Report()
        self.states: dict[str, Any] = {}
        self.versions: dict[str, int] = {}
        self.views: dict[tuple[str, str], dict[str, Any]] = {}
        self.digest = Digest()
        self.digests: dict[int, tuple[str, int]] = {}  # count -> (digest, position), until a checkpoint checks it
        self.pending: Appended | None = None
        self.commands: set[str] = set()  # the keys of the commands read so far
        self.last_times: dict[str, datetime] = {}  # each aggregate's last event's time
        self.humans_unchecked = 0  # decisions recorded as a human's that no given humans could check
        self.last_position = 0  # of the last entry read
        self.last_event_position = 0  # of the last event: where the views reach
        self.last_time: datetime | None = None
        # Every aggregate's events, for those who render records from them (replay).
        self.history: dict[str, list[Event]] | None = {} if keep_history else None
        # Each agent's activity document after each change, by position: a command records
        # where it read the fleet's activity, and is decided again on the fleet as it was there.
        self.activity: dict[str, tuple[list[int], list[dict[str, Any] | None]]] = {}
        self.signatures = Signatures()
        self.known = Knowledge(self.states.get, self.members, self._is_human, bool(humans) if humans else None)

    def run(self, until_position: int | None = None, until_time: datetime | None = None) -> Report:
        """The ledger as of a position or a time. A command is atomic: one whose first event is
        within the cut is taken whole, even where its last event lies past the position."""
        with self.signatures:
            for entry in self._entries():
                continuing = self.pending is not None and self.pending.continued_by(entry)
                if until_position is not None and entry.position > until_position and not continuing:
                    break
                event = self._decoded(entry) if entry.kind == "event" else None
                if event is not None and until_time is not None and event.timestamp > until_time and not continuing:
                    break
                self.report.entries += 1
                self._check_position(entry)
                self.last_position = entry.position
                self.digest.update(entry)
                self.digests[self.digest.count] = (self.digest.sha256, entry.position)
                self.outside.passed(entry.position, self.digest.sha256)
                self._take(entry, event, continuing)
                if self.report.entries % READ_BATCH == 0:
                    self.progress(self.report.entries)
            self._settle()
            self._report_signatures()
        cut = until_position is not None or until_time is not None
        self.report.findings += self.outside.settled(self.last_position, cut)
        # As of a position, "now" is when its last event was recorded, not the auditor's clock.
        now = until_time or (self.last_time if until_position is not None else None) or self.clock()
        self._check_overdue(now)
        if self.humans_unchecked:
            self.report.findings.append(Finding(
                "INFO", "humans_unchecked", "fleet", "*", None, f"{self.humans_unchecked} decisions were recorded as a "
                "human's by a principal the fleet roster does not name human: give --humans to check them"))
        if until_position is None and until_time is None:
            self._compare_views()
        self.report.aggregates = len(self.states)
        if self.family is not None:
            self.report.findings = [f for f in self.report.findings if f.family == self.family]
        return self.report

    def _entries(self) -> Iterator[Entry]:
        """Every entry, in order; the next batch is read while this one is audited."""
        read = self.app.recorder.select_messages  # type: ignore[attr-defined]
        with ThreadPoolExecutor(1, thread_name_prefix="athenaeum-audit-read") as reader:
            batch = read(1, READ_BATCH)
            while True:
                ahead = reader.submit(read, batch[-1].seq + 1, READ_BATCH) if len(batch) == READ_BATCH else None
                yield from map(Entry.of, batch)
                if ahead is None:
                    return
                batch = ahead.result()

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
            event = entry.event(self.app.mapper)
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
        problem = appended.record if isinstance(appended.record, Problem) else None
        if appended.record is None:
            problem = Problem("incomplete_command", "the marker with the command's record is missing after its events")
        if isinstance(appended.record, CommandRecord):
            events = [event for _, event in appended.events]
            if None in events or len(events) != appended.record.events:
                problem = Problem("incomplete_command", f"the command's record names {appended.record.events} events, "
                                                        f"{len(events)} follow it that decode")
            else:
                problem = self._out_of_place(appended.record, appended.first) or redecide(
                    appended.record, appended.token, events,  # type: ignore[arg-type]
                    [entry.payload for entry, _ in appended.events], self.known)
            problem = problem or proof_problem(appended.record, self.states.get(FLEET_ID), self.ledger_id,
                                               self.signatures.verify_for(appended.record, appended.first))
            by_deployment = appended.record.proof is not None and appended.record.proof.by == "service"
            if appended.record.actor_is_human and not by_deployment and self._is_human(appended.record.actor) is None:
                self.humans_unchecked += 1
        if problem is not None:
            self._finding(problem.severity, problem.code, appended.first, problem.message)
        for entry, event in appended.events:
            self._apply_entry(entry, event)

    def _report_signatures(self) -> None:
        for entry, problem in self.signatures.problems():
            self._finding(problem.severity, problem.code, entry, problem.message)

    def _out_of_place(self, record: CommandRecord, first: Entry) -> Problem | None:
        """What the record says of its context that the ledger itself contradicts: a time before
        its aggregate's last event, or the fleet read at a position the command had not reached."""
        originator = first.originator()
        before = self.last_times.get(originator[0]) if originator else None
        if before is not None and record.at < before:
            return Problem("time_travel", f"{record.route} is stamped {record.at.isoformat()}, before its "
                                          f"aggregate's last event ({before.isoformat()})")
        if record.as_of_position is not None and not 0 <= record.as_of_position < first.position:
            return Problem("context_differs", f"{record.route} says it read the fleet at position "
                                              f"{record.as_of_position}, which it had not reached")
        return None

    def _apply_entry(self, entry: Entry, event: Event | None) -> None:
        if event is None:
            return
        if isinstance(event, LedgerCheckpoint):
            self._check_checkpoint(entry, event)
        self._apply(entry.position, event)
        self.outside.applied(entry, event.originator_id, event.originator_version, self.states.get(event.originator_id))

    def _check_checkpoint(self, entry: Entry, checkpoint: LedgerCheckpoint) -> None:
        computed = self.digests.get(checkpoint.count)
        if computed != (checkpoint.sha256, checkpoint.position):
            at = f"the digest of the first {checkpoint.count} entries"
            self._hard("checkpoint_mismatch", entry, f"{at} is {computed[0] if computed else 'unknown'}, the "
                                                     f"checkpoint says {checkpoint.sha256}: history before it was changed")
        self.digests = {count: value for count, value in self.digests.items() if count > checkpoint.count}

    def _apply(self, position: int, event: Event) -> None:
        self.report.events += 1
        self.states[event.originator_id] = fold_of(event.originator_id)(self.states.get(event.originator_id), [event])
        self.last_time = self.last_times[event.originator_id] = event.timestamp
        self.last_event_position = position
        if self.history is not None:
            self.history.setdefault(event.originator_id, []).append(event)
        try:
            changes = project_all(PROJECTORS, event, lambda view, key: self.views.get((view, key)))
        except Exception as error:  # noqa: BLE001  as the projector service, which skips it too
            self.report.findings.append(Finding("HARD", "projector_failed", family_of_id(event.originator_id),
                                                event.key, position, f"a view cannot take this {event.tag}: {error!r}"))
            changes = []
        for change in changes:
            if change.document is None:
                self.views.pop((change.view, change.key), None)
            else:
                self.views[(change.view, change.key)] = change.document
            if change.view == fleet_activity.VIEW:
                positions, documents = self.activity.setdefault(change.key, ([], []))
                positions.append(position)
                documents.append(change.document)

    def _is_human(self, principal: str) -> bool | None:
        """Whether ``principal`` is human: a configured human or one the roster registers as
        such; None when it is neither and no configured humans were given to tell."""
        roster = self.states.get(FLEET_ID)
        if principal in self.humans or (roster is not None and principal in roster.humans):
            return True
        return False if self.humans or (roster is not None and roster.humans) else None

    def members(self, as_of: int | None = None) -> list[Member]:
        """The fleet's agents as the views had them after position ``as_of`` (by default, now)."""
        members = []
        for name in sorted(self.activity):
            positions, documents = self.activity[name]
            at = len(positions) if as_of is None else bisect.bisect_right(positions, as_of)
            agent = documents[at - 1] if at else None
            if agent is not None and not agent["human"]:
                members.append(msgspec.convert(agent, Member))
        return members

    def _check_overdue(self, now: datetime) -> None:
        self.report.findings += overdue(self.states, self.members(), now)

    def _compare_views(self) -> None:
        if self.live is not None:
            self.report.findings += views_compared(self.live, self.views, self.last_event_position)

    def _hard(self, code: str, entry: Entry, message: str) -> None:
        self._finding("HARD", code, entry, message)

    def _finding(self, severity: str, code: str, entry: Entry, message: str) -> None:
        originator = entry.originator()
        family, key = (family_of_id(originator[0]), natural_key(originator[0])) if originator else ("ledger", entry.subject)
        self.report.findings.append(Finding(severity, code, family, key, entry.position, message))
