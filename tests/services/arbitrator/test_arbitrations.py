"""``arbitrations.test.ts``, describe "arbitrations routes": ``POST`` and ``GET
/tasks/{id}/arbitrations``. Each case names the original's ``it(...)``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.services.arbitrator.conftest import Original

RUN_FIELDS = {"id", "taskId", "trigger", "ruling", "rulingMarkdown", "contradictionResolution", "postedAt"}


def resolution(upheld: int, retired: int, rationale: str = "x") -> dict[str, Any]:
    return {"upheldFindingId": upheld, "retiredFindingId": retired, "rationale": rationale}


def test_approve_ruling_transitions_task_to_complete_and_clears_pending_trigger(original: Original) -> None:
    """it("approve ruling transitions task to complete and clears pending trigger")"""
    task = original.exhausted()
    answer = original.arbitrate(task, {"trigger": "review_cycle_budget_exhausted", "ruling": "approve",
                                       "rulingMarkdown": "Reviewers nitpicked stylistic noise; approving."})
    assert answer.status_code == 200, answer.text
    assert isinstance(answer.json()["runId"], int) and answer.json()["newStatus"] == "completed"
    shown = original.task(task)
    assert (shown["status"], shown["arbitrationPendingTrigger"]) == ("completed", None) and shown["completedAt"]
    [run] = original.rulings(task)
    assert (run["trigger"], run["ruling"], run["contradictionResolution"]) == (
        "review_cycle_budget_exhausted", "approve", None)


def test_rule_ruling_on_reviewer_contradiction_transitions_to_revising_and_sets_addendum_path(
        original: Original) -> None:
    """it("rule ruling on reviewer_contradiction transitions to revising and sets addendum path"),
    with the pair the engineer reported, where the original's test names any two ids."""
    task, (upheld, retired) = original.contradicted()
    ruled = resolution(upheld, retired, "Safety boundary is a hard rule; decomposition is advisory.")
    answer = original.arbitrate(task, {"trigger": "reviewer_contradiction", "ruling": "rule",
                                       "rulingMarkdown": "Safety mandate wins.", "contradictionResolution": ruled})
    assert answer.status_code == 200, answer.text
    assert isinstance(answer.json()["runId"], int) and answer.json()["newStatus"] == "revising"
    shown = original.task(task)
    assert (shown["status"], shown["arbitrationPendingTrigger"]) == ("revising", None)
    assert shown["arbitrationAddendumPath"] == f".scratch/arbitrations/{task}/contradiction-ruling.md"
    [run] = original.rulings(task)
    assert (run["ruling"], run["contradictionResolution"]) == ("rule", ruled)


def test_escalate_ruling_transitions_to_failed_with_arbitrator_escalated_reason(original: Original) -> None:
    """it("escalate ruling transitions to failed with arbitrator_escalated reason")"""
    task = original.exhausted()
    answer = original.arbitrate(task, {"trigger": "review_cycle_budget_exhausted", "ruling": "escalate",
                                       "rulingMarkdown": "a" * 750})
    assert answer.status_code == 200 and answer.json()["newStatus"] == "failed", answer.text
    shown = original.task(task)
    assert (shown["status"], shown["arbitrationPendingTrigger"], shown["failureReason"], shown["failureDetail"]) == (
        "failed", None, "arbitrator_escalated", "a" * 500)
    assert shown["completedAt"]


def test_escalate_ruling_on_reviewer_contradiction_is_also_valid(original: Original) -> None:
    """it("escalate ruling on reviewer_contradiction is also valid")"""
    task, _ = original.contradicted()
    answer = original.arbitrate(task, {"trigger": "reviewer_contradiction", "ruling": "escalate",
                                       "rulingMarkdown": "Both reviewers raise valid concerns; need operator review."})
    assert answer.status_code == 200 and answer.json()["newStatus"] == "failed", answer.text
    assert original.task(task)["failureReason"] == "arbitrator_escalated"


def test_rejects_rule_on_cycle_exhausted_trigger_with_400(original: Original) -> None:
    """it("rejects rule on cycle-exhausted trigger with 400"): nothing is written."""
    task = original.exhausted()
    answer = original.arbitrate(task, {"trigger": "review_cycle_budget_exhausted", "ruling": "rule",
                                       "rulingMarkdown": "should not be allowed", "contradictionResolution": resolution(1, 2)})
    assert answer.status_code == 400 and "reviewer_contradiction" in answer.text
    assert original.rulings(task) == []
    assert original.task(task)["status"] == "arbitrating"


CONTRADICTION = {"trigger": "reviewer_contradiction"}


@pytest.mark.parametrize(("body", "said"), [
    pytest.param({"ruling": "rule", "rulingMarkdown": "forgot the resolution"}, "contradictionResolution is required",
                 id="rejects rule without contradictionResolution with 400"),
    pytest.param({"ruling": "approve", "rulingMarkdown": "ok", "contradictionResolution": resolution(1, 2)},
                 "must be absent", id="rejects non-rule ruling that carries contradictionResolution with 400"),
    pytest.param({"ruling": "rule", "rulingMarkdown": "bad resolution", "contradictionResolution": resolution(7, 7)},
                 "must differ", id="rejects contradictionResolution with equal upheld and retired ids"),
    pytest.param({"ruling": "rule", "rulingMarkdown": "bad", "contradictionResolution": resolution(0, 2)}, "",
                 id="rejects contradictionResolution with non-positive upheld id"),
    pytest.param({"ruling": "rule", "rulingMarkdown": "bad", "contradictionResolution": resolution(1, 2, "")}, "",
                 id="rejects contradictionResolution with empty rationale"),
    pytest.param({"trigger": None, "ruling": "approve", "rulingMarkdown": "x"}, "", id="rejects missing trigger"),
    pytest.param({"trigger": "made_up", "ruling": "approve", "rulingMarkdown": "x"}, "", id="rejects bad trigger value"),
    pytest.param({"ruling": "maybe", "rulingMarkdown": "x"}, "", id="rejects bad ruling value"),
    pytest.param({"ruling": "approve", "rulingMarkdown": ""}, "", id="rejects empty rulingMarkdown"),
])
def test_a_body_that_breaks_a_rule_is_400_and_writes_nothing(original: Original, body: dict, said: str) -> None:
    """The original's cross-field and body-shape cases, each named by its ``it(...)``."""
    task, _ = original.contradicted()
    sent = {key: value for key, value in (CONTRADICTION | body).items() if value is not None}
    answer = original.arbitrate(task, sent)
    assert answer.status_code == 400 and said in answer.text, answer.text
    assert original.rulings(task) == []


def test_second_arbitration_for_same_task_and_trigger_returns_409(original: Original) -> None:
    """it("second arbitration for same (taskId, trigger) returns 409"). The original's test
    forces the task back into arbitrating; here the engineer's second report is itself refused
    (one ruling per trigger and epoch), and so is the second ruling."""
    task, pair = original.contradicted()
    first = original.arbitrate(task, {**CONTRADICTION, "ruling": "rule", "rulingMarkdown": "first ruling",
                                      "contradictionResolution": resolution(*pair, "first")})
    assert first.status_code == 200, first.text
    original.moved(task, "engineering")
    again = original.transition(task, "arbitrating", {**CONTRADICTION, "contradiction": {"findingIds": list(pair)}})
    assert again.status_code == 409, again.text
    second = original.arbitrate(task, {**CONTRADICTION, "ruling": "approve", "rulingMarkdown": "second ruling"})
    assert second.status_code == 409, second.text
    assert [run["ruling"] for run in original.rulings(task)] == ["rule"]


def test_rejects_with_409_when_task_is_not_in_arbitrating(original: Original) -> None:
    """it("rejects with 409 when task is not in arbitrating")"""
    task = original.create_task("arb-task")
    answer = original.arbitrate(task, {**CONTRADICTION, "ruling": "approve", "rulingMarkdown": "x"})
    assert answer.status_code == 409, answer.text
    assert original.rulings(task) == []


@pytest.mark.parametrize(("task", "status"), [
    pytest.param(999_999, 404, id="returns 404 for unknown task id"),
    pytest.param(0, 400, id="rejects invalid (zero) task id with 400"),
])
def test_a_task_id_that_names_no_task(original: Original, task: int, status: int) -> None:
    answer = original.arbitrate(task, {**CONTRADICTION, "ruling": "approve", "rulingMarkdown": "x"})
    assert answer.status_code == status, answer.text


def test_requires_x_project_id_header(original: Original) -> None:
    """it("requires X-Project-Id header (400 when missing)")"""
    task, _ = original.contradicted()
    answer = original.arbitrate(task, {**CONTRADICTION, "ruling": "approve", "rulingMarkdown": "x"}, headers={})
    assert answer.status_code == 400 and "X-Project-Id" in answer.text


def test_returns_404_for_task_in_a_different_project(original: Original) -> None:
    """it("returns 404 for task in a different project")"""
    task, _ = original.contradicted()
    answer = original.arbitrate(task, {**CONTRADICTION, "ruling": "approve", "rulingMarkdown": "x"},
                                headers={"X-Project-Id": "some-other-project"})
    assert answer.status_code == 404, answer.text


def test_get_returns_empty_runs_array_when_task_has_no_arbitrations(original: Original) -> None:
    """it("GET returns empty runs array when task has no arbitrations")"""
    task = original.create_task("arb-task")
    answer = original.get(f"/tasks/{task}/arbitrations")
    assert answer.status_code == 200 and answer.json() == {"runs": []}


def test_get_returns_posted_arbitrations_with_all_expected_fields_ordered_by_posted_at(original: Original) -> None:
    """it("GET returns posted arbitrations with all expected fields, ordered by postedAt ASC").
    The escalation ends the task, so the second ruling is in the epoch a reset starts (with a
    budget of one cycle, so that the first revise of that epoch is not arbitrated)."""
    task = original.at_review("arb-task", reviewCycleBudget=1)
    original.exhausted(task, cycle=original.next_cycle(task, 0))
    first = original.arbitrate(task, {"trigger": "review_cycle_budget_exhausted", "ruling": "escalate",
                                      "rulingMarkdown": "cycle budget exhausted ruling"})
    assert first.status_code == 200, first.text
    assert original.post(f"/tasks/{task}/reset", headers=None).status_code == 200
    original.claim(task)
    original.built(task)
    original.moved(task, "reviewing")
    pair = original.engineering_after_findings(task)
    original.moved(task, "arbitrating", {**CONTRADICTION, "contradiction": {"findingIds": list(pair), "notes": "x"}})
    ruled = resolution(*pair, "safety wins")
    second = original.arbitrate(task, {**CONTRADICTION, "ruling": "rule", "rulingMarkdown": "contradiction ruling",
                                       "contradictionResolution": ruled})
    assert second.status_code == 200, second.text
    runs = original.rulings(task)
    assert [RUN_FIELDS <= set(run) for run in runs] == [True, True]
    assert [(run["trigger"], run["ruling"], run["contradictionResolution"], run["taskId"]) for run in runs] == [
        ("review_cycle_budget_exhausted", "escalate", None, task), ("reviewer_contradiction", "rule", ruled, task)]
    assert all(isinstance(run["postedAt"], str) for run in runs) and runs[0]["postedAt"] <= runs[1]["postedAt"]


@pytest.mark.parametrize(("task", "status"), [
    pytest.param(999_999, 404, id="GET returns 404 for unknown task id"),
    pytest.param(0, 400, id="GET rejects invalid (zero) task id with 400"),
])
def test_get_for_a_task_id_that_names_no_task(original: Original, task: int, status: int) -> None:
    assert original.get(f"/tasks/{task}/arbitrations").status_code == status


def test_get_requires_x_project_id_header(original: Original) -> None:
    """it("GET requires X-Project-Id header (400 when missing)")"""
    task = original.create_task("arb-task")
    answer = original.get(f"/tasks/{task}/arbitrations", headers={})
    assert answer.status_code == 400 and "X-Project-Id" in answer.text


def test_get_returns_404_for_task_in_a_different_project(original: Original) -> None:
    """it("GET returns 404 for task in a different project")"""
    task, _ = original.contradicted()
    assert original.arbitrate(task, {**CONTRADICTION, "ruling": "approve", "rulingMarkdown": "x"}).status_code == 200
    assert original.rulings(task)  # found in its own project first, so the 404 is the project's
    assert original.get(f"/tasks/{task}/arbitrations", headers={"X-Project-Id": "some-other-project"}).status_code == 404
