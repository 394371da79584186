"""The states of the task family's two aggregates, folded from their events: the ``task-ids``
counter and each ``task:<n>``. Applies facts only: never raises."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from athenaeum.aggregates.state import AggregateState
from athenaeum.events import Event
from athenaeum.events.task import (
    ArbitrationRequested,
    BuildReported,
    EngineeringStarted,
    Finding,
    ImportedReview,
    ReviewConcluded,
    ReviewOutcome,
    ReviewPosted,
    ReviewStarted,
    RoleSessionEnded,
    Ruling,
    RulingPosted,
    TaskClaimed,
    TaskCompleted,
    TaskCreated,
    TaskFailed,
    TaskIdIssued,
    TaskImported,
    TaskIntegrated,
    TaskReset,
    TaskStatus,
    Trigger,
)


class TaskIds(AggregateState, tag="TaskIds"):
    last: int = 0


class ReviewedFinding(msgspec.Struct, frozen=True):
    role: str
    finding: Finding


class Task(AggregateState, tag="Task"):
    project_id: str
    review_cycle_budget: int
    status: TaskStatus = TaskStatus.PENDING
    epoch: int = 0
    review_cycle_count: int = 0  # the current cycle's number; cycles count from 0
    reviewed_roles: tuple[str, ...] = ()  # who has reviewed the current cycle
    reviews: tuple[ReviewPosted | ImportedReview, ...] = ()  # the current cycle's, for its classification
    last_reviewed: dict[int, ReviewedFinding] = {}  # the findings of the latest reviewed cycle
    next_finding_id: int = 1  # unique within the task, across epochs
    pending_trigger: Trigger | None = None
    contradiction: tuple[int, ...] = ()  # the reported pair, kept for the ruling
    ruled: tuple[Trigger, ...] = ()  # triggers ruled on in this epoch
    status_version: int = 0  # when the status last changed
    session_mark: int = 0  # when the last role session ended: a session spans from here
    imported_sha256: str | None = None  # an imported task's rows: importing them again adds nothing


def evolve(state: Task | TaskIds | None, event: Event) -> Task | TaskIds | None:
    """Either aggregate of the family, each from its own events: an event of the other leaves a
    state as it was."""
    if isinstance(event, TaskIdIssued):
        if isinstance(state, Task):
            return state
        return TaskIds(id=event.originator_id, version=event.originator_version, last=event.number)
    if isinstance(state, TaskIds):
        return state
    return _evolve_task(state, event)


def _evolve_task(state: Task | None, event: Event) -> Task | None:
    replace = msgspec.structs.replace
    match event:
        case TaskCreated():
            return Task(
                id=event.originator_id,
                version=event.originator_version,
                project_id=event.project_id,
                review_cycle_budget=event.review_cycle_budget,
                status_version=event.originator_version,
                session_mark=event.originator_version,
            )
        case TaskImported():
            return _imported(event)
    if state is None:
        return None  # history before the creation is not a task; the audit reports it
    match event:
        case TaskClaimed():
            return _moved(state, event, TaskStatus.CLAIMED)
        case EngineeringStarted():
            return _moved(state, event, TaskStatus.ENGINEERING)
        case BuildReported():
            return _moved(state, event, TaskStatus.BUILT)
        case ReviewStarted():
            return replace(_moved(state, event, TaskStatus.REVIEWING), reviewed_roles=(), reviews=())
        case ReviewPosted():
            last = max((f.id for f in event.findings), default=state.next_finding_id - 1)
            return replace(
                state,
                reviewed_roles=(*state.reviewed_roles, event.reviewer_role),
                reviews=(*state.reviews, event),
                next_finding_id=last + 1,
            )
        case ReviewConcluded():
            found = {f.id: ReviewedFinding(r.reviewer_role, f) for r in state.reviews for f in r.findings}
            state = replace(state, review_cycle_count=event.review_cycle_count, last_reviewed=found)
            # accept: a TaskCompleted follows; revise: revising, unless an arbitration follows
            return _moved(state, event, TaskStatus.REVISING) if event.outcome is ReviewOutcome.REVISE else state
        case ArbitrationRequested():
            moved = _moved(state, event, TaskStatus.ARBITRATING)
            return replace(moved, pending_trigger=event.trigger, contradiction=event.finding_ids)
        case RulingPosted():
            state = replace(state, pending_trigger=None, ruled=(*state.ruled, event.trigger))
            # rule: back to revising; approve and escalate: a TaskCompleted or TaskFailed follows
            return _moved(state, event, TaskStatus.REVISING) if event.ruling is Ruling.RULE else state
        case TaskCompleted():
            return _moved(state, event, TaskStatus.COMPLETED)
        case TaskIntegrated():
            return _moved(state, event, TaskStatus.INTEGRATED)
        case TaskFailed():
            return _moved(state, event, TaskStatus.FAILED)
        case RoleSessionEnded():
            return replace(state, session_mark=event.originator_version)
        case TaskReset():
            fresh = Task(
                id=state.id,
                version=state.version,
                project_id=state.project_id,
                review_cycle_budget=state.review_cycle_budget,
                epoch=event.epoch,
                next_finding_id=state.next_finding_id,
            )
            return _moved(fresh, event, TaskStatus.PENDING)
    return state


def _imported(event: TaskImported) -> Task:
    """Where the original's task stood: the reviews of its current cycle (while reviewing) and
    the findings of the latest reviewed cycle, which a contradiction or a ruling names: the last
    one its tables hold reviews of (the original may count a cycle before or after its reviews
    conclude), bar the current one while its reviews are still coming."""
    current = event.review_cycle_count
    reviewing = event.status is TaskStatus.REVIEWING
    reviews = tuple(r for r in event.reviews if r.cycle == current) if reviewing else ()
    latest = max((r.cycle for r in event.reviews if r.cycle < current or (r.cycle == current and not reviewing)),
                 default=None)
    last = {f.id: ReviewedFinding(r.reviewer_role, f) for r in event.reviews if r.cycle == latest for f in r.findings}
    issued = [f.id for r in event.reviews for f in r.findings]
    return Task(
        id=event.originator_id,
        version=event.originator_version,
        project_id=event.project_id,
        review_cycle_budget=event.review_cycle_budget,
        status=event.status,
        review_cycle_count=current,
        reviewed_roles=tuple(r.reviewer_role for r in reviews),
        reviews=reviews,
        last_reviewed=last,
        next_finding_id=max(issued, default=0) + 1,
        pending_trigger=event.pending_trigger,
        ruled=tuple(r.trigger for r in event.rulings),
        status_version=event.originator_version,
        session_mark=event.originator_version,
        imported_sha256=event.content_sha256,
    )


def status_set_by(events: Iterable[Event]) -> TaskStatus | None:
    """The status ``events`` (one command's) leave a task in, when they move it; None when
    they leave its status as it was. A retried command is answered as it was the first time."""
    probe = Task(id="", version=0, project_id="", review_cycle_budget=0)
    for event in events:
        probe = _evolve_task(probe, event) or probe
    return probe.status if probe.status_version else None


def _moved(state: Task, event: Event, status: TaskStatus) -> Task:
    return msgspec.structs.replace(state, status=status, status_version=event.originator_version)
