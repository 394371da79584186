"""The auditor: replays the ledger from position 0 without trusting the running services.

It rebuilds every aggregate, re-runs the rules on the state before each command and compares
what they append with what the ledger holds, checks every aggregate's versions run without a
gap, recomputes the running digest and checks each checkpoint against it, rebuilds every view
in memory and compares it with the live read models, and warns of smells that break no rule
(a vote still open past its deadline: a timer that never fired).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import msgspec
from eventsourcing.persistence import Notification

from athenaeum.aggregates import fleet, page_state, quorum_state, ratification_state, task_state, thread_state
from athenaeum.aggregates.application import AthenaeumApplication, MapperDeserialisationError
from athenaeum.aggregates.page_consensus import Member
from athenaeum.aggregates.rules import Context, RuleViolation
from athenaeum.aggregates.state import fold
from athenaeum.events import Event, UnknownEventTag, family_of_id, natural_key
from athenaeum.events.fleet import DORMANT_AFTER, FLEET_ID
from athenaeum.events.ledger import LedgerCheckpoint
from athenaeum.events.page import SOFT_CANONICAL_AGING
from athenaeum.projectors import fleet_activity
from athenaeum.projectors.views import project_all
from athenaeum.services.audit import checkpoints
from athenaeum.services.audit.rules import RECHECKS, Replayed
from athenaeum.services.commands.handler import utc_now
from athenaeum.services.audit.digest import Digest
from athenaeum.projectors.registry import PROJECTORS
from athenaeum.services.views.projection import PROJECTION
from athenaeum.services.views.read_models import ReadModelStore

READ_BATCH = 1000
# A timer meets its deadline a moment after it: only a deadline unmet for longer is a smell.
TIMER_GRACE = timedelta(minutes=1)
_FOLDS = {  # by the family an aggregate id carries; ratification topics carry none
    "ratification": fold(ratification_state.evolve),
    "quorum": fold(quorum_state.evolve),
    "thread": fold(thread_state.evolve),
    "page": fold(page_state.evolve),
    "task": fold(task_state.evolve),
    "task-ids": fold(task_state.evolve_ids),
    "fleet": fold(fleet.evolve),
    "ledger": checkpoints.project,
}


class Finding(msgspec.Struct):
    severity: str  # HARD, WARN, INFO
    code: str
    family: str
    id: str
    position: int | None
    message: str


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    events: int = 0
    aggregates: int = 0

    @property
    def summary(self) -> dict[str, int]:
        counts = {severity: sum(f.severity == severity for f in self.findings) for severity in ("HARD", "WARN", "INFO")}
        return counts | {"events": self.events, "aggregates": self.aggregates}


def family_of(event: Event) -> str:
    """The family an event belongs to: the module that declares it."""
    return type(event).__module__.rsplit(".", 1)[-1]


class Audit:
    def __init__(
        self,
        app: AthenaeumApplication,
        humans: frozenset[str] = frozenset(),
        live: ReadModelStore | None = None,
        clock: Callable[[], datetime] = utc_now,
        family: str | None = None,
        progress: Callable[[int], None] = lambda events: None,
        keep_history: bool = False,
    ) -> None:
        self.app = app
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
        self.group: list[tuple[int, Event]] = []
        self.last_position = 0
        self.last_time: datetime | None = None
        # Every aggregate's events, for those who render records from them (replay).
        self.history: dict[str, list[Event]] | None = {} if keep_history else None
        # Each agent's activity document after each change, by position: a command records
        # where it read the fleet's activity, and is re-checked against the fleet as it was there.
        self.activity: dict[str, tuple[list[int], list[dict[str, Any] | None]]] = {}

    def run(self, until_position: int | None = None, until_time: datetime | None = None) -> Report:
        """The ledger as of a position or a time. A command is atomic: one whose first event is
        within the cut is taken whole, even where its last event lies past the position."""
        for notification in self._notifications():
            if until_position is not None and notification.id > until_position:
                if not self.group or self._command_of(notification) != self.group[0][1].command:
                    break
            event = self._decoded(notification)
            if event is not None and until_time is not None and event.timestamp > until_time:
                break
            self.report.events += 1
            self.last_position = notification.id
            self.digest.update(notification.id, str(notification.originator_id), notification.originator_version,
                               notification.topic, notification.state)
            self.digests[self.digest.count] = (self.digest.sha256, notification.id)
            if event is None:
                continue
            self._check_version(notification, event)
            if self.group and self.group[0][1].command != event.command:
                self._settle()
            self.group.append((notification.id, event))
            if self.report.events % READ_BATCH == 0:
                self.progress(self.report.events)
        self._settle()
        # As of a position, "now" is when its last event was recorded, not the auditor's clock.
        now = until_time or (self.last_time if until_position is not None else None) or self.clock()
        self._check_overdue(now)
        if until_position is None and until_time is None:
            self._compare_views()
        self.report.aggregates = len(self.states)
        if self.family is not None:
            self.report.findings = [f for f in self.report.findings if f.family == self.family]
        return self.report

    def _notifications(self) -> Iterator[Notification]:
        start = 1
        while True:
            batch = self.app.recorder.select_notifications(start, READ_BATCH)
            yield from batch
            if len(batch) < READ_BATCH:
                return
            start = batch[-1].id + 1

    def _command_of(self, notification: Notification) -> tuple[str, datetime] | None:
        try:
            return self.app.mapper.to_domain_event(notification).command
        except (UnknownEventTag, MapperDeserialisationError):
            return None

    def _decoded(self, notification: Notification) -> Event | None:
        try:
            return self.app.mapper.to_domain_event(notification)
        except UnknownEventTag as unknown:
            self._hard("unknown_tag", notification, f"no event declares the tag {unknown.tag!r}")
        except MapperDeserialisationError as error:
            self._hard("undecodable", notification, str(error))
        return None

    def _check_version(self, notification: Notification, event: Event) -> None:
        expected = self.versions.get(event.originator_id, 0) + 1
        if event.originator_version != expected:
            self._hard("version_gap", notification,
                       f"version {event.originator_version} of {event.originator_id} follows {expected - 1}")
        self.versions[event.originator_id] = max(event.originator_version, self.versions.get(event.originator_id, 0))

    def _settle(self) -> None:
        """Re-check the command the pending group of events came from, then apply it."""
        group, self.group = self.group, []
        if not group:
            return
        position, primary = group[0]
        events = [event for _, event in group]
        if isinstance(primary, LedgerCheckpoint):
            self._check_checkpoint(position, primary)
        else:
            self._recheck(position, primary, events)
        for position, event in group:
            self._apply(position, event)

    def _recheck(self, position: int, primary: Event, events: list[Event]) -> None:
        rerun = RECHECKS.get(type(primary))
        where = f"{primary.tag} by {primary.actor} on {primary.originator_id}"
        if rerun is None:
            self._finding("HARD", "no_command", primary, position, f"{where}: no command begins with this event")
            return
        context = Context(actor=primary.actor, now=primary.timestamp, command_id=primary.command_id,
                          is_human=self._is_human)
        replayed = Replayed(self.states.get, not self.humans, self.members)
        try:
            produced = rerun(events, context, replayed)
        except RuleViolation as violation:
            self._finding("HARD", "rule_violation", primary, position,
                          f"{where}: the rules refuse it ({violation.code}: {violation.message})")
            return
        except Exception as error:  # noqa: BLE001  e.g. a command on an aggregate that does not exist
            self._finding("HARD", "rule_violation", primary, position, f"{where}: the rules cannot apply: {error!r}")
            return
        recorded = msgspec.to_builtins(events)
        if msgspec.to_builtins(produced) != recorded:
            tags = [e.tag for e in produced]
            self._finding("HARD", "not_as_the_rules_append", primary, position,
                          f"{where}: the rules append {tags}, the ledger holds {[e.tag for e in events]} "
                          "with other contents")

    def _check_checkpoint(self, position: int, checkpoint: LedgerCheckpoint) -> None:
        computed = self.digests.get(checkpoint.count)
        if computed != (checkpoint.sha256, checkpoint.position):
            at = f"the digest of the first {checkpoint.count} events"
            self._finding("HARD", "checkpoint_mismatch", checkpoint, position,
                          f"{at} is {computed[0] if computed else 'unknown'}, the checkpoint says {checkpoint.sha256}: "
                          "history before it was changed")
        self.digests = {count: value for count, value in self.digests.items() if count > checkpoint.count}

    def _apply(self, position: int, event: Event) -> None:
        folding = _FOLDS.get(family_of_id(event.originator_id), lambda state, events: state)  # an unknown family: nothing to fold
        self.states[event.originator_id] = folding(self.states.get(event.originator_id), [event])
        self.last_time = event.timestamp
        if self.history is not None:
            self.history.setdefault(event.originator_id, []).append(event)
        for change in project_all(PROJECTORS, event, lambda view, key: self.views.get((view, key))):
            if change.document is None:
                self.views.pop((change.view, change.key), None)
            else:
                self.views[(change.view, change.key)] = change.document
            if change.view == fleet_activity.VIEW:
                positions, documents = self.activity.setdefault(change.key, ([], []))
                positions.append(position)
                documents.append(change.document)

    def _is_human(self, principal: str) -> bool:
        roster = self.states.get(FLEET_ID)
        return principal in self.humans or (roster is not None and principal in roster.humans)

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
        """Deadlines that passed with nothing recorded: a timer that never fired."""
        for aggregate_id, state in self.states.items():
            family = family_of_id(aggregate_id)
            due = _overdue_at(family, state)
            if due is not None and due + TIMER_GRACE < now:
                self.report.findings.append(Finding("WARN", "deadline_missed", family, natural_key(aggregate_id),
                                                    None, f"due {due.isoformat()} and not met: a timer never fired"))
        roster = self.states.get(FLEET_ID)
        for member in self.members():
            due = member.last_active + DORMANT_AFTER
            if due + TIMER_GRACE < now and (roster is None or roster.dormant.get(member.name) != member.last_active):
                self.report.findings.append(Finding("WARN", "deadline_missed", "fleet", member.name, None,
                                                    f"idle since {member.last_active.isoformat()}, not marked dormant"))

    def _compare_views(self) -> None:
        if self.live is None:
            return
        live_position = self.live.position(PROJECTION) or 0
        if live_position != self.last_position:
            self.report.findings.append(Finding(
                "INFO", "views_not_compared", "views", "*", live_position,
                f"the live views are at position {live_position}, the ledger at {self.last_position}"))
            return
        live = {(view, key): document for view in self.live.views() for key, document in self.live.documents(view).items()}
        for view, key in sorted(set(live) | set(self.views)):
            if live.get((view, key)) != self.views.get((view, key)):
                self.report.findings.append(Finding("HARD", "view_differs", "views", f"{view}/{key}", live_position,
                                                    f"the live {view} document {key!r} is not what the ledger gives"))

    def _hard(self, code: str, notification: Notification, message: str) -> None:
        originator = str(notification.originator_id)
        self.report.findings.append(Finding("HARD", code, family_of_id(originator), natural_key(originator),
                                            notification.id, message))

    def _finding(self, severity: str, code: str, event: Event, position: int, message: str) -> None:
        self.report.findings.append(Finding(severity, code, family_of(event), event.key, position, message))


def _overdue_at(family: str, state: Any) -> datetime | None:
    """When an aggregate's own deadline was due, if it is still unmet."""
    if family == "ratification" and isinstance(state, ratification_state.Ratification):
        return state.expires_at if state.status is ratification_state.Status.OPEN else None
    if family == "quorum" and isinstance(state, quorum_state.Proposal):
        return state.deadline if state.status is quorum_state.Status.OPEN else None
    if family == "page" and isinstance(state, page_state.Page) and state.aged_rev < state.rev:
        return state.revised_at + SOFT_CANONICAL_AGING
    return None

