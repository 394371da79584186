"""An imported task (``ImportTask``): recorded as found, where it stood, then under the rules."""

from __future__ import annotations

from datetime import timedelta

from athenaeum.aggregates.task import FAMILY
from athenaeum.aggregates.task_state import TaskIds
from athenaeum.events import Event
from athenaeum.events.imported import ImportFinding, SourceFile
from athenaeum.events.task import (
    TASK_IDS, Finding, ImportedReview, ImportedRuling, Ruling, Severity, TaskStatus, Trigger, Verdict,
)
from athenaeum.events.task_commands import ImportTask, ResolutionInput
from tests.aggregates.given import T0, at, decided, given
from tests.aggregates.test_task import create, rule, to

BEFORE = T0 - timedelta(days=3)


def review(cycle: int, role: str = "security", verdict: Verdict = Verdict.REQUEST_CHANGES,
           ids: tuple[int, ...] = ()) -> ImportedReview:
    return ImportedReview(cycle=cycle, reviewer_role=role, verdict=verdict, raw_markdown="# review", posted_at=BEFORE,
                          findings=tuple(Finding(id=i, severity=Severity.NOTE, ordinal=n, title=f"finding {i}")
                                         for n, i in enumerate(ids, start=1)))


def importing(status: TaskStatus = TaskStatus.ARBITRATING,
              trigger: Trigger | None = Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED,
              reviews: tuple[ImportedReview, ...] = (), rulings: tuple[ImportedRuling, ...] = (),
              row: bytes = b'{"id":1}', number: int = 1) -> ImportTask:
    return ImportTask(
        project_id="p1", task_id=number, source=f"postgres://db/arbitrator#tasks/{number}", title="Add login",
        status=status, review_cycle_budget=1, review_cycle_count=2, pending_trigger=trigger, reviews=list(reviews),
        rulings=list(rulings), files=[SourceFile(name=f"tasks/{number}", content=row)],
        findings=[ImportFinding(code="illegal_transition", file="review_runs/4", line=None, message="cycle 3")],
    )


def resolved(upheld: int, retired: int) -> ResolutionInput:
    return ResolutionInput(upheld_finding_id=upheld, retired_finding_id=retired, rationale="security first")


def imported(**fields: object) -> list[Event]:
    return decided(FAMILY, [], importing(**fields), at(0, "ops"))  # type: ignore[arg-type]


def test_the_import_keeps_the_original_id_and_moves_the_counter_past_it() -> None:
    history = imported(number=7)
    assert [(e.tag, e.originator_id) for e in history] == [("TaskImported", "task:7"), ("TaskIdIssued", TASK_IDS)]
    assert history[0].actor == "ops" and history[0].findings[0].code == "illegal_transition"
    [issued, _] = decided(FAMILY, history[1:], create(), at(1, "ops"))
    assert issued.number == 8
    counter = TaskIds(id=TASK_IDS, version=3, last=9)
    assert [e.tag for e in decided(FAMILY, [], importing(number=7), at(0, "ops", states={TASK_IDS: counter}))] == [
        "TaskImported"]


def test_the_same_rows_imported_again_append_nothing_and_other_rows_are_refused() -> None:
    history = imported()[:1]
    given(FAMILY, history).when(importing(), at(1, "ops")).then()
    given(FAMILY, history).when(importing(row=b'{"id":1,"title":"x"}'), at(1, "ops")).then_rejects("already_exists")


def test_an_arbitrating_task_needs_its_trigger() -> None:
    given(FAMILY, []).when(importing(trigger=None), at(0, "ops")).then_rejects("invalid", "pendingTrigger")


def test_an_imported_arbitrating_task_waits_for_its_ruling_and_takes_it() -> None:
    history = imported()[:1]
    given(FAMILY, history).when(to(TaskStatus.ENGINEERING), at(1, "engineer")).then_rejects("illegal_transition")
    given(FAMILY, history).when(rule(Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED, Ruling.APPROVE), at(1, "arbitrator")).then(
        "RulingPosted", "TaskCompleted")


def test_an_imported_ruling_is_not_given_twice() -> None:
    ruled = ImportedRuling(trigger=Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED, ruling=Ruling.APPROVE,
                           ruling_markdown="ok", posted_at=BEFORE)
    history = imported(rulings=(ruled,))[:1]
    given(FAMILY, history).when(rule(Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED, Ruling.APPROVE), at(1, "arbitrator")
                                ).then_rejects("arbitration_exists")


def test_an_imported_review_in_progress_is_classified_with_the_next() -> None:
    history = imported(status=TaskStatus.REVIEWING, trigger=None, reviews=(review(1, ids=(3,)), review(2)))[:1]
    state = given(FAMILY, history).state
    assert (state.reviewed_roles, list(state.last_reviewed), state.next_finding_id) == (("security",), [3], 4)
    given(FAMILY, history).when(to(TaskStatus.COMPLETED), at(1, "dispatcher")).then_rejects("illegal_transition")
    given(FAMILY, history).when(to(TaskStatus.REVISING), at(1, "dispatcher")).then(
        "ReviewConcluded", "ArbitrationRequested")


def test_an_imported_contradiction_is_ruled_on_two_findings_of_the_latest_reviewed_cycle() -> None:
    # The tables keep no reported pair: the ruling names it, as the engineer's report would have.
    history = imported(trigger=Trigger.REVIEWER_CONTRADICTION, reviews=(review(1, ids=(1,)), review(2, ids=(2, 3))))[:1]
    assert sorted(given(FAMILY, history).state.last_reviewed) == [2, 3]
    given(FAMILY, history).when(rule(Trigger.REVIEWER_CONTRADICTION, Ruling.RULE, resolution=resolved(2, 1)),
                                at(1, "arbitrator")).then_rejects("finding_mismatch", "contradictionResolution")
    events = given(FAMILY, history).when(rule(Trigger.REVIEWER_CONTRADICTION, Ruling.RULE, resolution=resolved(3, 2)),
                                         at(1, "arbitrator")).then("RulingPosted")
    assert "Finding [3] from [security reviewer] is upheld" in events[0].addendum
    assert given(FAMILY, history + events).state.status is TaskStatus.REVISING
