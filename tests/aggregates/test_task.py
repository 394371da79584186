"""PROTOCOLS.md section 5, rule by rule: the engineer/reviewer task FSM and its arbitration."""

from __future__ import annotations

import pytest

from athenaeum.aggregates import task as t
from athenaeum.aggregates import task_arbitration as arbitration
from athenaeum.aggregates import task_review as review
from athenaeum.aggregates.rules import RuleViolation
from athenaeum.aggregates.task_state import evolve, evolve_ids
from athenaeum.events import Event
from athenaeum.events.task import FailureReason, ReviewOutcome, Severity, TaskStatus, Trigger, Verdict
from athenaeum.events.task_commands import FindingInput, ResolutionInput
from tests.aggregates.given import at, given

ONLY_TASK = [e for e in t.create(None, at(0, "ops"), project_id="p1", title="Add login", plan_path="plans/login.md",
                                 review_cycle_budget=5) if e.tag == "TaskCreated"]


def state_of(history: list[Event]):  # type: ignore[no-untyped-def]
    return given(evolve, history).state


def moved(history: list[Event], *targets: str, payload: dict | None = None) -> list[Event]:
    for target in targets:
        history = history + t.transition(state_of(history), at(1, "engineer"), to=target, payload=payload or {})
    return history


def finding(severity: Severity = Severity.NOTE, title: str = "nit") -> FindingInput:
    return FindingInput(severity=severity, title=title, description="d", evidence="e", fix="f", file_path="a.py", line=3)


def reviewed(history: list[Event], role: str, verdict: Verdict = Verdict.APPROVE, findings: int = 0,
             severity: Severity = Severity.NOTE) -> list[Event]:
    return history + review.post_review(state_of(history), at(2, role), reviewer_role=role, verdict=verdict,
                                   raw_markdown="# review", findings=[finding(severity) for _ in range(findings)])


def at_review(history: list[Event] | None = None) -> list[Event]:
    history = moved(history or ONLY_TASK, "claimed", "engineering")
    return moved(moved(history, "built", payload={"buildStatus": "clean", "commitSha": "abc123"}), "reviewing")


def cycle(history: list[Event], *reviews: tuple[str, Verdict, int, Severity]) -> list[Event]:
    for role, verdict, count, severity in reviews:
        history = reviewed(history, role, verdict, count, severity)
    return history + review.conclude(state_of(history), at(3, "dispatcher"))


REVISE = ("security", Verdict.REQUEST_CHANGES, 1, Severity.BLOCKING)


class TestCreation:
    def test_ids_are_issued_in_sequence_with_the_creation(self) -> None:
        issued, created = t.create(None, at(), project_id="p1", title="x", plan_path="p.md", review_cycle_budget=5)
        assert (issued.number, created.originator_id) == (1, "task:1")
        ids = given(evolve_ids, [issued]).state
        again, _ = t.create(ids, at(), project_id="p1", title="y", plan_path="p.md", review_cycle_budget=5)
        assert again.number == 2 and again.originator_version == 2

    def test_a_title_is_at_most_1024_characters_whatever_their_bytes(self) -> None:
        assert t.create(None, at(), project_id="p1", title="é" * 1024, plan_path="p.md", review_cycle_budget=5)
        with pytest.raises(RuleViolation, match="1024 characters"):
            t.create(None, at(), project_id="p1", title="é" * 1025, plan_path="p.md", review_cycle_budget=5)


class TestEdges:
    @pytest.mark.parametrize(("path", "status"), [
        (["claimed"], TaskStatus.CLAIMED), (["claimed", "engineering"], TaskStatus.ENGINEERING)])
    def test_the_fsm_edges(self, path: list[str], status: TaskStatus) -> None:
        assert state_of(moved(ONLY_TASK, *path)).status is status

    @pytest.mark.parametrize(("path", "target"), [
        ([], "engineering"), ([], "built"), ([], "reviewing"), ([], "completed"), ([], "arbitrating"),
        (["claimed"], "claimed"), (["claimed"], "reviewing"), (["claimed", "engineering"], "reviewing"),
        (["claimed", "engineering"], "pending")])
    def test_anything_else_is_an_illegal_transition(self, path: list[str], target: str) -> None:
        given(evolve, moved(ONLY_TASK, *path)).when(
            t.transition, at(2), to=target, payload={"buildStatus": "clean", "findingIds": [1, 2]}
        ).then_rejects("illegal_transition")

    def test_a_build_report_needs_its_status_and_a_short_sha(self) -> None:
        history = moved(ONLY_TASK, "claimed", "engineering")
        given(evolve, history).when(t.transition, at(2), to="built", payload={}).then_rejects("invalid", "buildStatus")
        given(evolve, history).when(t.transition, at(2), to="built",
                                    payload={"buildStatus": "clean", "commitSha": "f" * 129}).then_rejects("invalid")

    def test_an_unknown_status_is_invalid(self) -> None:
        given(evolve, ONLY_TASK).when(t.transition, at(2), to="done", payload={}).then_rejects("invalid", "to")


class TestReviews:
    def test_one_review_per_role_per_cycle_with_ledger_finding_ids(self) -> None:
        history = reviewed(at_review(), "security", findings=2)
        assert [f.id for f in history[-1].findings] == [1, 2]
        given(evolve, history).when(review.post_review, at(3), reviewer_role="security", verdict=Verdict.APPROVE,
                                    raw_markdown="", findings=[]).then_rejects("already_exists")
        [second] = given(evolve, history).when(review.post_review, at(3), reviewer_role="style", verdict=Verdict.APPROVE,
                                               raw_markdown="", findings=[finding()]).then("ReviewPosted")
        assert second.findings[0].id == 3

    def test_reviews_only_while_reviewing_the_current_cycle(self) -> None:
        given(evolve, ONLY_TASK).when(review.post_review, at(3), reviewer_role="security", verdict=Verdict.APPROVE,
                                      raw_markdown="", findings=[]).then_rejects("illegal_transition")
        given(evolve, at_review()).when(review.post_review, at(3), reviewer_role="security", verdict=Verdict.APPROVE,
                                        raw_markdown="", findings=[], cycle=1).then_rejects("illegal_transition")

    def test_a_role_is_a_short_token(self) -> None:
        given(evolve, at_review()).when(review.post_review, at(3), reviewer_role="sec urity", verdict=Verdict.APPROVE,
                                        raw_markdown="", findings=[]).then_rejects("invalid", "reviewerRole")

    def test_no_reviews_is_incomplete(self) -> None:
        given(evolve, at_review()).when(review.conclude, at(3)).then_rejects("illegal_transition")


class TestClassification:
    @pytest.mark.parametrize(("reviews", "outcome"), [
        ([("a", Verdict.APPROVE, 3, Severity.NOTE)], ReviewOutcome.ACCEPT),
        ([("a", Verdict.APPROVE, 4, Severity.NOTE)], ReviewOutcome.REVISE),
        ([("a", Verdict.APPROVE, 2, Severity.NOTE), ("b", Verdict.APPROVE, 1, Severity.NOTE)], ReviewOutcome.ACCEPT),
        ([("a", Verdict.APPROVE, 2, Severity.NOTE), ("b", Verdict.APPROVE, 2, Severity.NOTE)], ReviewOutcome.REVISE),
        ([("a", Verdict.APPROVE, 1, Severity.BLOCKING)], ReviewOutcome.REVISE),
        ([("a", Verdict.REQUEST_CHANGES, 0, Severity.NOTE)], ReviewOutcome.REVISE),
        ([("a", Verdict.OUT_OF_SCOPE, 5, Severity.BLOCKING), ("b", Verdict.APPROVE, 0, Severity.NOTE)],
         ReviewOutcome.ACCEPT),
    ])
    def test_the_classify_review_rule_at_each_boundary(self, reviews: list, outcome: ReviewOutcome) -> None:
        history = at_review()
        for role, verdict, count, severity in reviews:
            history = reviewed(history, role, verdict, count, severity)
        assert review.classify(state_of(history).reviews) is outcome

    def test_accept_completes_and_revise_counts_a_cycle(self) -> None:
        accepted = cycle(at_review(), ("a", Verdict.APPROVE, 0, Severity.NOTE))
        assert state_of(accepted).status is TaskStatus.COMPLETED
        revised = cycle(at_review(), REVISE)
        assert (state_of(revised).status, state_of(revised).review_cycle_count) == (TaskStatus.REVISING, 1)

    def test_the_sixth_revise_on_a_budget_of_five_goes_to_arbitration_with_count_six(self) -> None:
        history = at_review()
        for number in range(1, 6):
            history = cycle(history, REVISE)
            assert state_of(history).status is TaskStatus.REVISING and state_of(history).review_cycle_count == number
            history = moved(history, "engineering")
            history = moved(moved(history, "built", payload={"buildStatus": "clean"}), "reviewing")
        history = cycle(history, REVISE)
        state = state_of(history)
        assert (state.status, state.review_cycle_count, state.pending_trigger) == (
            TaskStatus.ARBITRATING, 6, Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED)


def contradicted() -> list[Event]:
    history = cycle(at_review(), ("security", Verdict.REQUEST_CHANGES, 1, Severity.BLOCKING),
                    ("style", Verdict.APPROVE, 1, Severity.NOTE))
    history = moved(history, "engineering")
    return moved(history, "arbitrating", payload={"findingIds": [1, 2], "notes": "cannot do both"})


def ruling(history: list[Event], trigger: str = "reviewer_contradiction", ruling_: str = "rule",
           markdown: str = "reasoning", resolution: ResolutionInput | None = None, project: str = "p1"):  # type: ignore[no-untyped-def]
    return given(evolve, history).when(arbitration.post_ruling, at(5, "arbitrator"), project_id=project, trigger=trigger,
                                       ruling=ruling_, ruling_markdown=markdown, resolution=resolution)


RESOLVED = ResolutionInput(upheld_finding_id=1, retired_finding_id=2, rationale="security first")


class TestContradiction:
    def test_a_contradiction_keeps_its_ids(self) -> None:
        state = state_of(contradicted())
        assert (state.status, state.pending_trigger, state.contradiction) == (
            TaskStatus.ARBITRATING, Trigger.REVIEWER_CONTRADICTION, (1, 2))

    @pytest.mark.parametrize("ids", [[1, 1], [1, 9], [1], [True, 2], [1.0, 2], "1,2"])
    def test_the_ids_are_two_different_findings_of_the_latest_cycle(self, ids: list[int]) -> None:
        history = moved(cycle(at_review(), REVISE, ("style", Verdict.APPROVE, 1, Severity.NOTE)), "engineering")
        given(evolve, history).when(t.transition, at(4), to="arbitrating",
                                    payload={"findingIds": ids}).then_rejects("invalid", "findingIds")

    def test_only_from_engineering(self) -> None:
        given(evolve, at_review()).when(t.transition, at(4), to="arbitrating",
                                        payload={"findingIds": [1, 2]}).then_rejects("illegal_transition")


class TestRuling:
    @pytest.mark.parametrize(("arguments", "field"), [
        (dict(trigger="budget"), "trigger"),
        (dict(trigger="budget", ruling_="maybe"), "trigger"),
        (dict(ruling_="maybe"), "ruling"),
        (dict(ruling_="maybe", markdown=""), "ruling"),
        (dict(markdown=""), "rulingMarkdown"),
        (dict(markdown="x" * 512_001), "rulingMarkdown"),
        (dict(trigger="review_cycle_budget_exhausted", resolution=RESOLVED), "ruling"),
        (dict(resolution=None), "contradictionResolution"),
        (dict(resolution=ResolutionInput(upheld_finding_id=1, retired_finding_id=1, rationale="r")),
         "contradictionResolution"),
        (dict(resolution=ResolutionInput(upheld_finding_id=0, retired_finding_id=2, rationale="r")),
         "contradictionResolution"),
        (dict(resolution=ResolutionInput(upheld_finding_id=1, retired_finding_id=2, rationale="")),
         "contradictionResolution.rationale"),
        (dict(ruling_="approve", resolution=RESOLVED), "contradictionResolution"),
    ])
    def test_validation_in_its_order_each_a_400(self, arguments: dict, field: str) -> None:
        defaults = dict(resolution=RESOLVED)
        ruling(contradicted(), **(defaults | arguments)).then_rejects("invalid", field)

    def test_then_the_task_must_exist_in_the_project(self) -> None:
        ruling([], resolution=RESOLVED).then_rejects("not_found")
        ruling(contradicted(), resolution=RESOLVED, project="p2").then_rejects("not_found")

    def test_then_it_must_be_arbitrating_on_that_trigger(self) -> None:
        ruling(at_review(), resolution=RESOLVED).then_rejects("not_arbitrating")
        ruling(contradicted(), trigger="review_cycle_budget_exhausted", ruling_="approve").then_rejects(
            "trigger_mismatch")

    def test_rule_names_exactly_the_reported_pair_and_writes_the_addendum(self) -> None:
        other = ResolutionInput(upheld_finding_id=1, retired_finding_id=3, rationale="r")
        ruling(contradicted(), resolution=other).then_rejects("finding_mismatch")
        outcome = ruling(contradicted(), resolution=RESOLVED)
        [posted] = outcome.then("RulingPosted")
        assert outcome.and_state().status is TaskStatus.REVISING
        assert ("Finding [1] from [security reviewer] is upheld and must be addressed. Finding [2] from [style "
                "reviewer] is retired by arbitrator ruling and must NOT be addressed in this cycle.") in posted.addendum

    def test_approve_completes(self) -> None:
        outcome = ruling(contradicted(), ruling_="approve", resolution=None)
        outcome.then("RulingPosted", "TaskCompleted")

    def test_escalate_fails_with_the_first_500_code_points(self) -> None:
        markdown = "é" * 10 + "👩‍🔬" * 200 + "e\u0301" * 300
        _, failed = ruling(contradicted(), ruling_="escalate", markdown=markdown, resolution=None).then(
            "RulingPosted", "TaskFailed")
        assert failed.failure_reason is FailureReason.ARBITRATOR_ESCALATED
        assert failed.failure_detail == markdown[:500] and len(failed.failure_detail) == 500

    def test_a_second_ruling_is_a_conflict_and_a_second_contradiction_in_the_epoch_too(self) -> None:
        history = contradicted()
        history += arbitration.post_ruling(state_of(history), at(5), project_id="p1", trigger="reviewer_contradiction",
                                 ruling="rule", ruling_markdown="m", resolution=RESOLVED)
        ruling(history, resolution=RESOLVED).then_rejects("not_arbitrating")
        history = moved(moved(moved(history, "engineering"), "built", payload={"buildStatus": "clean"}), "reviewing")
        history = moved(cycle(history, REVISE, ("style", Verdict.APPROVE, 1, Severity.NOTE)), "engineering")
        # It could never be ruled, only stuck in arbitrating: the report itself is refused.
        given(evolve, history).when(t.transition, at(6, "engineer"), to="arbitrating",
                                    payload={"findingIds": [3, 4]}).then_rejects("arbitration_exists")

    def test_a_payload_key_no_transition_takes_is_refused(self) -> None:
        outcome = given(evolve, moved(moved(ONLY_TASK, "claimed"), "engineering")).when(
            t.transition, at(4), to="built", payload={"buildStatus": "clean", "commit_sha": "abc"})
        violation = outcome.then_rejects("invalid")
        assert violation.field == "commit_sha" and "buildStatus, commitSha" in str(violation)

    def test_nothing_but_a_ruling_leaves_arbitrating(self) -> None:
        for target in ("failed", "engineering", "completed", "revising"):
            payload = {"failureReason": "role_session_no_op"} if target == "failed" else {}
            given(evolve, contradicted()).when(t.transition, at(5), to=target, payload=payload).then_rejects(
                "illegal_transition")


class TestSessionsAndReset:
    def test_a_session_that_changed_nothing_fails_the_task(self) -> None:
        history = moved(ONLY_TASK, "claimed")
        history += t.end_role_session(state_of(history), at(2), role="engineer", exit_code=0)  # it claimed: fine
        assert state_of(history).status is TaskStatus.CLAIMED
        _, failed = given(evolve, history).when(t.end_role_session, at(3), role="engineer", exit_code=0).then(
            "RoleSessionEnded", "TaskFailed")
        assert failed.failure_reason is FailureReason.ROLE_SESSION_NO_OP

    def test_reviewers_side_by_side_each_made_progress(self) -> None:
        history = at_review()
        history += t.end_role_session(state_of(history), at(2), role="engineer", exit_code=0)
        history = reviewed(reviewed(history, "security"), "style")
        history += t.end_role_session(state_of(history), at(3), role="security", exit_code=0)
        given(evolve, history).when(t.end_role_session, at(3), role="style", exit_code=0).then("RoleSessionEnded")

    def test_a_non_zero_exit_leaves_the_task_where_it_is(self) -> None:
        given(evolve, moved(ONLY_TASK, "claimed")).when(t.end_role_session, at(3), role="engineer",
                                                        exit_code=1).then("RoleSessionEnded")

    def test_an_arbitrating_task_waits_on_its_arbitrator_alone(self) -> None:
        history = contradicted()
        for role in ("engineer", "security"):
            history += given(evolve, history).when(t.end_role_session, at(4), role=role, exit_code=0).then(
                "RoleSessionEnded")
        given(evolve, history).when(t.end_role_session, at(5), role="arbitrator", exit_code=1).then("RoleSessionEnded")
        # After a 409 (here: the wrong trigger) the arbitrator exits 0, and the no-op fails the task.
        ruling(history, trigger="review_cycle_budget_exhausted", ruling_="approve").then_rejects("trigger_mismatch")
        _, failed = given(evolve, history).when(t.end_role_session, at(5), role="arbitrator", exit_code=0).then(
            "RoleSessionEnded", "TaskFailed")
        assert failed.failure_reason is FailureReason.ROLE_SESSION_NO_OP

    def test_a_reset_starts_a_new_epoch_that_can_be_arbitrated_again(self) -> None:
        history = contradicted()
        history += arbitration.post_ruling(state_of(history), at(5), project_id="p1", trigger="reviewer_contradiction",
                                 ruling="escalate", ruling_markdown="m", resolution=None)
        given(evolve, moved(ONLY_TASK, "claimed")).when(t.reset, at(6)).then_rejects("illegal_transition")
        history += t.reset(state_of(history), at(6, "ops"))
        state = state_of(history)
        assert (state.status, state.epoch, state.review_cycle_count, state.ruled) == (TaskStatus.PENDING, 1, 0, ())
        history = moved(cycle(at_review(history), REVISE, ("style", Verdict.APPROVE, 1, Severity.NOTE)), "engineering")
        history = moved(history, "arbitrating", payload={"findingIds": [3, 4]})
        ruling(history, resolution=ResolutionInput(upheld_finding_id=3, retired_finding_id=4,
                                                   rationale="r")).then("RulingPosted")
