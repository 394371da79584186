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
from athenaeum.events.task_commands import LONG_TEXT_LIMIT, PostRuling, TransitionTask


def report_contradiction(task: Task, command: TransitionTask, context: Context) -> list[Event]:
    """The engineer's ``arbitrating`` transition: two findings of the latest reviewed cycle that
    cannot both be addressed."""
    finding_ids = command.payload.finding_ids
    if finding_ids is None:
        raise Invalid("payload.findingIds is the list of the two contradicting finding ids", "findingIds")
    require_status(task, "arbitrating", TaskStatus.ENGINEERING)
    if Trigger.REVIEWER_CONTRADICTION in task.ruled:
        # One ruling per trigger and epoch: a second report could never be ruled, only stuck.
        raise ArbitrationExists(f"task {task.key} already had its contradiction ruled in this epoch", "findingIds")
    if len(finding_ids) != 2 or finding_ids[0] == finding_ids[1]:
        raise Invalid("findingIds names two different findings", "findingIds")
    missing = [i for i in finding_ids if i not in task.last_reviewed]
    if missing:
        raise Invalid(f"findings {missing} are not in the latest reviewed cycle of task {task.key}", "findingIds")
    stamp = Stamp(task.id, task.version, context)
    pair = (finding_ids[0], finding_ids[1])
    return [stamp(ContradictionReported, finding_ids=pair, notes=command.payload.notes),
            stamp(ArbitrationRequested, trigger=Trigger.REVIEWER_CONTRADICTION, finding_ids=pair)]


def post_ruling(state: Task | None, command: PostRuling, context: Context) -> list[Event]:
    """Checked in PROTOCOLS.md's order: the body (400s; its trigger and ruling are in their enums
    once decoded), the task (404), its state (409s)."""
    trigger, ruling, markdown = command.trigger, command.ruling, command.ruling_markdown
    resolution = command.contradiction_resolution
    if not markdown or len(markdown) > MARKDOWN_LIMIT:
        raise Invalid(f"rulingMarkdown is 1 to {MARKDOWN_LIMIT} characters", "rulingMarkdown")
    if ruling is Ruling.RULE and trigger is not Trigger.REVIEWER_CONTRADICTION:
        raise Invalid("a rule ruling is only for the reviewer_contradiction trigger", "ruling")
    if ruling is Ruling.RULE:
        if resolution is None:
            raise Invalid("a rule ruling needs a contradictionResolution", "contradictionResolution")
        upheld, retired = resolution.upheld_finding_id, resolution.retired_finding_id
        if upheld <= 0 or retired <= 0 or upheld == retired:
            raise Invalid("upheldFindingId and retiredFindingId are two different positive ids",
                          "contradictionResolution")
        if not 1 <= len(resolution.rationale) <= LONG_TEXT_LIMIT:
            raise Invalid(f"rationale is 1 to {LONG_TEXT_LIMIT} characters", "contradictionResolution.rationale")
    elif resolution is not None:
        raise Invalid(f"only a rule ruling carries a contradictionResolution, not {ruling.value}",
                      "contradictionResolution")
    task = in_project(state, command.project_id)
    if task.status is not TaskStatus.ARBITRATING:
        raise NotArbitrating(f"task {task.key} is {task.status.value}, not arbitrating")
    if trigger is not task.pending_trigger:
        pending = task.pending_trigger.value if task.pending_trigger else None
        raise TriggerMismatch(f"the pending trigger of task {task.key} is {pending}, not {trigger.value}", "trigger")
    if trigger in task.ruled:
        raise ArbitrationExists(f"task {task.key} already has a {trigger.value} ruling in this epoch", "trigger")
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
    if {resolution.upheld_finding_id, resolution.retired_finding_id} != set(task.contradiction):
        raise FindingMismatch(f"the reported pair is {list(task.contradiction)}", "contradictionResolution")
    resolved = Resolution(upheld_finding_id=resolution.upheld_finding_id,
                          retired_finding_id=resolution.retired_finding_id, rationale=resolution.rationale)
    return [stamp(RulingPosted, trigger=trigger, ruling=ruling, ruling_markdown=markdown,
                  contradiction_resolution=resolved, addendum=addendum(task, resolved))]


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
