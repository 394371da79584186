"""The time windows of canon pages and the fleet, met by the timer service: a history written
under an injected clock (``ATHENAEUM_CLOCK_OFFSET``), then served again on the real one, so the
14-day and 60-day windows have run and the timers meet them at start-up."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from athenaeum.events.quorum_commands import ProposeQuorum
from athenaeum.services.client import SyncClient
from tests.services.conftest import Served, until


@pytest.fixture
def served_with(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path, str | None], Served]]:
    """``serve`` on a data dir with its clock shifted by an offset; any left running (a test
    that failed half-way) is stopped afterwards."""
    started: list[Served] = []

    def start(data_dir: Path, offset: str | None) -> Served:
        if offset:
            monkeypatch.setenv("ATHENAEUM_CLOCK_OFFSET", offset)
        else:
            monkeypatch.delenv("ATHENAEUM_CLOCK_OFFSET", raising=False)
        started.append(Served(data_dir))
        return started[-1]

    yield start
    for served in started:
        if served.process.poll() is None:
            served.stop()


def check(served: Served, agent: str) -> list[tuple[str, str, str]]:
    items = json.loads(served.run("check", "--json", actor=agent).stdout)["items"]
    return [(item["kind"], item["id"], item["action"]) for item in items]


def a_page_two_of_three_accept(served: Served, tmp_path: Path) -> None:
    for agent in ("alice", "bob", "carol"):
        assert served.run("agent", "register", agent, actor="ada").returncode == 0
    text = tmp_path / "rules.md"
    text.write_text("# Rules\n\nTwo thirds and fourteen days.\n")
    served.run("page", "init", "wiki/rules.md", "--file", str(text))
    served.run("page", "read", "wiki/rules.md", "--session", "s", actor="bob")
    served.run("page", "endorse", "wiki/rules.md", "--status", "accepted", "--session", "s", actor="bob")


def test_fourteen_days_on_make_soft_canonical_an_approval_for_the_humans(tmp_path: Path, served_with) -> None:
    home = tmp_path / "home"
    then = served_with(home, "-15d")
    a_page_two_of_three_accept(then, tmp_path)
    assert check(then, "ada") == [] and check(then, "carol") == [("page", "rules.md", "review")]
    then.stop()
    now = served_with(home, None)
    try:
        waiting = until(lambda: check(now, "ada"), lambda items: bool(items))
        assert waiting == [("page", "rules.md", "approve")]
        approved = now.run("page", "approve", "wiki/rules.md", "--level", "soft-canonical", "--json", actor="ada")
        assert approved.returncode == 0, approved.stdout
        position = json.loads(approved.stdout)["position"]
        assert json.loads(now.run("check", "--after", str(position), "--json", actor="ada").stdout)["items"] == []
        audit = json.loads(now.run("audit", "--humans", "ada", "--json").stdout)
        assert audit["summary"]["HARD"] == 0, audit["findings"]
    finally:
        now.stop()


def test_sixty_idle_days_make_an_agent_dormant_and_nothing_is_asked_of_it(tmp_path: Path, served_with) -> None:
    home = tmp_path / "home"
    then = served_with(home, "-61d")
    a_page_two_of_three_accept(then, tmp_path)
    then.stop()
    now = served_with(home, None)
    try:
        assert until(lambda: check(now, "carol"), lambda items: not items) == []
        shown = json.loads(now.run("page", "show", "wiki/rules.md", "--json", actor="ada").stdout)
        assert {agent: s["status"] for agent, s in shown["consensus"].items()} == {
            "alice": "dormant", "bob": "dormant", "carol": "dormant"}
        back = now.run("page", "read", "wiki/rules.md", "--session", "t", "--json", actor="carol")
        position = json.loads(back.stdout)["position"]
        returned = json.loads(now.run("check", "--after", str(position), "--json", actor="carol").stdout)["items"]
        assert [(i["id"], i["action"]) for i in returned] == [("rules.md", "review")]
    finally:
        now.stop()


def test_a_newcomers_fourteen_days_make_a_page_ready_and_the_humans_are_asked(tmp_path: Path, served_with) -> None:
    home = tmp_path / "home"
    then = served_with(home, "-20d")
    a_page_two_of_three_accept(then, tmp_path)
    then.run("page", "read", "wiki/rules.md", "--session", "s", actor="carol")
    then.run("page", "endorse", "wiki/rules.md", "--status", "accepted", "--session", "s", actor="carol")
    then.stop()
    then = served_with(home, "-10d")
    then.run("agent", "register", "dave", actor="ada")  # pending since: not ready for 14 days
    then.stop()
    now = served_with(home, None)
    try:  # the revision's aging comes due, and finds dave's 14 days not yet run
        aged = until(lambda: now.run("export").stdout, lambda lines: '"tag":"PendingAged"' in lines)
        assert '"soft_canonical_ready":false' in aged and check(now, "ada") == []
    finally:
        now.stop()
    later = served_with(home, "5d")
    try:
        assert until(lambda: check(later, "ada"), lambda items: bool(items)) == [("page", "rules.md", "approve")]
        audit = json.loads(later.run("audit", "--humans", "ada", "--json").stdout)
        assert audit["summary"]["HARD"] == 0, audit["findings"]
    finally:
        later.stop()


def test_a_window_given_as_a_duration_runs_from_the_services_clock(tmp_path: Path, served_with) -> None:
    from datetime import datetime, timedelta, timezone

    shifted = served_with(tmp_path / "home", "46d")
    try:
        done = shifted.run("ratify", "init", "adr-1", "--roster", "alice", "--text", "# A\n", "--expires-in", "72h",
                           "--json")
        assert done.returncode == 0, done.stdout
        expires = datetime.fromisoformat(json.loads(done.stdout)["events"][0]["expires_at"])
        expected = datetime.now(timezone.utc) + timedelta(days=46, hours=72)
        assert abs(expires - expected) < timedelta(minutes=5)
        url = shifted.url
        with SyncClient(url, "alice", seed=shifted.enrol("alice")) as client:
            both = client.send(ProposeQuorum(text="x", electorate=["bob"], threshold=1, deadline_in="2h",
                                             deadline=datetime(2030, 1, 1, tzinfo=timezone.utc)))
        assert not both.ok and both.error.field == "deadline_in"
    finally:
        shifted.stop()
