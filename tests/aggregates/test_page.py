"""PROTOCOLS.md section 4, rule by rule: canon pages, endorsements per revision, canon."""

from __future__ import annotations

from datetime import timedelta

import pytest

from athenaeum.aggregates import page as p
from athenaeum.aggregates import page_canon
from athenaeum.aggregates.context import Member
from athenaeum.aggregates.fleet import FAMILY as FLEET_FAMILY
from athenaeum.aggregates.page import FAMILY
from athenaeum.aggregates.page_consensus import consensus
from athenaeum.events import Event, family_id
from athenaeum.events.page import CanonLevel, Endorsing, Lifecycle
from athenaeum.events.fleet_commands import AgeAgent, RegisterAgent
from athenaeum.events.page_commands import (
    AgePage,
    ApprovePage,
    ChangeLifecycle,
    DisputePage,
    EditPage,
    EndorsePage,
    InitPage,
    ReadPage,
    ReassessPage,
    ResolveDispute,
)
from tests.aggregates.given import T0, at, decided, given

PAGE = "canon/rules.md"  # the page wiki/canon/rules.md: its path inside wiki/
CONTENT = "# Canon rules\n\n## Approval\n" + "".join(f"Rule {i}.\n" for i in range(1, 11))


def members(*names: str, days_idle: float = 0) -> tuple[Member, ...]:
    return tuple(Member(name, T0 - timedelta(days=90), T0 - timedelta(days=days_idle)) for name in names)


FLEET = members("alice", "bob", "carol")


def read(session: str) -> ReadPage:
    return ReadPage(page=PAGE, session_id=session)


def endorse(session: str, status: Endorsing = Endorsing.ACCEPTED, rev: int | None = None) -> EndorsePage:
    return EndorsePage(page=PAGE, status=status, session_id=session, rev=rev)


def edit(content: str, significant: bool = False) -> EditPage:
    return EditPage(page=PAGE, content=content, significant=significant)


def dispute(section: str, thread: str | None = None) -> DisputePage:
    return DisputePage(page=PAGE, section=section, thread=thread)


def resolve(agent: str) -> ResolveDispute:
    return ResolveDispute(page=PAGE, agent=agent, decision="keep", thread="canon-rules")


def lifecycle(to: Lifecycle, reason: str = "x") -> ChangeLifecycle:
    return ChangeLifecycle(page=PAGE, to=to, reason=reason)


AGE = AgePage(page=PAGE)


def initialized() -> list[Event]:
    return decided(FAMILY, [], InitPage(page=PAGE, content=CONTENT), at(0, "alice"))


def state_of(history: list[Event]):  # type: ignore[no-untyped-def]
    return given(FAMILY, history).state


def endorsed(history: list[Event], agent: str, status: Endorsing = Endorsing.ACCEPTED, hours: float = 1,
             session: str = "s1") -> list[Event]:
    history = history + decided(FAMILY, history, read(session), at(hours, agent))
    return history + decided(FAMILY, history, endorse(session, status), at(hours, agent, members=FLEET))


def approve(history: list[Event], level: CanonLevel, hours: float = 2,  # type: ignore[no-untyped-def]
            fleet: tuple[Member, ...] = FLEET):
    return given(FAMILY, history).when(ApprovePage(page=PAGE, level=level),
                                       at(hours, "ada", members=fleet, as_of_position=7))


class TestFleet:
    def test_anyone_registers_on_an_empty_roster_then_only_humans(self) -> None:
        [first] = given(FLEET_FAMILY).when(RegisterAgent(name="ada", human=True), at(0, "alice")).then(
            "AgentRegistered")
        given(FLEET_FAMILY, [first]).when(RegisterAgent(name="bob"), at(1, "alice")).then_rejects("not_human")
        given(FLEET_FAMILY, [first]).when(RegisterAgent(name="bob"), at(1, "ada")).then("AgentRegistered")
        given(FLEET_FAMILY, [first]).when(RegisterAgent(name="ada"), at(1, "ada")).then_rejects("already_exists")

    def test_no_bootstrap_when_the_deployment_names_its_humans(self) -> None:
        given(FLEET_FAMILY).when(RegisterAgent(name="mallory", human=True),
                                 at(0, "mallory", humans_configured=True)).then_rejects("not_human")
        given(FLEET_FAMILY).when(RegisterAgent(name="bob"), at(0, "ada", humans_configured=True)).then(
            "AgentRegistered")


class TestInitAndRead:
    def test_the_author_contributes_and_the_sha_is_computed(self) -> None:
        [event] = given(FAMILY).when(InitPage(page=PAGE, content=CONTENT), at(0, "alice")).then("PageInitialized")
        assert event.content_sha256 == p.content_sha256(CONTENT) and event.rev == 1
        standings = consensus(state_of([event]), FLEET, T0).standings
        assert [(s.agent, s.status) for s in standings] == [("alice", "contributed"), ("bob", "pending"),
                                                            ("carol", "pending")]

    def test_a_page_is_initialised_once_at_a_plain_path(self) -> None:
        given(FAMILY, initialized()).when(InitPage(page=PAGE, content="x"), at(1)).then_rejects("already_exists")
        given(FAMILY).when(InitPage(page="/etc/passwd", content="x"), at(1)).then_rejects("invalid", "page")

    def test_a_command_on_a_page_never_initialised_is_not_found(self) -> None:
        given(FAMILY).when(read("s1"), at(1, "bob")).then_rejects("not_found", "page")

    def test_a_page_is_named_by_its_path_inside_the_wiki_with_or_without_wiki_first(self) -> None:
        [event] = given(FAMILY).when(InitPage(page="wiki/canon/rules.md", content=CONTENT), at(0)).then(
            "PageInitialized")
        assert event.originator_id == family_id("page", "canon/rules.md")
        given(FAMILY, [event]).when(InitPage(page="canon/rules.md", content="x"), at(1)).then_rejects("already_exists")
        assert FAMILY.aggregate_of(ReadPage(page="canon/rules.md", session_id="s")) == event.originator_id

    @pytest.mark.parametrize("path", ["agents/dialogue/t1/thread.md", "wiki/agents/dialogue/x.md", "log.md",
                                      "wiki/log.md"])
    def test_no_page_takes_the_place_of_the_wikis_threads_or_log(self, path: str) -> None:
        given(FAMILY).when(InitPage(page=path, content="x"), at(0)).then_rejects("invalid", "page")


class TestEndorsement:
    def test_an_endorsement_needs_a_read_in_the_same_session(self) -> None:
        history = initialized() + decided(FAMILY, initialized(), read("morning"), at(1, "bob"))
        given(FAMILY, history).when(endorse("evening"), at(1, "bob")).then_rejects("not_read_in_session")
        given(FAMILY, history).when(endorse("morning"), at(1, "bob")).then("EndorsementRecorded")

    def test_a_read_of_an_older_revision_does_not_count(self) -> None:
        history = initialized() + decided(FAMILY, initialized(), read("s1"), at(1, "bob"))
        history += decided(FAMILY, history, edit("# Other\n"), at(2, "carol"))
        given(FAMILY, history).when(endorse("s1"), at(3, "bob")).then_rejects("not_read_in_session")

    def test_an_endorsement_of_another_rev_is_stale_revision(self) -> None:
        history = initialized() + decided(FAMILY, initialized(), read("s1"), at(1, "bob"))
        given(FAMILY, history).when(endorse("s1", rev=2), at(1, "bob")).then_rejects("stale_revision", "rev")

    def test_the_endorsement_that_leaves_the_page_ready_says_a_human_may_approve_it(self) -> None:
        history = endorsed(initialized(), "bob")
        assert history[-1].approvable is False  # carol is active and pending
        history = endorsed(history, "carol")
        assert history[-1].approvable is True
        history = endorsed(history, "bob", Endorsing.REVIEWED, hours=2, session="s2")
        assert history[-1].approvable is False  # bob only reviewed it now

    def test_an_agent_idle_thirty_days_does_not_hold_the_approval_back(self) -> None:
        fleet = members("alice", "bob") + members("carol", days_idle=31)
        history = initialized() + decided(FAMILY, initialized(), read("s"), at(1, "bob"))
        [recorded] = decided(FAMILY, history, endorse("s"), at(1, "bob", members=fleet, as_of_position=4))
        assert recorded.approvable is True and recorded.as_of_position == 4


class TestRevision:
    def test_significance_is_computed_from_lines_and_headings(self) -> None:
        few = CONTENT.replace("Rule 1.", "Rule one.").replace("Rule 2.", "Rule two.")  # 2 of 13 lines
        many = "".join(line if i % 2 else "changed\n" for i, line in enumerate(CONTENT.splitlines(True)))
        heading = CONTENT.replace("## Approval", "## Approvals")
        spacing = CONTENT.replace("## Approval", "##  Approval ")  # the same heading, spaced out
        assert p.change_ratio(CONTENT, few) < p.SIGNIFICANT_RATIO < p.change_ratio(CONTENT, many)
        for content, significant in [(few, False), (many, True), (heading, True), (spacing, False)]:
            [revised, *_] = given(FAMILY, endorsed(initialized(), "bob")).when(edit(content), at(3, "carol")).then(
                *(["PageRevised", "EndorsementStaled", "EndorsementStaled"] if significant else ["PageRevised"]))
            assert revised.significant is significant and revised.rev == (2 if significant else 1)

    def test_the_editor_may_mark_a_minor_edit_significant(self) -> None:
        small = CONTENT.replace("Rule 1.", "Rule one.")
        [revised, staled] = given(FAMILY, initialized()).when(edit(small, significant=True), at(3, "bob")).then(
            "PageRevised", "EndorsementStaled")
        assert revised.rev == 2 and staled.agent == "alice" and staled.previous_status == "contributed"

    def test_an_unchanged_content_is_no_edit(self) -> None:
        given(FAMILY, initialized()).when(edit(CONTENT), at(3, "bob")).then_rejects("invalid", "content")

    def test_a_significant_edit_stales_every_other_endorsement_atomically(self) -> None:
        history = endorsed(endorsed(initialized(), "bob"), "carol", Endorsing.REVIEWED)
        outcome = given(FAMILY, history).when(edit("# New\n"), at(3, "bob"))
        _, *staled = outcome.then("PageRevised", "EndorsementStaled", "EndorsementStaled")
        assert {(e.agent, e.previous_status) for e in staled} == {("alice", "contributed"), ("carol", "reviewed")}
        standings = {s.agent: s.status for s in consensus(outcome.and_state(), FLEET, T0).standings}
        assert standings == {"alice": "stale", "bob": "contributed", "carol": "stale"}

    def test_a_minor_edit_keeps_rev_and_endorsements(self) -> None:
        history = endorsed(initialized(), "bob")
        outcome = given(FAMILY, history).when(edit(CONTENT.replace("Rule 3.", "Rule 3!")), at(3, "carol"))
        outcome.then("PageRevised")
        assert {s.agent: s.status for s in consensus(outcome.and_state(), FLEET, T0).standings}["bob"] == "accepted"


class TestTime:
    def test_a_revision_ages_once_after_fourteen_days_with_its_readiness(self) -> None:
        history = endorsed(initialized(), "bob")
        given(FAMILY, history).when(AGE, at(13.9 * 24, "timer", members=FLEET)).then()
        outcome = given(FAMILY, history).when(AGE, at(14 * 24, "timer", members=FLEET, as_of_position=9))
        [aged] = outcome.then("PendingAged")
        assert (aged.rev, aged.canonical_ready, aged.soft_canonical_ready) == (1, False, True)
        assert aged.as_of_position == 9
        given(FAMILY, [*history, aged]).when(AGE, at(20 * 24, "timer", members=FLEET)).then()

    def test_a_reassessment_records_whether_a_human_has_an_approval_to_give(self) -> None:
        history = endorsed(initialized(), "bob")
        assert not page_canon.ready_for_approval(state_of(history), FLEET, T0 + timedelta(days=13.9))
        assert page_canon.ready_for_approval(state_of(history), FLEET, T0 + timedelta(days=14))
        [reassessed] = given(FAMILY, history).when(
            ReassessPage(page=PAGE), at(14 * 24, "timer", members=FLEET, as_of_position=9)
        ).then("ReadinessReassessed")
        assert (reassessed.rev, reassessed.approvable, reassessed.as_of_position) == (1, True, 9)

    def test_an_agent_idle_sixty_days_goes_dormant_once(self) -> None:
        roster = given(FLEET_FAMILY).when(RegisterAgent(name="bob"), at(0, "ada")).then("AgentRegistered")
        idle = (Member("bob", T0, T0),)
        bob = AgeAgent(name="bob")
        given(FLEET_FAMILY, roster).when(bob, at(59 * 24, "timer", members=idle)).then()
        [dormant] = given(FLEET_FAMILY, roster).when(bob, at(60 * 24, "timer", members=idle, as_of_position=5)).then(
            "AgentWentDormant")
        assert dormant.idle_since == T0 and dormant.as_of_position == 5
        given(FLEET_FAMILY, roster, [dormant]).when(bob, at(61 * 24, "timer", members=idle)).then()
        given(FLEET_FAMILY, roster).when(AgeAgent(name="zed"), at(60 * 24, members=idle)).then_rejects("not_found")
        given(FLEET_FAMILY).when(bob, at(60 * 24, members=idle)).then_rejects("not_found", "name")


class TestLifecycle:
    def test_the_author_moves_the_lifecycle_up_to_accepted(self) -> None:
        [moved] = given(FAMILY, initialized()).when(lifecycle(Lifecycle.ACCEPTED, "done"), at(1, "alice")).then(
            "LifecycleChanged")
        assert (moved.from_, moved.to) == (Lifecycle.WORKING, Lifecycle.ACCEPTED)
        given(FAMILY, initialized()).when(lifecycle(Lifecycle.ACCEPTED), at(1, "bob")).then_rejects("actor_mismatch")
        given(FAMILY, initialized()).when(lifecycle(Lifecycle.CANONICAL), at(1, "alice")).then_rejects("invalid", "to")

    def test_accepted_waits_until_no_active_agent_is_pending_at_the_current_rev(self) -> None:
        history = endorsed(initialized(), "bob")  # carol has not looked at it
        refused = given(FAMILY, history).when(lifecycle(Lifecycle.ACCEPTED), at(2, "alice", members=FLEET))
        assert "carol is pending at v1" in refused.then_rejects("consensus_pending", "to").message
        history = endorsed(history, "carol", Endorsing.REVIEWED)
        given(FAMILY, history).when(lifecycle(Lifecycle.ACCEPTED), at(2, "alice", members=FLEET)).then(
            "LifecycleChanged")

    def test_an_agent_idle_thirty_days_or_dormant_does_not_hold_accepted_back(self) -> None:
        fleet = FLEET[:2] + members("carol", days_idle=30) + members("dave", days_idle=60)
        given(FAMILY, endorsed(initialized(), "bob")).when(lifecycle(Lifecycle.ACCEPTED), at(0, "alice", members=fleet)
                                                           ).then("LifecycleChanged")

    def test_after_a_significant_revision_whoever_never_endorsed_it_is_pending_again(self) -> None:
        history = endorsed(endorsed(initialized(), "bob"), "carol")
        history += decided(FAMILY, history, edit("# Other\n"), at(3, "bob"))  # alice and carol stale, not pending
        given(FAMILY, history).when(lifecycle(Lifecycle.ACCEPTED), at(4, "alice", members=FLEET)).then(
            "LifecycleChanged")
        newcomer = FLEET + (Member("erin", T0 + timedelta(hours=3), T0 + timedelta(hours=3)),)
        given(FAMILY, history).when(lifecycle(Lifecycle.ACCEPTED), at(4, "alice", members=newcomer)).then_rejects(
            "consensus_pending", "to")


class TestCanon:
    def test_canonical_needs_every_active_agent_and_a_human(self) -> None:
        history = endorsed(initialized(), "bob")
        approve(history, CanonLevel.CANONICAL).then_rejects("consensus_incomplete")
        history = endorsed(history, "carol")
        given(FAMILY, history).when(ApprovePage(page=PAGE, level=CanonLevel.CANONICAL),
                                    at(2, "bob", members=FLEET, as_of_position=7)).then_rejects("not_human")
        approved, moved = approve(history, CanonLevel.CANONICAL).then("CanonApproved", "LifecycleChanged")
        assert approved.active_agents == ("alice", "bob", "carol") and approved.as_of_position == 7
        assert moved.to is Lifecycle.CANONICAL

    def test_inactive_agents_do_not_block_and_dormant_ones_show_so(self) -> None:
        fleet = FLEET[:2] + members("carol", days_idle=30) + members("dave", days_idle=60)
        report = consensus(state_of(endorsed(initialized(), "bob")), fleet, T0)
        assert report.canonical_ready and report.active_agents == ["alice", "bob"]
        assert {s.agent: s.status for s in report.standings}["dave"] == "dormant"

    def test_a_returning_agent_is_stale(self) -> None:
        history = endorsed(initialized(), "bob")
        back = [Member("bob", T0 - timedelta(days=90), T0, returned_at=T0 + timedelta(hours=2))]
        assert consensus(state_of(history), back, T0 + timedelta(hours=3)).standings[0].status == "stale"

    @pytest.mark.parametrize(("days", "ready"), [(14, True), (13.9, False)])
    def test_soft_canonical_at_two_thirds_with_the_rest_waiting_fourteen_days(self, days: float, ready: bool) -> None:
        history = endorsed(initialized(), "bob")  # alice contributed, bob accepted, carol pending: 2 of 3
        outcome = approve(history, CanonLevel.SOFT_CANONICAL, hours=days * 24)
        if ready:
            outcome.then("CanonApproved", "LifecycleChanged")
        else:
            outcome.then_rejects("consensus_incomplete")

    def test_under_two_thirds_is_not_soft_canonical(self) -> None:
        fleet = FLEET + members("dave")
        approve(endorsed(initialized(), "bob"), CanonLevel.SOFT_CANONICAL, hours=15 * 24,
                fleet=fleet).then_rejects("consensus_incomplete")  # 2 of 4

    def soft(self) -> list[Event]:
        history = endorsed(initialized(), "bob")
        return history + approve(history, CanonLevel.SOFT_CANONICAL, hours=15 * 24).events

    def test_a_dispute_reverts_a_soft_canonical_page_to_working_and_blocks_canon(self) -> None:
        history = self.soft()
        outcome = given(FAMILY, history).when(dispute("§2 approval", thread="canon-rules"), at(16 * 24, "carol"))
        _, moved = outcome.then("EndorsementDisputed", "LifecycleChanged")
        assert moved.to is Lifecycle.WORKING
        assert not consensus(outcome.and_state(), FLEET, T0 + timedelta(days=16)).soft_canonical_ready

    def test_any_open_dispute_blocks_canon_even_one_from_outside_the_roster(self) -> None:
        history = endorsed(endorsed(initialized(), "bob"), "carol")
        history += decided(FAMILY, history, dispute("§1"), at(3, "zoe"))
        report = consensus(state_of(history), FLEET, T0)
        assert not report.canonical_ready and report.canonical_reasons == ["zoe disputes '§1'"]

    def test_a_dispute_names_what_it_contests(self) -> None:
        given(FAMILY, initialized()).when(dispute(" "), at(1, "bob")).then_rejects("invalid", "section")

    def test_a_human_resolves_a_dispute_as_accepted(self) -> None:
        history = initialized() + decided(FAMILY, initialized(), dispute("§1"), at(1, "bob"))
        given(FAMILY, history).when(resolve("bob"), at(2, "carol")).then_rejects("not_human")
        given(FAMILY, history).when(resolve("carol"), at(2, "ada")).then_rejects("not_found")
        outcome = given(FAMILY, history).when(resolve("bob"), at(2, "ada", members=FLEET, as_of_position=3))
        [resolved] = outcome.then("DisputeResolved")
        assert resolved.as_of_position == 3
        bob = consensus(outcome.and_state(), FLEET, T0).standings[1]
        assert (bob.status, bob.decision, bob.thread) == ("accepted", "keep", "canon-rules")

    def test_a_soft_canonical_page_becomes_canonical_when_the_last_agent_accepts(self) -> None:
        history = self.soft()
        history += decided(FAMILY, history, read("s9"), at(16 * 24, "carol"))
        _, moved = given(FAMILY, history).when(endorse("s9"), at(16 * 24, "carol", members=FLEET)).then(
            "EndorsementRecorded", "LifecycleChanged")
        assert moved.to is Lifecycle.CANONICAL
