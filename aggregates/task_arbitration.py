"""Arbitration of a task (PROTOCOLS.md section 5): a contradiction the engineer reports, and
the arbitrator's ruling, checked in the order the protocol fixes, with its addendum."""

from __future__ import annotations

from athenaeum.aggregates.rules import Context, Invalid, Stamp
from athenaeum.aggregates.task_checks import (
    ESCALATION_DETAIL,
    MARKDOWN_LIMIT,
    ArbitrationExists,
    FindingMismatch,
    NotArbitrating,
    TriggerMismatch,
    in_project,
    one_of,
    require_status,
)
from athenaeum.aggregates.task_state import Task
from athenaeum.events import Event
from athenaeum.events.task import (
    ArbitrationRequested,
    ContradictionReported,
    FailureReason,
    Resolution,
    Ruling,
    RulingPosted,
    TaskCompleted,
    TaskFailed,
    TaskStatus,
    Trigger,
)
from athenaeum.events.task_commands import (
    LONG_TEXT_LIMIT,
    PostRuling,
    ResolutionInput,
    TransitionPayload,
    TransitionTask,
)


def report_contradiction(task: Task, command: TransitionTask, context: Context) -> list[Event]:
    """The engineer's ``arbitrating`` transition: two findings of the latest reviewed cycle that
    cannot both be addressed. Only from engineering (409); the budget's arbitration is the
    ledger's to request when a cycle is revised, never a client's (400)."""
    require_status(task, "arbitrating", TaskStatus.ENGINEERING)
    payload = command.payload
    if payload.trigger is Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED:
        raise Invalid("engineering→arbitrating requires payload.trigger='reviewer_contradiction'", "trigger")
    finding_ids, notes = reported(payload)
    if Trigger.REVIEWER_CONTRADICTION in task.ruled:
        # One ruling per trigger and epoch: a second report could never be ruled, only stuck.
        raise ArbitrationExists(f"arbitration already exists for task {task.key} with trigger "
                                "'reviewer_contradiction' in this epoch", "findingIds")
    if len(finding_ids) != 2 or finding_ids[0] == finding_ids[1]:
        raise Invalid("findingIds names two different findings", "findingIds")
    missing = [i for i in finding_ids if i not in task.last_reviewed]
    if missing:
        raise Invalid(f"findings {missing} are not in the latest reviewed cycle of task {task.key}", "findingIds")
    stamp = Stamp(task.id, task.version, context)
    pair = (finding_ids[0], finding_ids[1])
    return [stamp(ContradictionReported, finding_ids=pair, notes=notes),
            stamp(ArbitrationRequested, trigger=Trigger.REVIEWER_CONTRADICTION, finding_ids=pair)]


def reported(payload: TransitionPayload) -> tuple[list[int], str]:
    """The contradicting ids and the notes, nested as the original sends them or flat."""
    nested = payload.contradiction
    if nested is not None and (payload.finding_ids is not None or payload.notes):
        raise Invalid("a contradiction is payload.contradiction or payload.findingIds and notes, not both",
                      "contradiction")
    finding_ids, notes = (nested.finding_ids, nested.notes) if nested else (payload.finding_ids, payload.notes)
    if finding_ids is None and payload.trigger is None:
        raise Invalid(f"payload.trigger is required and must be one of: {one_of(Trigger)}", "trigger")
    if finding_ids is None:
        raise Invalid("payload.contradiction.findingIds names the two contradicting findings", "findingIds")
    return finding_ids, notes


def post_ruling(state: Task | None, command: PostRuling, context: Context) -> list[Event]:
    """Checked in PROTOCOLS.md's order: the body (400s; its trigger and ruling are in their enums
    once decoded), the task (404), its state (409s). The messages are the original's."""
    trigger, ruling, markdown = command.trigger, command.ruling, command.ruling_markdown
    resolution = command.contradiction_resolution
    if not markdown:
        raise Invalid("rulingMarkdown must be a non-empty string", "rulingMarkdown")
    if len(markdown) > MARKDOWN_LIMIT:
        raise Invalid(f"rulingMarkdown exceeds maximum length of {MARKDOWN_LIMIT}", "rulingMarkdown")
    if ruling is Ruling.RULE and trigger is not Trigger.REVIEWER_CONTRADICTION:
        raise Invalid("ruling 'rule' is only valid for trigger 'reviewer_contradiction'", "ruling")
    if ruling is Ruling.RULE:
        require_resolution(resolution)
    elif resolution is not None:
        raise Invalid("contradictionResolution must be absent when ruling is not 'rule'", "contradictionResolution")
    task = in_project(state, command.project_id)
    if task.status is not TaskStatus.ARBITRATING:
        raise NotArbitrating(f"task {task.key} is not in 'arbitrating' (current: '{task.status.value}')")
    if trigger is not task.pending_trigger:
        pending = task.pending_trigger.value if task.pending_trigger else None
        raise TriggerMismatch(f"the pending trigger of task {task.key} is {pending}, not {trigger.value}", "trigger")
    if trigger in task.ruled:
        raise ArbitrationExists(f"arbitration run already exists for task {task.key}, trigger '{trigger.value}', "
                                "in this epoch", "trigger")
    stamp = Stamp(task.id, task.version, context)
    if ruling is Ruling.APPROVE:
        posted = stamp(RulingPosted, trigger=trigger, ruling=ruling, ruling_markdown=markdown)
        return [posted, stamp(TaskCompleted)]
    if ruling is Ruling.ESCALATE:
        posted = stamp(RulingPosted, trigger=trigger, ruling=ruling, ruling_markdown=markdown)
        failed = stamp(TaskFailed, failure_reason=FailureReason.ARBITRATOR_ESCALATED,
                       failure_detail=markdown[:ESCALATION_DETAIL])
        return [posted, failed]
    assert resolution is not None
    named = {resolution.upheld_finding_id, resolution.retired_finding_id}
    if task.contradiction and named != set(task.contradiction):
        raise FindingMismatch(f"the reported pair is {list(task.contradiction)}", "contradictionResolution")
    if not task.contradiction and not named <= task.last_reviewed.keys():
        # Imported from tables that keep no reported pair: the ruling names it, two findings of
        # the latest reviewed cycle, as the engineer's report would have.
        raise FindingMismatch(f"task {task.key} was imported without its reported pair: name two findings of the "
                              f"latest reviewed cycle, {sorted(task.last_reviewed)}", "contradictionResolution")
    resolved = Resolution(upheld_finding_id=resolution.upheld_finding_id,
                          retired_finding_id=resolution.retired_finding_id, rationale=resolution.rationale)
    return [stamp(RulingPosted, trigger=trigger, ruling=ruling, ruling_markdown=markdown,
                  contradiction_resolution=resolved, addendum=addendum(task, resolved))]


def require_resolution(resolution: ResolutionInput | None) -> None:
    """A rule ruling's resolution: two different positive ids and a rationale."""
    field = "contradictionResolution"
    if resolution is None:
        raise Invalid(f"{field} is required when ruling is 'rule'", field)
    for name, value in (("upheldFindingId", resolution.upheld_finding_id),
                        ("retiredFindingId", resolution.retired_finding_id)):
        if value <= 0:
            raise Invalid(f"{field}.{name} must be a positive integer", field)
    if resolution.upheld_finding_id == resolution.retired_finding_id:
        raise Invalid(f"{field}.upheldFindingId and retiredFindingId must differ", field)
    if not resolution.rationale:
        raise Invalid(f"{field}.rationale must be a non-empty string", f"{field}.rationale")
    if len(resolution.rationale) > LONG_TEXT_LIMIT:
        raise Invalid(f"{field}.rationale exceeds maximum length of {LONG_TEXT_LIMIT}", f"{field}.rationale")


def addendum(task: Task, resolution: Resolution) -> str:
    """What the engineer's next cycle reads: both findings verbatim, the choice, the directive."""
    upheld = task.last_reviewed[resolution.upheld_finding_id]
    retired = task.last_reviewed[resolution.retired_finding_id]
    lines = [f"# Contradiction ruling: task {task.key}, cycle {task.review_cycle_count - 1}", ""]
    for label, reviewed in (("upheld", upheld), ("retired", retired)):
        f = reviewed.finding
        where = f" ({f.file_path}{f':{f.line}' if f.line else ''})" if f.file_path else ""
        lines += [f"## Finding [{f.id}] from [{reviewed.role} reviewer]: {label}", "",
                  f"**{f.title}** ({f.severity.value}){where}", ""]
        for heading, text in (("", f.description), ("Evidence: ", f.evidence), ("Fix: ", f.fix)):
            if text:
                lines += [f"{heading}{text}", ""]
    lines += ["## Ruling", "", resolution.rationale, "",
              f"Finding [{upheld.finding.id}] from [{upheld.role} reviewer] is upheld and must be addressed. "
              f"Finding [{retired.finding.id}] from [{retired.role} reviewer] is retired by arbitrator ruling "
              "and must NOT be addressed in this cycle.", ""]
    return "\n".join(lines)
