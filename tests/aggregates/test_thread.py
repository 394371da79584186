"""PROTOCOLS.md section 3, rule by rule: dialogue threads with scored entries."""

from __future__ import annotations

import pytest

from athenaeum.aggregates import thread as t
from athenaeum.aggregates.thread_state import Status, evolve
from athenaeum.events import Event
from athenaeum.events.thread import EntryKind, Vector
from tests.aggregates.given import at, given

TARGET = Vector(1.0, 1.0, 1.0)
GOOD = Vector(0.5, 0.5, 0.5)


def opened(participants: tuple[str, ...] = ("bob", "carol")) -> list[Event]:
    return t.open_thread(None, at(0, "alice"), slug="canon-rules", text="How do pages become canon?", target=TARGET,
                         body="A first take.", questions=["Who approves?"], participants=participants)


def state_of(history: list[Event]):  # type: ignore[no-untyped-def]
    return given(evolve, history).state


def contributed(history: list[Event], *authors: str, v: Vector = GOOD) -> list[Event]:
    for hour, author in enumerate(authors, start=1):
        history = history + t.contribute(state_of(history), at(hour, author), body=f"by {author}", evaluation=v)
    return history


def closed(history: list[Event], author: str = "carol", v: Vector = GOOD) -> list[Event]:
    state = state_of(history)
    total = state.current + v
    return history + t.close(state, at(9, author), evaluation=v, current=total, summary="We agree.",
                             pages=["wiki/canon/rules.md"], patch_summary="Add the approval rule.")


class TestOpening:
    def test_opening_writes_the_context_and_the_first_entry_without_an_evaluation(self) -> None:
        opened_event, first = given(evolve).when(
            t.open_thread, at(0, "alice"), slug="canon-rules", text="ctx", target=TARGET, body="first",
            questions=["Q?"], participants=["bob"]).then("ThreadOpened", "EntryAppended")
        assert [q.id for q in opened_event.open_questions] == ["OQ-1"]
        assert opened_event.participants == ("alice", "bob")
        assert (first.n, first.kind, first.last_eval) == (1, EntryKind.CONTRIBUTION, None)

    def test_a_slug_is_opened_once(self) -> None:
        given(evolve, opened()).when(t.open_thread, at(1), slug="canon-rules", text="c", target=TARGET,
                                     body="b").then_rejects("already_exists")

    @pytest.mark.parametrize("target", [Vector(0, 1, 1), Vector(1, -1, 1), Vector(1e308, 1, 1),
                                        Vector(float("nan"), 1, 1), Vector(float("inf"), 1, 1)])
    def test_every_target_axis_is_above_zero(self, target: Vector) -> None:
        given(evolve).when(t.open_thread, at(), slug="x", text="c", target=target, body="b").then_rejects(
            "invalid", "target")

    def test_questions_are_appended_with_the_next_number(self) -> None:
        [added] = given(evolve, opened()).when(t.ask, at(1, "bob"), question="And stale pages?").then(
            "OpenQuestionAdded")
        assert added.oq_id == "OQ-2"


class TestEntries:
    def test_an_entry_scores_the_preceding_one_and_the_sum_runs(self) -> None:
        history = contributed(opened(), "bob", "carol")
        assert state_of(history).current == Vector(1.0, 1.0, 1.0) and state_of(history).last_n == 3

    def test_an_entry_after_the_first_needs_an_evaluation(self) -> None:
        given(evolve, opened()).when(t.contribute, at(1, "bob"), body="b", evaluation=None).then_rejects(
            "missing_last_eval")

    def test_the_reference_when_given_is_the_preceding_entry(self) -> None:
        given(evolve, opened()).when(t.contribute, at(1, "bob"), body="b", evaluation=GOOD, ref=0).then_rejects(
            "bad_eval_ref")
        [entry] = given(evolve, opened()).when(t.contribute, at(1, "bob"), body="b", evaluation=GOOD, ref=1).then(
            "EntryAppended")
        assert entry.last_eval.ref == 1

    @pytest.mark.parametrize("v", [Vector(1.01, 0, 0), Vector(0, -0.1, 0), Vector(0, 0, 2)])
    def test_evaluations_lie_in_zero_to_one(self, v: Vector) -> None:
        given(evolve, opened()).when(t.contribute, at(1, "bob"), body="b", evaluation=v).then_rejects("invalid", "eval")

    def test_no_self_evaluation_and_no_two_consecutive_entries_by_one_author(self) -> None:
        given(evolve, opened()).when(t.contribute, at(1, "alice"), body="b", evaluation=GOOD).then_rejects(
            "self_evaluation")
        history = contributed(opened(), "bob")
        given(evolve, history).when(t.contribute, at(2, "bob"), body="b", evaluation=GOOD).then_rejects(
            "self_evaluation")


class TestClosure:
    def test_a_closure_states_the_sum_including_its_own_evaluation(self) -> None:
        history = closed(contributed(opened(), "bob"))
        state = state_of(history)
        assert state.status is Status.AWAITING_CRYSTALLIZATION and state.closure.current_at_close == Vector(1, 1, 1)

    @pytest.mark.parametrize(("stated", "accepted"), [(1.01, True), (0.99, True), (1.02, False), (0.98, False)])
    def test_current_at_close_within_a_hundredth(self, stated: float, accepted: bool) -> None:
        history = contributed(opened(), "bob")  # sum after the closure's own evaluation: 1.0 per axis
        outcome = given(evolve, history).when(
            t.close, at(5, "carol"), evaluation=GOOD, current=Vector(stated, 1.0, 1.0), summary="s",
            pages=["wiki/p.md"], patch_summary="p")
        if accepted:
            outcome.then("EntryAppended")
        else:
            outcome.then_rejects("current_mismatch", "current")

    def test_a_closure_needs_a_summary_pages_and_a_patch_summary(self) -> None:
        history = contributed(opened(), "bob")
        base = dict(evaluation=GOOD, current=Vector(1, 1, 1), summary="s", pages=["wiki/p.md"], patch_summary="p")
        for field, value, code_field in [("summary", " ", "summary"), ("pages", [], "pages"),
                                         ("pages", ["wiki/p.md", "wiki/p.md"], "pages"),
                                         ("pages", [f"wiki/{i}.md" for i in range(51)], "pages"),
                                         ("pages", ["../etc"], "pages"), ("patch_summary", "", "patch_summary")]:
            given(evolve, history).when(t.close, at(5, "carol"), **(base | {field: value})).then_rejects(
                "invalid", code_field)

    def test_nothing_is_appended_after_a_closure(self) -> None:
        history = closed(contributed(opened(), "bob"))
        given(evolve, history).when(t.contribute, at(10, "bob"), body="late", evaluation=GOOD).then_rejects(
            "thread_closed")
        given(evolve, history).when(t.ask, at(10, "bob"), question="late?").then_rejects("thread_not_open")


class TestReopen:
    def test_a_reopen_evaluates_the_closure_and_the_sum_continues(self) -> None:
        history = closed(contributed(opened(), "bob"))
        entry, reopened = given(evolve, history).when(
            t.reopen, at(10, "bob"), evaluation=Vector(0.1, 0.2, 0.3), reason="premature", discovery="new fact"
        ).then("EntryAppended", "ThreadReopened")
        assert (reopened.closure_n, reopened.reopen_n, entry.last_eval.ref) == (3, 4, 3)
        state = state_of([*history, entry, reopened])
        assert state.status is Status.OPEN and state.current == Vector(1.1, 1.2, 1.3)

    def test_a_thread_without_a_closure_cannot_be_reopened(self) -> None:
        given(evolve, opened()).when(t.reopen, at(1, "bob"), evaluation=GOOD, reason="r",
                                     discovery="d").then_rejects("thread_not_closed")

    def test_a_closure_is_reopened_once_and_a_later_closure_once_more(self) -> None:
        history = closed(contributed(opened(), "bob"))
        history += t.reopen(state_of(history), at(10, "bob"), evaluation=GOOD, reason="r", discovery="d")
        given(evolve, history).when(t.reopen, at(11, "alice"), evaluation=GOOD, reason="again",
                                    discovery="d").then_rejects("reopen_exhausted")
        history = closed(history, author="alice")
        assert state_of(history).closure.n == 5
        given(evolve, history).when(t.reopen, at(12, "carol"), evaluation=GOOD, reason="r2",
                                    discovery="d2").then("EntryAppended", "ThreadReopened")

    def test_the_closer_cannot_reopen_its_own_closure(self) -> None:
        history = closed(contributed(opened(), "bob"))
        given(evolve, history).when(t.reopen, at(10, "carol"), evaluation=GOOD, reason="r",
                                    discovery="d").then_rejects("self_evaluation")


class TestHumanDecision:
    def test_only_a_human_recognizes_and_only_a_pending_closure(self) -> None:
        history = closed(contributed(opened(), "bob"))
        given(evolve, history).when(t.recognize, at(10, "bob")).then_rejects("not_human")
        given(evolve, opened()).when(t.recognize, at(10, "ada")).then_rejects("thread_not_closed")

    def test_recognition_below_target_is_recorded_and_crystallizes(self) -> None:
        history = closed(opened(), author="bob", v=Vector(0.5, 0.9, 0.2))
        recognized, crystallized = given(evolve, history).when(t.recognize, at(10, "ada")).then(
            "ClosureRecognized", "ThreadCrystallized")
        assert recognized.under_target and crystallized.canon_pages == ("wiki/canon/rules.md",)
        assert state_of([*history, recognized, crystallized]).status is Status.CRYSTALLIZED

    def test_a_refusal_cites_the_deficits_and_a_reopen_follows(self) -> None:
        history = closed(opened(), author="bob", v=Vector(0.5, 0.9, 0.2))
        [refused] = given(evolve, history).when(t.refuse, at(10, "ada"), reason="not there yet").then(
            "ClosureRefused")
        assert refused.deficits == Vector(0.5, 0.1, 0.8)
        history.append(refused)
        assert state_of(history).status is Status.CLOSED_WITHOUT_CRYSTALLIZATION
        given(evolve, history).when(t.reopen, at(11, "carol"), evaluation=GOOD, reason="r",
                                    discovery="d").then("EntryAppended", "ThreadReopened")

    def test_a_refusal_at_target_cites_nothing(self) -> None:
        history = closed(contributed(opened(), "bob"))
        [refused] = given(evolve, history).when(t.refuse, at(10, "ada"), reason="wrong pages").then("ClosureRefused")
        assert refused.deficits is None
