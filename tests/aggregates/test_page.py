"""PROTOCOLS.md section 4, rule by rule: canon pages, endorsements per revision, canon."""

from __future__ import annotations

from datetime import timedelta

import pytest

from athenaeum.aggregates import fleet as f
from athenaeum.aggregates import page as p
from athenaeum.aggregates.page_consensus import Member, consensus
from athenaeum.aggregates.page_state import evolve
from athenaeum.events import Event
from athenaeum.events.page import CanonLevel, Endorsing, Lifecycle
from tests.aggregates.given import T0, at, given

PAGE = "wiki/canon/rules.md"
CONTENT = "# Canon rules\n\n## Approval\n" + "".join(f"Rule {i}.\n" for i in range(1, 11))


def members(*names: str, days_idle: float = 0) -> list[Member]:
    return [Member(name, T0 - timedelta(days=90), T0 - timedelta(days=days_idle)) for name in names]


FLEET = members("alice", "bob", "carol")


def initialized() -> list[Event]:
    return p.init_page(None, at(0, "alice"), page=PAGE, content=CONTENT)


def state_of(history: list[Event]):  # type: ignore[no-untyped-def]
    return given(evolve, history).state


def endorsed(history: list[Event], agent: str, status: Endorsing = Endorsing.ACCEPTED, hours: float = 1,
             session: str = "s1") -> list[Event]:
    history = history + p.read(state_of(history), at(hours, agent), session_id=session)
    return history + p.endorse(state_of(history), at(hours, agent), status=status, session_id=session, members=FLEET)


def approve(history: list[Event], level: CanonLevel, hours: float = 2, fleet: list[Member] = FLEET):  # type: ignore[no-untyped-def]
    return given(evolve, history).when(p.approve, at(hours, "ada"), level=level, members=fleet, as_of_position=7)


class TestFleet:
    def test_anyone_registers_on_an_empty_roster_then_only_humans(self) -> None:
        [first] = given(f.evolve).when(f.register, at(0, "alice"), name="ada", human=True).then("AgentRegistered")
        given(f.evolve, [first]).when(f.register, at(1, "alice"), name="bob").then_rejects("not_human")
        given(f.evolve, [first]).when(f.register, at(1, "ada"), name="bob").then("AgentRegistered")
        given(f.evolve, [first]).when(f.register, at(1, "ada"), name="ada").then_rejects("already_exists")

    def test_no_bootstrap_when_the_deployment_names_its_humans(self) -> None:
        given(f.evolve).when(f.register, at(0, "mallory"), name="mallory", human=True,
                             bootstrap=False).then_rejects("not_human")
        given(f.evolve).when(f.register, at(0, "ada"), name="bob", bootstrap=False).then("AgentRegistered")


class TestInitAndRead:
    def test_the_author_contributes_and_the_sha_is_computed(self) -> None:
        [event] = given(evolve).when(p.init_page, at(0, "alice"), page=PAGE, content=CONTENT).then("PageInitialized")
        assert event.content_sha256 == p.content_sha256(CONTENT) and event.rev == 1
        standings = consensus(state_of([event]), FLEET, T0).standings
        assert [(s.agent, s.status) for s in standings] == [("alice", "contributed"), ("bob", "pending"),
                                                            ("carol", "pending")]

    def test_a_page_is_initialised_once_at_a_plain_path(self) -> None:
        given(evolve, initialized()).when(p.init_page, at(1), page=PAGE, content="x").then_rejects("already_exists")
        given(evolve).when(p.init_page, at(1), page="/etc/passwd", content="x").then_rejects("invalid", "page")


class TestEndorsement:
    def test_an_endorsement_needs_a_read_in_the_same_session(self) -> None:
        history = initialized() + p.read(state_of(initialized()), at(1, "bob"), session_id="morning")
        given(evolve, history).when(p.endorse, at(1, "bob"), status=Endorsing.ACCEPTED,
                                    session_id="evening").then_rejects("not_read_in_session")
        given(evolve, history).when(p.endorse, at(1, "bob"), status=Endorsing.ACCEPTED,
                                    session_id="morning").then("EndorsementRecorded")

    def test_a_read_of_an_older_revision_does_not_count(self) -> None:
        history = initialized() + p.read(state_of(initialized()), at(1, "bob"), session_id="s1")
        history += p.edit(state_of(history), at(2, "carol"), content="# Other\n")
        given(evolve, history).when(p.endorse, at(3, "bob"), status=Endorsing.ACCEPTED,
                                    session_id="s1").then_rejects("not_read_in_session")

    def test_an_endorsement_of_another_rev_is_stale_revision(self) -> None:
        history = initialized() + p.read(state_of(initialized()), at(1, "bob"), session_id="s1")
        given(evolve, history).when(p.endorse, at(1, "bob"), status=Endorsing.ACCEPTED, session_id="s1",
                                    rev=2).then_rejects("stale_revision", "rev")


    def test_the_endorsement_that_leaves_the_page_ready_says_a_human_may_approve_it(self) -> None:
        history = endorsed(initialized(), "bob")
        assert history[-1].approvable is False  # carol is active and pending
        history = endorsed(history, "carol")
        assert history[-1].approvable is True
        history = endorsed(history, "bob", Endorsing.REVIEWED, hours=2, session="s2")
        assert history[-1].approvable is False  # bob only reviewed it now

    def test_an_agent_idle_thirty_days_does_not_hold_the_approval_back(self) -> None:
        fleet = members("alice", "bob") + members("carol", days_idle=31)
        history = initialized() + p.read(state_of(initialized()), at(1, "bob"), session_id="s")
        [recorded] = p.endorse(state_of(history), at(1, "bob"), status=Endorsing.ACCEPTED, session_id="s",
                               members=fleet)
        assert recorded.approvable is True


class TestRevision:
    def test_significance_is_computed_from_lines_and_headings(self) -> None:
        few = CONTENT.replace("Rule 1.", "Rule one.").replace("Rule 2.", "Rule two.")  # 2 of 13 lines
        many = "".join(line if i % 2 else "changed\n" for i, line in enumerate(CONTENT.splitlines(True)))
        heading = CONTENT.replace("## Approval", "## Approvals")
        spacing = CONTENT.replace("## Approval", "##  Approval ")  # the same heading, spaced out
        assert p.change_ratio(CONTENT, few) < p.SIGNIFICANT_RATIO < p.change_ratio(CONTENT, many)
        for content, significant in [(few, False), (many, True), (heading, True), (spacing, False)]:
            [revised, *_] = given(evolve, endorsed(initialized(), "bob")).when(
                p.edit, at(3, "carol"), content=content).then(*(
                    ["PageRevised", "EndorsementStaled", "EndorsementStaled"] if significant else ["PageRevised"]))
            assert revised.significant is significant and revised.rev == (2 if significant else 1)

    def test_the_editor_may_mark_a_minor_edit_significant(self) -> None:
        small = CONTENT.replace("Rule 1.", "Rule one.")
        [revised, staled] = given(evolve, initialized()).when(p.edit, at(3, "bob"), content=small,
                                                             significant=True).then("PageRevised", "EndorsementStaled")
        assert revised.rev == 2 and staled.agent == "alice" and staled.previous_status == "contributed"

    def test_a_significant_edit_stales_every_other_endorsement_atomically(self) -> None:
        history = endorsed(endorsed(initialized(), "bob"), "carol", Endorsing.REVIEWED)
        outcome = given(evolve, history).when(p.edit, at(3, "bob"), content="# New\n")
        _, *staled = outcome.then("PageRevised", "EndorsementStaled", "EndorsementStaled")
        assert {(e.agent, e.previous_status) for e in staled} == {("alice", "contributed"), ("carol", "reviewed")}
        standings = {s.agent: s.status for s in consensus(outcome.and_state(), FLEET, T0).standings}
        assert standings == {"alice": "stale", "bob": "contributed", "carol": "stale"}

    def test_a_minor_edit_keeps_rev_and_endorsements(self) -> None:
        history = endorsed(initialized(), "bob")
        outcome = given(evolve, history).when(p.edit, at(3, "carol"), content=CONTENT.replace("Rule 3.", "Rule 3!"))
        outcome.then("PageRevised")
        assert {s.agent: s.status for s in consensus(outcome.and_state(), FLEET, T0).standings}["bob"] == "accepted"


class TestTime:
    def test_a_revision_ages_once_after_fourteen_days_with_its_readiness(self) -> None:
        history = endorsed(initialized(), "bob")
        given(evolve, history).when(p.age, at(13.9 * 24, "timer"), members=FLEET).then()
        outcome = given(evolve, history).when(p.age, at(14 * 24, "timer"), members=FLEET)
        [aged] = outcome.then("PendingAged")
        assert (aged.rev, aged.canonical_ready, aged.soft_canonical_ready) == (1, False, True)
        given(evolve, [*history, aged]).when(p.age, at(20 * 24, "timer"), members=FLEET).then()

    def test_an_agent_idle_sixty_days_goes_dormant_once(self) -> None:
        roster = given(f.evolve).when(f.register, at(0, "ada"), name="bob").then("AgentRegistered")
        idle = [Member("bob", T0, T0)]
        given(f.evolve, roster).when(f.mark_dormant, at(59 * 24, "timer"), name="bob", members=idle).then()
        [dormant] = given(f.evolve, roster).when(f.mark_dormant, at(60 * 24, "timer"), name="bob",
                                                 members=idle).then("AgentWentDormant")
        assert dormant.idle_since == T0
        given(f.evolve, roster, [dormant]).when(f.mark_dormant, at(61 * 24, "timer"), name="bob", members=idle).then()
        given(f.evolve, roster).when(f.mark_dormant, at(60 * 24), name="zed", members=idle).then_rejects("not_found")


class TestLifecycle:
    def test_the_author_moves_the_lifecycle_up_to_accepted(self) -> None:
        [moved] = given(evolve, initialized()).when(p.change_lifecycle, at(1, "alice"), to=Lifecycle.ACCEPTED,
                                                    reason="done").then("LifecycleChanged")
        assert (moved.from_, moved.to) == (Lifecycle.WORKING, Lifecycle.ACCEPTED)
        given(evolve, initialized()).when(p.change_lifecycle, at(1, "bob"), to=Lifecycle.ACCEPTED,
                                          reason="x").then_rejects("actor_mismatch")
        given(evolve, initialized()).when(p.change_lifecycle, at(1, "alice"), to=Lifecycle.CANONICAL,
                                          reason="x").then_rejects("invalid", "to")


class TestCanon:
    def test_canonical_needs_every_active_agent_and_a_human(self) -> None:
        history = endorsed(initialized(), "bob")
        approve(history, CanonLevel.CANONICAL).then_rejects("consensus_incomplete")
        history = endorsed(history, "carol")
        given(evolve, history).when(p.approve, at(2, "bob"), level=CanonLevel.CANONICAL, members=FLEET,
                                    as_of_position=7).then_rejects("not_human")
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
        outcome = given(evolve, history).when(p.dispute, at(16 * 24, "carol"), section="§2 approval", thread="canon-rules")
        _, moved = outcome.then("EndorsementDisputed", "LifecycleChanged")
        assert moved.to is Lifecycle.WORKING
        assert not consensus(outcome.and_state(), FLEET, T0 + timedelta(days=16)).soft_canonical_ready

    def test_any_open_dispute_blocks_canon_even_one_from_outside_the_roster(self) -> None:
        history = endorsed(endorsed(initialized(), "bob"), "carol")
        history += p.dispute(state_of(history), at(3, "zoe"), section="§1")
        report = consensus(state_of(history), FLEET, T0)
        assert not report.canonical_ready and report.canonical_reasons == ["zoe disputes '§1'"]

    def test_a_dispute_names_what_it_contests(self) -> None:
        given(evolve, initialized()).when(p.dispute, at(1, "bob"), section=" ").then_rejects("invalid", "section")

    def test_a_human_resolves_a_dispute_as_accepted(self) -> None:
        history = initialized() + p.dispute(state_of(initialized()), at(1, "bob"), section="§1")
        given(evolve, history).when(p.resolve, at(2, "carol"), agent="bob", decision="keep",
                                    thread="canon-rules").then_rejects("not_human")
        given(evolve, history).when(p.resolve, at(2, "ada"), agent="carol", decision="keep",
                                    thread="canon-rules").then_rejects("not_found")
        outcome = given(evolve, history).when(p.resolve, at(2, "ada"), agent="bob", decision="keep", thread="canon-rules")
        outcome.then("DisputeResolved")
        bob = consensus(outcome.and_state(), FLEET, T0).standings[1]
        assert (bob.status, bob.decision, bob.thread) == ("accepted", "keep", "canon-rules")

    def test_a_soft_canonical_page_becomes_canonical_when_the_last_agent_accepts(self) -> None:
        history = self.soft()
        history += p.read(state_of(history), at(16 * 24, "carol"), session_id="s9")
        _, moved = given(evolve, history).when(p.endorse, at(16 * 24, "carol"), status=Endorsing.ACCEPTED,
                                               session_id="s9", members=FLEET).then(
                                                   "EndorsementRecorded", "LifecycleChanged")
        assert moved.to is Lifecycle.CANONICAL
