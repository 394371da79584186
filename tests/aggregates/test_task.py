"""PROTOCOLS.md section 5, rule by rule: the engineer/reviewer task FSM and its arbitration."""

from __future__ import annotations

import msgspec
import pytest

from athenaeum.aggregates import task_review as review
from athenaeum.aggregates.task import FAMILY
from athenaeum.events import Event
from athenaeum.events.task import (
    TASK_IDS,
    BuildStatus,
    FailureReason,
    ReviewOutcome,
    Ruling,
    Severity,
    TaskStatus,
    Trigger,
    Verdict,
)
from athenaeum.events.task_commands import (
    ClaimTask,
    Contradiction,
    CreateTask,
    EndRoleSession,
    FindingInput,
    PostReview,
    PostRuling,
    ResetTask,
    ResolutionInput,
    TransitionPayload,
    TransitionTask,
)
from tests.aggregates.given import at, decided, given


def create(title: str = "Add login", project: str = "p1") -> CreateTask:
    return CreateTask(project_id=project, title=title, plan_path="plans/login.md", review_cycle_budget=5)


ONLY_TASK = [e for e in decided(FAMILY, [], create(), at(0, "ops")) if e.tag == "TaskCreated"]


def state_of(history: list[Event]):  # type: ignore[no-untyped-def]
    return given(FAMILY, history).state


def to(target: TaskStatus, project: str = "p1", **payload: object) -> TransitionTask:
    return TransitionTask(project_id=project, task_id=1, to=target, payload=TransitionPayload(**payload))


def moved(history: list[Event], *targets: TaskStatus, **payload: object) -> list[Event]:
    for target in targets:
        history = history + decided(FAMILY, history, to(target, **payload), at(1, "engineer"))
    return history


def finding(severity: Severity = Severity.NOTE, title: str = "nit") -> FindingInput:
    return FindingInput(severity=severity, title=title, description="d", evidence="e", fix="f", file_path="a.py",
                        line=3)


def review_by(role: str, verdict: Verdict = Verdict.APPROVE, findings: list[FindingInput] | None = None,
              cycle: int = 0) -> PostReview:
    return PostReview(project_id="p1", task_id=1, cycle=cycle, reviewer_role=role, verdict=verdict,
                      raw_markdown="# review", findings=findings or [])


def reviewed(history: list[Event], role: str, verdict: Verdict = Verdict.APPROVE, findings: int = 0,
             severity: Severity = Severity.NOTE) -> list[Event]:
    command = review_by(role, verdict, [finding(severity) for _ in range(findings)],
                        cycle=state_of(history).review_cycle_count)
    return history + decided(FAMILY, history, command, at(2, role))


def at_review(history: list[Event] | None = None) -> list[Event]:
    history = moved(history or ONLY_TASK, TaskStatus.CLAIMED, TaskStatus.ENGINEERING)
    history = moved(history, TaskStatus.BUILT, build_status=BuildStatus.CLEAN, commit_sha="abc123")
    return moved(history, TaskStatus.REVIEWING)


def cycle(history: list[Event], *reviews: tuple[str, Verdict, int, Severity],
          ending: TaskStatus = TaskStatus.REVISING) -> list[Event]:
    for role, verdict, count, severity in reviews:
        history = reviewed(history, role, verdict, count, severity)
    return history + decided(FAMILY, history, to(ending), at(3, "dispatcher"))


def rebuilt(history: list[Event]) -> list[Event]:
    history = moved(history, TaskStatus.ENGINEERING)
    built = moved(history, TaskStatus.BUILT, build_status=BuildStatus.CLEAN, commit_sha="def456")
    return moved(built, TaskStatus.REVIEWING)


def ended(role: str, exit_code: int = 0) -> EndRoleSession:
    return EndRoleSession(project_id="p1", task_id=1, role=role, exit_code=exit_code)


REVISE = ("security", Verdict.REQUEST_CHANGES, 1, Severity.BLOCKING)
RESET = ResetTask(project_id="p1", task_id=1)


class TestCreation:
    def test_ids_are_issued_in_sequence_with_the_creation(self) -> None:
        issued, created = decided(FAMILY, [], create("x"), at())
        assert (issued.originator_id, issued.number, created.originator_id) == (TASK_IDS, 1, "task:1")
        again, second = decided(FAMILY, [issued], create("y"), at())
        assert (again.number, again.originator_version, second.originator_id) == (2, 2, "task:2")

    def test_a_creation_decides_on_the_counter_and_every_other_command_on_its_task(self) -> None:
        assert FAMILY.aggregate_of(create()) == TASK_IDS
        assert FAMILY.aggregate_of(ClaimTask(project_id="p1", task_id=7)) == "task:7"
        assert FAMILY.aggregate_of(to(TaskStatus.BUILT)) == "task:1"

    def test_each_aggregate_folds_only_its_own_events(self) -> None:
        issued, created = decided(FAMILY, [], create(), at())
        assert FAMILY.project(None, [issued]).last == 1
        assert FAMILY.project(None, [created]).status is TaskStatus.PENDING

    def test_a_task_may_be_its_title_alone(self) -> None:
        """The original's ``POST /tasks`` takes a title alone; a plan path, when given, is text."""
        [_, created] = given(FAMILY).when(CreateTask(project_id="p1", title="t"), at()).then("TaskIdIssued",
                                                                                               "TaskCreated")
        assert created.plan_path is None
        given(FAMILY).when(CreateTask(project_id="p1", title="t", plan_path=" "), at()).then_rejects(
            "invalid", "planPath")

    def test_a_title_is_at_most_1024_characters_whatever_their_bytes(self) -> None:
        assert decided(FAMILY, [], create("é" * 1024), at())
        assert "1024 characters" in str(given(FAMILY).when(create("é" * 1025), at()).then_rejects("invalid", "title"))


class TestEdges:
    @pytest.mark.parametrize(("path", "status"), [
        ([TaskStatus.CLAIMED], TaskStatus.CLAIMED),
        ([TaskStatus.CLAIMED, TaskStatus.ENGINEERING], TaskStatus.ENGINEERING)])
    def test_the_fsm_edges(self, path: list[TaskStatus], status: TaskStatus) -> None:
        assert state_of(moved(ONLY_TASK, *path)).status is status

    @pytest.mark.parametrize(("path", "target"), [
        ([], TaskStatus.ENGINEERING), ([], TaskStatus.BUILT), ([], TaskStatus.REVIEWING), ([], TaskStatus.COMPLETED),
        ([], TaskStatus.ARBITRATING), ([TaskStatus.CLAIMED], TaskStatus.CLAIMED),
        ([TaskStatus.CLAIMED], TaskStatus.REVIEWING),
        ([TaskStatus.CLAIMED, TaskStatus.ENGINEERING], TaskStatus.REVIEWING),
        ([TaskStatus.CLAIMED, TaskStatus.ENGINEERING], TaskStatus.PENDING)])
    def test_anything_else_is_an_illegal_transition(self, path: list[TaskStatus], target: TaskStatus) -> None:
        given(FAMILY, moved(ONLY_TASK, *path)).when(
            to(target, build_status=BuildStatus.CLEAN, finding_ids=[1, 2]), at(2)
        ).then_rejects("illegal_transition")

    def test_a_build_report_needs_its_status_and_commit(self) -> None:
        history = moved(ONLY_TASK, TaskStatus.CLAIMED, TaskStatus.ENGINEERING)
        given(FAMILY, history).when(to(TaskStatus.BUILT, commit_sha="abc"), at(2)).then_rejects("invalid", "buildStatus")
        for sha in (None, ""):
            given(FAMILY, history).when(to(TaskStatus.BUILT, build_status=BuildStatus.CLEAN, commit_sha=sha),
                                        at(2)).then_rejects("invalid", "commitSha")
        dirty = to(TaskStatus.BUILT, build_status=BuildStatus.DIRTY, commit_sha="f" * 128)
        [built] = given(FAMILY, history).when(dirty, at(2)).then("BuildReported")
        assert (built.build_status, built.commit_sha) == (BuildStatus.DIRTY, "f" * 128)

    def test_a_key_another_transition_takes_is_let_be(self) -> None:
        history = moved(ONLY_TASK, TaskStatus.CLAIMED)
        given(FAMILY, history).when(to(TaskStatus.ENGINEERING, build_status=BuildStatus.CLEAN, notes="n"),
                                    at(2)).then("EngineeringStarted")

    def test_the_edge_is_checked_before_the_payload(self) -> None:
        """As in the original: a transition off the FSM is 409 whatever its payload lacks."""
        given(FAMILY, ONLY_TASK).when(to(TaskStatus.BUILT), at(2)).then_rejects("illegal_transition")
        given(FAMILY, contradicted()).when(to(TaskStatus.FAILED), at(2)).then_rejects("illegal_transition")

    def test_a_completed_task_is_integrated_and_stays_so(self) -> None:
        done = cycle(at_review(), ("a", Verdict.APPROVE, 0, Severity.NOTE), ending=TaskStatus.COMPLETED)
        given(FAMILY, at_review()).when(to(TaskStatus.INTEGRATED), at(4)).then_rejects("illegal_transition")
        integrated = done + given(FAMILY, done).when(to(TaskStatus.INTEGRATED), at(4)).then("TaskIntegrated")
        assert state_of(integrated).status is TaskStatus.INTEGRATED
        for command in (RESET, to(TaskStatus.FAILED, failure_reason=FailureReason.ROLE_SESSION_NO_OP)):
            given(FAMILY, integrated).when(command, at(5)).then_rejects("illegal_transition")

    def test_a_failure_needs_its_reason(self) -> None:
        given(FAMILY, ONLY_TASK).when(to(TaskStatus.FAILED), at(2)).then_rejects("invalid", "failureReason")
        [failed] = given(FAMILY, ONLY_TASK).when(
            to(TaskStatus.FAILED, failure_reason=FailureReason.ENGINEER_BUILD_FAILURE, failure_detail="d" * 4096), at(2)
        ).then("TaskFailed")
        assert (failed.failure_reason, failed.failure_detail) == (FailureReason.ENGINEER_BUILD_FAILURE, "d" * 4096)

    def test_a_task_of_another_project_is_not_found(self) -> None:
        given(FAMILY, ONLY_TASK).when(ClaimTask(project_id="p2", task_id=1), at(2)).then_rejects("not_found", "taskId")
        given(FAMILY).when(ClaimTask(project_id="p1", task_id=1), at(2)).then_rejects("not_found", "taskId")
        for command in (to(TaskStatus.CLAIMED), review_by("security"), ended("engineer"), RESET):
            elsewhere = msgspec.structs.replace(command, project_id="p2")
            given(FAMILY, ONLY_TASK).when(elsewhere, at(2)).then_rejects("not_found", "taskId")


class TestReviews:
    def test_one_review_per_role_per_cycle_with_ledger_finding_ids(self) -> None:
        history = reviewed(at_review(), "security", findings=2)
        assert [f.id for f in history[-1].findings] == [1, 2]
        given(FAMILY, history).when(review_by("security"), at(3)).then_rejects("already_exists", "reviewerRole")
        [second] = given(FAMILY, history).when(review_by("style", findings=[finding()]), at(3)).then("ReviewPosted")
        assert second.findings[0].id == 3

    def test_while_reviewing_a_reviewer_records_a_verdict(self) -> None:
        """The original's fan-out posts ``reviewing → reviewing`` with each reviewer's verdict."""
        [noted] = given(FAMILY, at_review()).when(
            to(TaskStatus.REVIEWING, reviewer_role="safety", verdict=Verdict.OUT_OF_SCOPE), at(3)).then(
            "VerdictRecorded")
        assert (noted.reviewer_role, noted.verdict) == ("safety", Verdict.OUT_OF_SCOPE)
        for payload, field in [(dict(verdict=Verdict.APPROVE), "reviewerRole"),
                               (dict(reviewer_role="safety reviewer", verdict=Verdict.APPROVE), "reviewerRole"),
                               (dict(reviewer_role="a" * 65, verdict=Verdict.APPROVE), "reviewerRole"),
                               (dict(reviewer_role="safety"), "verdict")]:
            given(FAMILY, at_review()).when(to(TaskStatus.REVIEWING, **payload), at(3)).then_rejects("invalid", field)

    def test_reviews_only_while_reviewing_the_current_cycle(self) -> None:
        given(FAMILY, ONLY_TASK).when(review_by("security"), at(3)).then_rejects("illegal_transition")
        given(FAMILY, at_review()).when(review_by("security", cycle=1), at(3)).then_rejects(
            "illegal_transition", "cycle")

    def test_a_role_is_a_short_token(self) -> None:
        given(FAMILY, at_review()).when(review_by("sec urity"), at(3)).then_rejects("invalid", "reviewerRole")

    def test_no_reviews_is_incomplete(self) -> None:
        given(FAMILY, at_review()).when(to(TaskStatus.COMPLETED), at(3)).then_rejects("illegal_transition")

    def test_a_cycle_ends_only_as_its_reviews_call_for(self) -> None:
        """``completed`` after reviews that call for revising, or ``revising`` after clean
        ones, is refused with the reason, as the original refuses them (409)."""
        revise = reviewed(at_review(), *REVISE)
        refused = given(FAMILY, revise).when(to(TaskStatus.COMPLETED), at(3)).then_rejects("illegal_transition", "to")
        assert "security requested changes" in str(refused)
        clean = reviewed(at_review(), "a")
        refused = given(FAMILY, clean).when(to(TaskStatus.REVISING), at(3)).then_rejects("illegal_transition", "to")
        assert "no revision trigger fired" in str(refused)


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
        accepted = cycle(at_review(), ("a", Verdict.APPROVE, 0, Severity.NOTE), ending=TaskStatus.COMPLETED)
        assert state_of(accepted).status is TaskStatus.COMPLETED
        revised = cycle(at_review(), REVISE)
        assert (state_of(revised).status, state_of(revised).review_cycle_count) == (TaskStatus.REVISING, 1)

    def test_the_sixth_revise_on_a_budget_of_five_goes_to_arbitration_with_count_six(self) -> None:
        history = at_review()
        for number in range(1, 6):
            history = cycle(history, REVISE)
            assert state_of(history).status is TaskStatus.REVISING and state_of(history).review_cycle_count == number
            history = rebuilt(history)
        history = cycle(history, REVISE)
        state = state_of(history)
        assert (state.status, state.review_cycle_count, state.pending_trigger) == (
            TaskStatus.ARBITRATING, 6, Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED)


def contradicted() -> list[Event]:
    history = cycle(at_review(), ("security", Verdict.REQUEST_CHANGES, 1, Severity.BLOCKING),
                    ("style", Verdict.APPROVE, 1, Severity.NOTE))
    history = moved(history, TaskStatus.ENGINEERING)
    return moved(history, TaskStatus.ARBITRATING, finding_ids=[1, 2], notes="cannot do both")


RESOLVED = ResolutionInput(upheld_finding_id=1, retired_finding_id=2, rationale="security first")


def rule(trigger: Trigger = Trigger.REVIEWER_CONTRADICTION, ruling: Ruling = Ruling.RULE, markdown: str = "reasoning",
         resolution: ResolutionInput | None = None, project: str = "p1") -> PostRuling:
    return PostRuling(project_id=project, task_id=1, trigger=trigger, ruling=ruling, ruling_markdown=markdown,
                      contradiction_resolution=resolution)


def ruled(history: list[Event], **fields: object):  # type: ignore[no-untyped-def]
    return given(FAMILY, history).when(rule(**fields), at(5, "arbitrator"))  # type: ignore[arg-type]


class TestContradiction:
    def test_a_contradiction_keeps_its_ids(self) -> None:
        state = state_of(contradicted())
        assert (state.status, state.pending_trigger, state.contradiction) == (
            TaskStatus.ARBITRATING, Trigger.REVIEWER_CONTRADICTION, (1, 2))

    def test_the_originals_nested_report_names_its_trigger(self) -> None:
        history = moved(cycle(at_review(), REVISE, ("style", Verdict.APPROVE, 1, Severity.NOTE)),
                        TaskStatus.ENGINEERING)
        nested = Contradiction(finding_ids=[2, 1], notes="cannot do both")
        reported, _ = given(FAMILY, history).when(to(TaskStatus.ARBITRATING, trigger=Trigger.REVIEWER_CONTRADICTION,
                                                     contradiction=nested), at(4)).then(
            "ContradictionReported", "ArbitrationRequested")
        assert (reported.finding_ids, reported.notes) == ((2, 1), "cannot do both")
        for payload, field in [({}, "trigger"), (dict(trigger=Trigger.REVIEWER_CONTRADICTION), "findingIds"),
                               (dict(trigger=Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED, contradiction=nested), "trigger"),
                               (dict(contradiction=nested, finding_ids=[1, 2]), "contradiction")]:
            given(FAMILY, history).when(to(TaskStatus.ARBITRATING, **payload), at(4)).then_rejects("invalid", field)

    @pytest.mark.parametrize("ids", [[], [1, 1], [1, 9], [1], [1, 2, 3]])
    def test_the_ids_are_two_different_findings_of_the_latest_cycle(self, ids: list[int]) -> None:
        history = cycle(at_review(), REVISE, ("style", Verdict.APPROVE, 1, Severity.NOTE))
        history = moved(history, TaskStatus.ENGINEERING)
        given(FAMILY, history).when(to(TaskStatus.ARBITRATING, finding_ids=ids), at(4)).then_rejects(
            "invalid", "findingIds")

    def test_only_from_engineering(self) -> None:
        given(FAMILY, at_review()).when(to(TaskStatus.ARBITRATING, finding_ids=[1, 2]), at(4)).then_rejects(
            "illegal_transition")


class TestRuling:
    @pytest.mark.parametrize(("fields", "field"), [
        (dict(markdown=""), "rulingMarkdown"),
        (dict(markdown="x" * 512_001), "rulingMarkdown"),
        (dict(ruling=Ruling.APPROVE, markdown=""), "rulingMarkdown"),
        (dict(trigger=Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED, resolution=RESOLVED), "ruling"),
        (dict(trigger=Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED, resolution=None), "ruling"),
        (dict(resolution=None), "contradictionResolution"),
        (dict(resolution=ResolutionInput(upheld_finding_id=1, retired_finding_id=1, rationale="r")),
         "contradictionResolution"),
        (dict(resolution=ResolutionInput(upheld_finding_id=0, retired_finding_id=2, rationale="r")),
         "contradictionResolution"),
        (dict(resolution=ResolutionInput(upheld_finding_id=1, retired_finding_id=2, rationale="")),
         "contradictionResolution.rationale"),
        (dict(ruling=Ruling.APPROVE, resolution=RESOLVED), "contradictionResolution"),
    ])
    def test_validation_in_its_order_each_a_400(self, fields: dict, field: str) -> None:
        ruled(contradicted(), **({"resolution": RESOLVED} | fields)).then_rejects("invalid", field)

    def test_the_body_is_checked_before_the_task_exists(self) -> None:
        ruled([], markdown="").then_rejects("invalid", "rulingMarkdown")

    def test_then_the_task_must_exist_in_the_project(self) -> None:
        ruled([], resolution=RESOLVED).then_rejects("not_found")
        ruled(contradicted(), resolution=RESOLVED, project="p2").then_rejects("not_found")

    def test_then_it_must_be_arbitrating_on_that_trigger(self) -> None:
        ruled(at_review(), resolution=RESOLVED).then_rejects("not_arbitrating")
        ruled(contradicted(), trigger=Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED, ruling=Ruling.APPROVE).then_rejects(
            "trigger_mismatch", "trigger")

    def test_rule_names_exactly_the_reported_pair_and_writes_the_addendum(self) -> None:
        other = ResolutionInput(upheld_finding_id=1, retired_finding_id=3, rationale="r")
        ruled(contradicted(), resolution=other).then_rejects("finding_mismatch")
        outcome = ruled(contradicted(), resolution=RESOLVED)
        [posted] = outcome.then("RulingPosted")
        assert outcome.and_state().status is TaskStatus.REVISING
        assert ("Finding [1] from [security reviewer] is upheld and must be addressed. Finding [2] from [style "
                "reviewer] is retired by arbitrator ruling and must NOT be addressed in this cycle.") in posted.addendum

    def test_approve_completes(self) -> None:
        ruled(contradicted(), ruling=Ruling.APPROVE).then("RulingPosted", "TaskCompleted")

    def test_escalate_fails_with_the_first_500_code_points(self) -> None:
        markdown = "é" * 10 + "👩‍🔬" * 200 + "e\u0301" * 300
        _, failed = ruled(contradicted(), ruling=Ruling.ESCALATE, markdown=markdown).then("RulingPosted", "TaskFailed")
        assert failed.failure_reason is FailureReason.ARBITRATOR_ESCALATED
        assert failed.failure_detail == markdown[:500] and len(failed.failure_detail) == 500

    def test_a_second_ruling_is_a_conflict_and_a_second_contradiction_in_the_epoch_too(self) -> None:
        history = contradicted()
        history += decided(FAMILY, history, rule(markdown="m", resolution=RESOLVED), at(5))
        ruled(history, resolution=RESOLVED).then_rejects("not_arbitrating")
        history = moved(cycle(rebuilt(history), REVISE, ("style", Verdict.APPROVE, 1, Severity.NOTE)),
                        TaskStatus.ENGINEERING)
        # It could never be ruled, only stuck in arbitrating: the report itself is refused.
        given(FAMILY, history).when(to(TaskStatus.ARBITRATING, finding_ids=[3, 4]), at(6, "engineer")).then_rejects(
            "arbitration_exists", "findingIds")

    def test_nothing_but_a_ruling_leaves_arbitrating(self) -> None:
        for target in (TaskStatus.FAILED, TaskStatus.ENGINEERING, TaskStatus.COMPLETED, TaskStatus.REVISING):
            given(FAMILY, contradicted()).when(to(target, failure_reason=FailureReason.ROLE_SESSION_NO_OP),
                                               at(5)).then_rejects("illegal_transition")


class TestSessionsAndReset:
    def test_a_session_that_changed_nothing_fails_the_task(self) -> None:
        history = moved(ONLY_TASK, TaskStatus.CLAIMED)
        history += decided(FAMILY, history, ended("engineer"), at(2))  # it claimed: fine
        assert state_of(history).status is TaskStatus.CLAIMED
        _, failed = given(FAMILY, history).when(ended("engineer"), at(3)).then("RoleSessionEnded", "TaskFailed")
        assert failed.failure_reason is FailureReason.ROLE_SESSION_NO_OP

    def test_reviewers_side_by_side_each_made_progress(self) -> None:
        history = at_review()
        history += decided(FAMILY, history, ended("engineer"), at(2))
        history = reviewed(reviewed(history, "security"), "style")
        history += decided(FAMILY, history, ended("security"), at(3))
        given(FAMILY, history).when(ended("style"), at(3)).then("RoleSessionEnded")

    def test_a_non_zero_exit_leaves_the_task_where_it_is(self) -> None:
        given(FAMILY, moved(ONLY_TASK, TaskStatus.CLAIMED)).when(ended("engineer", 1), at(3)).then("RoleSessionEnded")

    def test_a_role_is_a_short_token(self) -> None:
        given(FAMILY, ONLY_TASK).when(ended("engi neer"), at(3)).then_rejects("invalid", "role")

    def test_an_arbitrating_task_waits_on_its_arbitrator_alone(self) -> None:
        history = contradicted()
        for role in ("engineer", "security"):
            history += given(FAMILY, history).when(ended(role), at(4)).then("RoleSessionEnded")
        given(FAMILY, history).when(ended("arbitrator", 1), at(5)).then("RoleSessionEnded")
        # After a 409 (here: the wrong trigger) the arbitrator exits 0, and the no-op fails the task.
        ruled(history, trigger=Trigger.REVIEW_CYCLE_BUDGET_EXHAUSTED, ruling=Ruling.APPROVE).then_rejects(
            "trigger_mismatch")
        _, failed = given(FAMILY, history).when(ended("arbitrator"), at(5)).then("RoleSessionEnded", "TaskFailed")
        assert failed.failure_reason is FailureReason.ROLE_SESSION_NO_OP

    def test_a_reset_starts_a_new_epoch_that_can_be_arbitrated_again(self) -> None:
        history = contradicted()
        history += decided(FAMILY, history, rule(ruling=Ruling.ESCALATE, markdown="m"), at(5))
        given(FAMILY, moved(ONLY_TASK, TaskStatus.CLAIMED)).when(RESET, at(6)).then_rejects("illegal_transition")
        history += decided(FAMILY, history, RESET, at(6, "ops"))
        state = state_of(history)
        assert (state.status, state.epoch, state.review_cycle_count, state.ruled) == (TaskStatus.PENDING, 1, 0, ())
        history = cycle(at_review(history), REVISE, ("style", Verdict.APPROVE, 1, Severity.NOTE))
        history = moved(moved(history, TaskStatus.ENGINEERING), TaskStatus.ARBITRATING, finding_ids=[3, 4])
        ruled(history, resolution=ResolutionInput(upheld_finding_id=3, retired_finding_id=4,
                                                  rationale="r")).then("RulingPosted")


def decode(kind: type, **body: object) -> object:
    """A command as the edge decodes it: JSON, camelCase, strict."""
    return msgspec.json.decode(msgspec.json.encode({"projectId": "p1", "taskId": 1, **body}), type=kind)


class TestDecoding:
    """What never reaches a rule: the edge refuses it, and the error's path names the field."""

    def test_a_transition_decodes_into_its_typed_payload(self) -> None:
        command = decode(TransitionTask, to="built", payload={"buildStatus": "clean", "commitSha": "f" * 128})
        assert command == to(TaskStatus.BUILT, build_status=BuildStatus.CLEAN, commit_sha="f" * 128)
        assert decode(TransitionTask, to="reviewing") == to(TaskStatus.REVIEWING)

    @pytest.mark.parametrize("target", ["done", "Built", "", 3, None])
    def test_a_status_outside_the_fsm_is_refused(self, target: object) -> None:
        with pytest.raises(msgspec.ValidationError, match=r"at `\$\.to`"):
            decode(TransitionTask, to=target)

    def test_a_misspelt_payload_key_is_refused(self) -> None:
        with pytest.raises(msgspec.ValidationError, match=r"unknown field `commit_sha` - at `\$\.payload`"):
            decode(TransitionTask, to="built", payload={"buildStatus": "clean", "commit_sha": "abc"})

    @pytest.mark.parametrize("ids", [[True, 2], [1, False], [1.0, 2], ["1", 2], "1,2", {"a": 1}])
    def test_a_finding_id_is_an_integer_and_not_a_boolean(self, ids: object) -> None:
        with pytest.raises(msgspec.ValidationError, match=r"at `\$\.payload\.findingIds"):
            decode(TransitionTask, to="arbitrating", payload={"findingIds": ids})

    @pytest.mark.parametrize(("key", "value"), [
        ("commitSha", "f" * 129), ("commitSha", 7), ("notes", "n" * 32_769), ("failureDetail", "d" * 4097),
        ("buildStatus", "green"), ("failureReason", "tired")])
    def test_a_payload_value_out_of_its_type_or_length_is_refused(self, key: str, value: object) -> None:
        with pytest.raises(msgspec.ValidationError, match=rf"at `\$\.payload\.{key}`"):
            decode(TransitionTask, to="built", payload={"buildStatus": "clean", key: value})

    def test_lengths_count_characters_not_bytes(self) -> None:
        command = decode(TransitionTask, to="failed", payload={"failureReason": "engineer_build_failure",
                                                               "failureDetail": "é" * 4096, "commitSha": "é" * 128})
        assert len(command.payload.failure_detail) == 4096  # type: ignore[attr-defined]

    @pytest.mark.parametrize(("body", "field"), [
        ({"trigger": "budget", "ruling": "approve"}, "trigger"),
        ({"trigger": "budget", "ruling": "maybe"}, "trigger"),  # in the body's order: trigger first
        ({"trigger": "reviewer_contradiction", "ruling": "maybe"}, "ruling"),
        ({"trigger": "reviewer_contradiction", "ruling": "maybe", "rulingMarkdown": ""}, "ruling"),
        ({"trigger": "reviewer_contradiction", "ruling": "RULE"}, "ruling"),
        ({"ruling": "approve"}, "trigger"),
    ])
    def test_a_trigger_or_ruling_outside_its_enum_is_refused(self, body: dict, field: str) -> None:
        with pytest.raises(msgspec.ValidationError, match=rf"`(\$\.)?{field}`"):
            decode(PostRuling, **body)

    @pytest.mark.parametrize(("body", "field"), [
        ({"reviewerRole": "r", "verdict": "approve"}, "cycle"),
        ({"cycle": -1, "reviewerRole": "r", "verdict": "approve"}, "cycle"),
        ({"cycle": 0, "reviewerRole": "r", "verdict": "approve",
          "findings": [{"severity": "NOTE", "title": "t", "ordinal": -1}]}, "ordinal"),
    ])
    def test_a_review_names_its_cycle_and_counts_from_zero(self, body: dict, field: str) -> None:
        with pytest.raises(msgspec.ValidationError, match=rf"`(\$\.)?({field}|findings\[0\]\.{field})`"):
            decode(PostReview, **body)

    def test_a_ruling_decodes_into_its_enums(self) -> None:
        command = decode(PostRuling, trigger="reviewer_contradiction", ruling="rule", rulingMarkdown="m",
                         contradictionResolution={"upheldFindingId": 1, "retiredFindingId": 2, "rationale": "r"})
        assert command == rule(markdown="m", resolution=ResolutionInput(upheld_finding_id=1, retired_finding_id=2,
                                                                        rationale="r"))
