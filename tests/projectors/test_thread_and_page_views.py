"""Thread, fleet and page views, folded from real rule outcomes."""

from __future__ import annotations

from datetime import timedelta

import msgspec

from athenaeum.aggregates.fleet import FAMILY as FLEET
from athenaeum.aggregates.page import FAMILY as PAGE
from athenaeum.aggregates.thread import FAMILY as THREAD
from athenaeum.events import Event
from athenaeum.events.page import Endorsing
from athenaeum.events.fleet_commands import RegisterAgent
from athenaeum.events.page_commands import DisputePage, EndorsePage, InitPage, ReadPage
from athenaeum.events.thread import Vector
from athenaeum.events.thread_commands import RefuseClosure, ReopenThread
from athenaeum.projectors.thread_records import render
from tests.aggregates.given import T0, at, decided
from tests.aggregates.test_thread import closed, contributed, opened
from tests.projectors.test_ratification_views import items, views

A = "a.md"  # the page wiki/a.md
INIT = InitPage(page=A, content="# A\n")


def read(session: str) -> ReadPage:
    return ReadPage(page=A, session_id=session)


def endorse(status: Endorsing = Endorsing.ACCEPTED, session: str = "s") -> EndorsePage:
    return EndorsePage(page=A, status=status, session_id=session)


def test_the_thread_view_derives_sum_deficit_momentum_and_role() -> None:
    history = contributed(opened(), "bob", v=Vector(0.9, 0.8, 0.1))
    document = views(history)[("threads", "canon-rules")]
    assert document["current"] == {"N": 0.9, "C": 0.8, "R": 0.1}
    assert document["deficit"] == {"N": 0.1, "C": 0.2, "R": 0.9}
    assert document["suggested_role"] == "critic" and max(document["momentum"], key=document["momentum"].get) == "R"
    assert document["orientation"]["alice"] == {"N": 0.7448, "C": 0.6621, "R": 0.0828}
    assert [(e["n"], e["author"], e["last_eval"]) for e in document["entries"]] == [
        (1, "alice", None), (2, "bob", {"ref": 1, "v": {"N": 0.9, "C": 0.8, "R": 0.1}})]


def test_participants_are_asked_to_contribute_until_a_closure_goes_to_the_humans() -> None:
    history = contributed(opened(), "bob")
    assert items(views(history), "alice") == [("canon-rules", "contribute")]
    assert items(views(history), "bob") == [] and items(views(history), "carol") == [("canon-rules", "contribute")]
    history = closed(history)
    assert all(items(views(history), agent) == [] for agent in ("alice", "bob", "carol"))
    assert items(views(history), "@humans") == [("canon-rules", "recognize")]
    history += decided(THREAD, history, RefuseClosure(slug="canon-rules", reason="no"), at(10, "ada"))
    assert items(views(history), "@humans") == []


def test_a_reopen_takes_the_closure_off_the_humans_list() -> None:
    history = closed(contributed(opened(), "bob"))
    reopen = ReopenThread(slug="canon-rules", eval=Vector(0.1, 0.1, 0.1), reason="r", discovery="d")
    history += decided(THREAD, history, reopen, at(10, "bob"))
    assert items(views(history), "@humans") == []
    assert items(views(history), "carol") == [("canon-rules", "contribute")]


def test_an_agent_endorsing_ends_its_dispute_for_the_humans() -> None:
    page = decided(PAGE, [], INIT, at(1, "alice"))
    page += decided(PAGE, page, DisputePage(page=A, section="§1"), at(2, "bob"))
    assert items(views(page), "@humans") == [(A, "resolve")]
    page += decided(PAGE, page, read("s"), at(3, "bob"))
    page += decided(PAGE, page, endorse(), at(3, "bob"))
    assert items(views(page), "@humans") == []  # no dispute left; and no registered agent, so nothing to approve


def test_the_markdown_shows_context_questions_and_evaluations() -> None:
    text = render(closed(contributed(opened(), "bob")))
    assert text.startswith("# canon-rules\n") and "## Context\n\nHow do pages become canon?" in text
    assert "- OQ-1: Who approves?" in text and "### 003 · carol · closure" in text
    assert "- last_eval: entry 002: N 0.5 · C 0.5 · R 0.5" in text and "- current_at_close: N 1 · C 1 · R 1" in text


def registered(*names: str) -> list[Event]:
    history: list[Event] = []
    for name in names:
        history += decided(FLEET, history, RegisterAgent(name=name), at(0, "ada"))
    return history


def test_activity_marks_an_agent_returning_after_sixty_days() -> None:
    history = registered("bob")
    page = decided(PAGE, [], INIT, at(24 * 61, "bob"))
    agent = views(history + page)[("agents", "bob")]
    assert agent["returned_at"] == agent["last_active"] == (T0 + timedelta(days=61)).isoformat().replace("+00:00", "Z")


def test_registered_agents_review_every_page_even_those_older_than_them() -> None:
    roster = registered("alice", "bob")
    page = decided(PAGE, [], INIT, at(1, "alice"))
    assert items(views(roster + page), "bob") == [(A, "review")] and items(views(roster + page), "alice") == []
    roster += decided(FLEET, roster, RegisterAgent(name="carol"), at(2, "ada"))
    assert items(views(roster + page), "carol") == [(A, "review")]
    page += decided(PAGE, page, read("s"), at(3, "bob"))
    page += decided(PAGE, page, endorse(), at(3, "bob"))
    assert items(views(roster + page), "bob") == []


def test_an_approval_waits_for_the_humans_while_the_page_is_ready_for_it() -> None:
    page = decided(PAGE, [], INIT, at(1, "alice"))
    page += decided(PAGE, page, read("s"), at(2, "bob"))
    [ready] = decided(PAGE, page, endorse(), at(2, "bob"))
    page += [msgspec.structs.replace(ready, approvable=True)]  # as the rules say it, given the fleet
    assert items(views(page), "@humans") == [(A, "approve")]
    page += decided(PAGE, page, endorse(Endorsing.REVIEWED), at(3, "bob"))
    assert items(views(page), "@humans") == []


def test_an_agent_back_after_sixty_idle_days_reviews_every_page_again() -> None:
    roster = registered("alice", "bob")
    page = decided(PAGE, [], INIT, at(1, "alice"))
    page += decided(PAGE, page, read("s"), at(2, "bob"))
    page += decided(PAGE, page, endorse(), at(2, "bob"))
    assert items(views(roster + page), "bob") == []
    back = decided(PAGE, page, read("later"), at(24 * 70, "bob"))
    assert items(views(roster + page + back), "bob") == [(A, "review")]
