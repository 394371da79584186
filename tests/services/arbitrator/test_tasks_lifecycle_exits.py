"""``tasks-lifecycle.test.ts``, describe "tasks-lifecycle routes", its sections 8 to 14: the
engineer's arbitration, leaving arbitrating, failing, the checks of a transition's body and
headers, and the endpoints removed and kept (reset, integrate). Each case names the original's
``it(...)``.

One deliberate difference (PROTOCOLS.md section 5): only an arbitrator's ruling leaves
``arbitrating``, so the original's "arbitrating → ..." transitions are refused (409)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.services.arbitrator.conftest import Original


def test_engineering_to_arbitrating_with_reviewer_contradiction_trigger_succeeds(original: Original) -> None:
    """it("engineering → arbitrating with reviewer_contradiction trigger succeeds"), naming two
    findings the reviews were given, where the original's test names any two ids."""
    task = original.at_review()
    pair = original.engineering_after_findings(task)
    answer = original.moved(task, "arbitrating", {"trigger": "reviewer_contradiction",
                                                  "contradiction": {"findingIds": list(pair), "notes": "conflicting reads"}})
    assert answer["status"] == "arbitrating"
    assert original.task(task)["arbitrationPendingTrigger"] == "reviewer_contradiction"


@pytest.mark.parametrize("payload", [
    pytest.param({"trigger": "review_cycle_budget_exhausted"},
                 id="engineering → arbitrating returns 400 with cycle-budget trigger"),
    pytest.param({}, id="engineering → arbitrating returns 400 when trigger missing"),
])
def test_an_engineers_arbitration_without_a_contradiction_is_400(original: Original, payload: dict[str, Any]) -> None:
    assert original.transition(original.engineering(), "arbitrating", payload).status_code == 400


def test_second_engineering_to_arbitrating_with_same_trigger_returns_409(original: Original) -> None:
    """it("second engineering → arbitrating with same trigger returns 409"), after the first
    contradiction was ruled on (the original's test inserts the ruling into its database)."""
    task, pair = original.contradicted()
    ruled = original.arbitrate(task, {"trigger": "reviewer_contradiction", "ruling": "rule", "rulingMarkdown": "first",
                                      "contradictionResolution": {"upheldFindingId": pair[0],
                                                                  "retiredFindingId": pair[1], "rationale": "r"}})
    assert ruled.status_code == 200, ruled.text
    original.moved(task, "engineering")
    again = original.transition(task, "arbitrating", {"trigger": "reviewer_contradiction",
                                                      "contradiction": {"findingIds": [3, 4], "notes": "second run"}})
    assert again.status_code == 409, again.text


def test_the_cycle_budget_reroute_after_its_ruling_is_in_a_new_epoch(original: Original) -> None:
    """it("cycle-budget reroute returns 409 when an arbitration row already exists for the same
    trigger"): a state Athenaeum cannot reach. A budget ruling ends the task (approve or
    escalate), and the reset that reopens it starts a new epoch, where the task may be
    arbitrated again (PROTOCOLS.md section 5: the original keeps old rulings and gets stuck)."""
    task = original.exhausted()
    original.arbitrate(task, {"trigger": "review_cycle_budget_exhausted", "ruling": "escalate", "rulingMarkdown": "m"})
    assert original.transition(task, "revising").status_code == 409  # failed: nothing to reroute
    assert original.post(f"/tasks/{task}/reset", headers=None).status_code == 200
    original.claim(task)
    original.built(task)
    original.moved(task, "reviewing")
    assert original.exhausted(task) == task  # arbitrating on the budget again, in epoch 1


@pytest.mark.parametrize(("to", "payload"), [
    pytest.param("completed", None, id="arbitrating → complete succeeds and clears the pending trigger"),
    pytest.param("revising", None, id="arbitrating → revising succeeds and clears the pending trigger"),
    pytest.param("failed", {"failureReason": "arbitrator_escalated", "failureDetail": "arbitrator chose escalate"},
                 id="arbitrating → failed succeeds and clears the pending trigger"),
    pytest.param("revising", None, id="arbitrating → revising succeeds with no payload"),
])
def test_only_a_ruling_leaves_arbitrating(original: Original, to: str, payload: dict[str, Any] | None) -> None:
    """The deliberate difference: the original lets these transitions bypass its arbitrator;
    PROTOCOLS.md section 5 refuses them (409) and the task keeps waiting on its ruling."""
    task, _ = original.contradicted()
    refused = original.transition(task, to, payload)
    assert refused.status_code == 409 and "only an arbitrator's ruling" in refused.text
    shown = original.task(task)
    assert (shown["status"], shown["arbitrationPendingTrigger"]) == ("arbitrating", "reviewer_contradiction")


def test_claimed_to_failed_sets_failure_reason(original: Original) -> None:
    """it("claimed → failed sets failureReason")"""
    task = original.create_task()
    original.claim(task)
    original.moved(task, "failed", {"failureReason": "engineer_build_failure", "failureDetail": "compile error"})
    shown = original.task(task)
    assert (shown["status"], shown["failureReason"], shown["failureDetail"]) == (
        "failed", "engineer_build_failure", "compile error")


@pytest.mark.parametrize(("body", "claimed"), [
    pytest.param({"to": "failed", "payload": {}}, True, id="any → failed returns 400 when failureReason missing"),
    pytest.param({"to": "failed", "payload": {"failureReason": "made_up_thing"}}, True,
                 id="any → failed returns 400 when failureReason is out-of-enum"),
    pytest.param({"to": "failed", "payload": {"failureReason": "engineer_build_failure", "failureDetail": "a" * 4097}},
                 False, id="any → failed returns 400 when failureDetail exceeds length cap"),
    pytest.param({}, True, id='returns 400 when "to" is missing'),
    pytest.param({"to": "wat"}, True, id='returns 400 when "to" is unknown'),
])
def test_a_transition_that_breaks_a_rule_is_400(original: Original, body: dict[str, Any], claimed: bool) -> None:
    task = original.create_task()
    original.claim(task)
    if not claimed:
        original.moved(task, "engineering")
    assert original.post(f"/tasks/{task}/transition", body).status_code == 400


def test_returns_400_when_x_project_id_header_is_absent(original: Original) -> None:
    """it("returns 400 when X-Project-Id header is absent")"""
    task = original.create_task()
    original.claim(task)
    assert original.transition(task, "engineering", headers={}).status_code == 400


def test_returns_404_when_task_not_found(original: Original) -> None:
    """it("returns 404 when task not found")"""
    assert original.transition(99999, "engineering").status_code == 404


def test_reviewing_to_arbitrating_direct_posting_returns_409(original: Original) -> None:
    """it("reviewing → arbitrating direct posting returns 409 (must go via cycle-budget reroute)")"""
    task = original.at_review()
    answer = original.transition(task, "arbitrating", {"trigger": "review_cycle_budget_exhausted"})
    assert answer.status_code == 409, answer.text


@pytest.mark.parametrize(("path", "body"), [
    pytest.param("complete", {"result": {"summary": "x"}}, id="POST /tasks/:id/complete returns 404 (endpoint removed)"),
    pytest.param("fail", {"error": "boom"}, id="POST /tasks/:id/fail returns 404 (endpoint removed)"),
])
def test_the_removed_endpoints_are_not_found(original: Original, path: str, body: dict[str, Any]) -> None:
    task = original.create_task()
    original.claim(task)
    assert original.post(f"/tasks/{task}/{path}", body, headers=None).status_code == 404


@pytest.mark.parametrize(("path", "status"), [
    pytest.param("reset", "pending", id='POST /tasks/:id/reset accepts a "completed" task'),
    pytest.param("integrate", "integrated", id='POST /tasks/:id/integrate accepts a "completed" task'),
])
def test_a_completed_task(original: Original, path: str, status: str) -> None:
    task = original.at_review()
    original.reviewed(task, "safety", "approve")
    original.moved(task, "completed")
    assert original.post(f"/tasks/{task}/{path}", headers=None).status_code == 200
    assert original.task(task)["status"] == status
