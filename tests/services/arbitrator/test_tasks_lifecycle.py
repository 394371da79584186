"""``tasks-lifecycle.test.ts``, describe "tasks-lifecycle routes", its sections 1 to 7: ``POST
/tasks/{id}/transition`` from a claim through the review cycles to the budget's reroute (and
section 12b's guard on revising). Each case names the original's ``it(...)``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.services.arbitrator.conftest import Original


def test_claimed_to_engineering_succeeds(original: Original) -> None:
    """it("claimed → engineering succeeds")"""
    task = original.create_task()
    original.claim(task)
    assert original.moved(task, "engineering")["status"] == "engineering"
    assert original.task(task)["status"] == "engineering"


def test_engineering_to_built_with_build_status_and_commit_sha_sets_columns(original: Original) -> None:
    """it("engineering → built with buildStatus + commitSha sets columns")"""
    task = original.engineering()
    assert original.moved(task, "built", {"buildStatus": "clean", "commitSha": "abc123"})["status"] == "built"
    shown = original.task(task)
    assert (shown["buildStatus"], shown["commitSha"]) == ("clean", "abc123")


@pytest.mark.parametrize("payload", [
    pytest.param({"buildStatus": "clean"}, id="engineering → built returns 400 when commitSha missing"),
    pytest.param({"commitSha": "abc"}, id="engineering → built returns 400 when buildStatus missing"),
    pytest.param({"buildStatus": "bogus", "commitSha": "abc"},
                 id="engineering → built returns 400 when buildStatus is out of enum"),
    pytest.param({"buildStatus": "clean", "commitSha": "a" * 129},
                 id="engineering → built returns 400 when commitSha exceeds length cap"),
])
def test_a_build_report_that_breaks_a_rule_is_400(original: Original, payload: dict[str, Any]) -> None:
    task = original.engineering()
    assert original.transition(task, "built", payload).status_code == 400
    assert original.task(task)["status"] == "engineering"


def test_built_to_reviewing_resets_reviewer_verdicts(original: Original) -> None:
    """it("built → reviewing resets reviewerVerdicts to {}"): the verdicts are those of the
    previous cycle, where the original's test writes them into its database."""
    task = original.at_review()
    original.moved(task, "reviewing", {"reviewerRole": "safety", "verdict": "approve"})
    original.reviewed(task, "safety", "request_changes")
    original.moved(task, "revising")
    original.built(task)
    assert original.task(task)["reviewerVerdicts"] == {"safety": "approve"}
    entered = original.moved(task, "reviewing")
    assert (entered["status"], entered["reviewerVerdicts"]) == ("reviewing", {})
    assert original.task(task)["reviewerVerdicts"] == {}


def test_three_reviewing_self_loops_accumulate_per_reviewer_verdicts(original: Original) -> None:
    """it("three reviewing→reviewing self-loops accumulate per-reviewer verdicts")"""
    task = original.at_review()
    for role, verdict in [("safety", "approve"), ("correctness", "approve"), ("style", "out_of_scope")]:
        original.moved(task, "reviewing", {"reviewerRole": role, "verdict": verdict})
    shown = original.task(task)
    assert shown["status"] == "reviewing"
    assert shown["reviewerVerdicts"] == {"safety": "approve", "correctness": "approve", "style": "out_of_scope"}


@pytest.mark.parametrize("payload", [
    pytest.param({"verdict": "approve"}, id="reviewing → reviewing returns 400 when reviewerRole missing"),
    pytest.param({"reviewerRole": "safety"}, id="reviewing → reviewing returns 400 when verdict missing"),
    pytest.param({"reviewerRole": "safety", "verdict": "bogus"},
                 id="reviewing → reviewing returns 400 when verdict is out of enum"),
    pytest.param({"reviewerRole": "safety reviewer", "verdict": "approve"},
                 id="reviewing → reviewing returns 400 when reviewerRole contains illegal characters"),
    pytest.param({"reviewerRole": "a" * 65, "verdict": "approve"},
                 id="reviewing → reviewing returns 400 when reviewerRole exceeds length cap"),
])
def test_a_verdict_that_breaks_a_rule_is_400(original: Original, payload: dict[str, Any]) -> None:
    task = original.at_review()
    assert original.transition(task, "reviewing", payload).status_code == 400


# (verdict, BLOCKING findings, NOTE findings) of each reviewer, as the original's seedReview.
@pytest.mark.parametrize("reviews", [
    pytest.param([("safety", "approve", 0, 0), ("correctness", "out_of_scope", 0, 0)],
                 id="reviewing → complete succeeds when all reviewers approve/out_of_scope with no findings"),
    pytest.param([("safety", "approve", 0, 3), ("correctness", "approve", 0, 0)],
                 id="reviewing → complete succeeds with one reviewer holding three NOTE findings (acceptance boundary)"),
    pytest.param([("safety", "approve", 0, 1), ("correctness", "approve", 0, 1)],
                 id="reviewing → complete succeeds when two reviewers each raised a single NOTE finding"),
])
def test_reviews_that_accept_complete_the_task(original: Original, reviews: list[tuple[str, str, int, int]]) -> None:
    task = original.at_review()
    original.seeded(task, reviews)
    assert original.moved(task, "completed")["status"] == "completed"
    assert original.task(task)["status"] == "completed"


@pytest.mark.parametrize("reviews", [
    pytest.param([], id="reviewing → complete returns 409 when no reviews present"),
    pytest.param([("safety", "approve", 0, 0), ("correctness", "request_changes", 0, 0)],
                 id="reviewing → complete returns 409 when a reviewer requested changes"),
    pytest.param([("safety", "approve", 0, 4)],
                 id="reviewing → complete returns 409 when one reviewer raised four findings (all NOTE)"),
    pytest.param([("safety", "approve", 0, 2), ("correctness", "approve", 0, 2)],
                 id="reviewing → complete returns 409 when two reviewers each raised two findings"),
    pytest.param([("safety", "approve", 1, 0)],
                 id="reviewing → complete returns 409 when a reviewer raised a BLOCKING finding despite approving"),
])
def test_reviews_that_do_not_accept_refuse_completion(original: Original,
                                                     reviews: list[tuple[str, str, int, int]]) -> None:
    task = original.at_review()
    original.seeded(task, reviews)
    assert original.transition(task, "completed").status_code == 409
    assert original.task(task)["status"] == "reviewing"


def test_pending_to_engineering_returns_409(original: Original) -> None:
    """it("pending → engineering returns 409 (skips claimed)")"""
    assert original.transition(original.create_task(), "engineering").status_code == 409


def test_claimed_to_built_returns_409(original: Original) -> None:
    """it("claimed → built returns 409")"""
    task = original.create_task()
    original.claim(task)
    assert original.transition(task, "built", {"buildStatus": "clean", "commitSha": "abc"}).status_code == 409


def test_reviewing_to_revising_reroutes_to_arbitrating_when_budget_exhausted(original: Original) -> None:
    """it("reviewing → revising reroutes to arbitrating when budget exhausted"): five cycles
    revised, where the original's test sets the count to five, and the sixth revise."""
    task = original.at_review()
    cycle = 0
    while cycle < 5:
        cycle = original.next_cycle(task, cycle)
    original.reviewed(task, "safety", "request_changes", cycle=5)
    answer = original.moved(task, "revising")
    assert (answer["status"], answer["arbitrationPendingTrigger"], answer["reviewCycleCount"]) == (
        "arbitrating", "review_cycle_budget_exhausted", 6)
    shown = original.task(task)
    assert (shown["status"], shown["arbitrationPendingTrigger"], shown["reviewCycleCount"]) == (
        "arbitrating", "review_cycle_budget_exhausted", 6)


@pytest.mark.parametrize("reviews", [
    pytest.param([("safety", "request_changes", 0, 0)],
                 id="reviewing → revising under budget proceeds to revising and increments count"),
    pytest.param([("safety", "approve", 0, 4)],
                 id="reviewing → revising proceeds on findings alone when every reviewer approved"),
])
def test_reviews_that_call_for_revising_revise(original: Original, reviews: list[tuple[str, str, int, int]]) -> None:
    task = original.at_review()
    original.seeded(task, reviews)
    assert original.moved(task, "revising")["status"] == "revising"
    assert original.task(task)["reviewCycleCount"] == 1


def test_revising_to_engineering_succeeds(original: Original) -> None:
    """it("revising → engineering succeeds")"""
    task = original.at_review()
    original.reviewed(task, "safety", "request_changes")
    original.moved(task, "revising")
    assert original.moved(task, "engineering")["status"] == "engineering"


def test_reviewing_to_revising_returns_409_when_no_revision_trigger_fired(original: Original) -> None:
    """it("reviewing → revising returns 409 when no revision trigger fired")"""
    task = original.at_review()
    original.reviewed(task, "safety", "approve")
    original.reviewed(task, "correctness", "out_of_scope")
    assert original.transition(task, "revising").status_code == 409
