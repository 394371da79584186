"""PROTOCOLS.md section 2, rule by rule: ACK/NACK quorum proposals."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

import pytest

from athenaeum.aggregates import quorum as q
from athenaeum.aggregates.quorum import FAMILY
from athenaeum.aggregates.quorum_state import Status
from athenaeum.events import Event
from athenaeum.events.quorum import COORDINATOR_VETO, CoordinatorDecision, Nack, Preset
from athenaeum.events.quorum_commands import (
    AckProposal,
    BreakTie,
    ExpireProposal,
    NackProposal,
    OverrideProposal,
    ProposeQuorum,
)
from tests.aggregates.given import T0, at, decided, given

PID = "0A1B2C3D"
NINE = [f"agent-{i}" for i in range(1, 10)]
ACK = AckProposal(proposal_id=PID)
EXPIRE = ExpireProposal(proposal_id=PID)


def propose(**fields: object) -> ProposeQuorum:
    """A proposal of PID to NINE, deadline 24 hours after T0, unless ``fields`` say otherwise."""
    defaults: dict[str, object] = dict(proposal_id=PID, text="Adopt the ledger", electorate=NINE,
                                       deadline=T0 + timedelta(hours=24))
    return ProposeQuorum(**(defaults | fields))  # type: ignore[arg-type]


def opened(electorate: list[str] = NINE, threshold: int | None = 5, hours: float = 24,
           **options: object) -> list[Event]:
    command = propose(electorate=electorate, threshold=threshold, deadline=T0 + timedelta(hours=hours), **options)
    return decided(FAMILY, [], command, at(0, "alice"))


def nack(reason: str = "no") -> NackProposal:
    return NackProposal(proposal_id=PID, reason=reason)


def override(decision: CoordinatorDecision = CoordinatorDecision.ACCEPT, reason: str = "x") -> OverrideProposal:
    return OverrideProposal(proposal_id=PID, decision=decision, reason=reason)


def tiebreak(decision: CoordinatorDecision = CoordinatorDecision.ACCEPT) -> BreakTie:
    return BreakTie(proposal_id=PID, decision=decision)


def voting(history: list[Event], *votes: str, hours: float = 1) -> list[Event]:
    """Cast votes in order: ``"agent-1"`` ACKs, ``"-agent-2"`` NACKs (reason "no")."""
    history = list(history)
    for vote in votes:
        command, agent = (nack(), vote[1:]) if vote.startswith("-") else (ACK, vote)
        history += decided(FAMILY, history, command, at(hours, agent))
    return history


def open_with(**fields: object):  # type: ignore[no-untyped-def]
    return given(FAMILY).when(propose(**fields), at(0, "alice"))


class TestOpening:
    def test_a_proposal_records_its_threshold_of_the_electorate(self) -> None:
        [event] = open_with(threshold=5).then("ProposalOpened")
        assert (event.threshold, event.total, event.proposer, event.coordinator) == (5, 9, "alice", None)
        assert event.originator_id == "quorum:" + PID and FAMILY.aggregate_of(propose()) == "quorum:" + PID

    @pytest.mark.parametrize(("preset", "size", "k"), [
        (Preset.ADVISORY, 9, 5), (Preset.BLOCKING, 9, 7), (Preset.ADVISORY, 4, 3), (Preset.BLOCKING, 4, 4),
        (Preset.ADVISORY, 1, 1), (Preset.BLOCKING, 10, 8), (Preset.ADVISORY, 18, 10),
    ])
    def test_presets_scale_as_ceil_of_five_and_seven_ninths(self, preset: Preset, size: int, k: int) -> None:
        [event] = open_with(preset=preset, electorate=NINE[:size] if size <= 9 else [f"a{i}" for i in range(size)]
                            ).then("ProposalOpened")
        assert event.threshold == k and event.total == size

    def test_an_explicit_threshold_wins_over_a_preset(self) -> None:
        [event] = open_with(threshold=2, preset=Preset.BLOCKING).then("ProposalOpened")
        assert event.threshold == 2

    def test_a_threshold_or_a_preset_is_needed(self) -> None:
        open_with().then_rejects("invalid", "threshold")

    @pytest.mark.parametrize("k", [0, 10, -1])
    def test_the_threshold_is_between_one_and_n(self, k: int) -> None:
        open_with(threshold=k).then_rejects("invalid", "threshold")

    def test_k_of_n_must_agree_with_the_electorate(self) -> None:
        open_with(threshold=5, total=8).then_rejects("invalid", "total")
        open_with(threshold=5, total=9).then("ProposalOpened")

    @pytest.mark.parametrize("electorate", [[], ["bob", "bob"], ["Bob"], ["no space"]])
    def test_the_electorate_is_non_empty_unique_slugs(self, electorate: list[str]) -> None:
        open_with(threshold=1, electorate=electorate).then_rejects("invalid", "electorate")

    @pytest.mark.parametrize("proposal_id", ["0a1b2c3d", "0A1B2C3", "0A1B2C3D4", "GGGGGGGG", "0A1B2C3D\n"])
    def test_the_id_is_eight_uppercase_hex(self, proposal_id: str) -> None:
        open_with(threshold=5, proposal_id=proposal_id).then_rejects("invalid", "proposal_id")

    def test_a_proposal_still_without_an_id_is_refused(self) -> None:
        open_with(threshold=5, proposal_id=None).then_rejects("invalid", "proposal_id")

    def test_an_id_is_used_once(self) -> None:
        given(FAMILY, opened()).when(propose(text="again", threshold=1, deadline=T0 + timedelta(hours=5)),
                                     at(1)).then_rejects("already_exists", "proposal_id")

    def test_the_text_is_required(self) -> None:
        open_with(threshold=5, text="  ").then_rejects("invalid", "text")

    def test_the_deadline_is_in_the_future(self) -> None:
        open_with(threshold=5, deadline=T0).then_rejects("invalid", "deadline")

    def test_a_coordinator_is_a_slug(self) -> None:
        open_with(threshold=5, coordinator="Heimdallr!").then_rejects("invalid", "coordinator")
        open_with(threshold=5, coordinator="heimdallr\n").then_rejects("invalid", "coordinator")

    def test_the_deadline_is_kept_in_utc_and_clear_of_the_calendars_end(self) -> None:
        [event] = open_with(threshold=5, deadline=datetime.fromisoformat("2030-01-01T12:00:00+02:00")).then(
            "ProposalOpened")
        assert event.deadline == datetime(2030, 1, 1, 10, tzinfo=timezone.utc)
        assert event.deadline.utcoffset() == timedelta(0)
        open_with(threshold=5, deadline=datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)).then_rejects(
            "invalid", "deadline")
        # Message schedules end in 2262; the year is the UTC one, whatever the offset given.
        open_with(threshold=5, deadline=datetime(2262, 4, 12, tzinfo=timezone.utc)).then_rejects("invalid", "deadline")
        open_with(threshold=5, deadline=datetime.fromisoformat("2199-12-31T23:00:00-05:00")).then_rejects(
            "invalid", "deadline")
        open_with(threshold=5, deadline=datetime(2199, 12, 31, 23, tzinfo=timezone.utc)).then("ProposalOpened")


class TestDeadline:
    HALF_SECOND = 0.5 / 3600  # hours: a clock between two whole seconds

    def opening(self, hours: float = HALF_SECOND, **fields: object) -> Event:
        [event] = given(FAMILY).when(propose(threshold=5, **fields), at(hours, "alice")).then("ProposalOpened")
        return event

    def test_by_default_24_hours_from_the_services_clock_rounded_up_to_the_second(self) -> None:
        assert self.opening(deadline=None).deadline == T0 + timedelta(hours=24, seconds=1)
        assert self.opening(0, deadline=None).deadline == T0 + timedelta(hours=24)

    def test_a_duration_counts_from_the_services_clock_rounded_up_to_the_second(self) -> None:
        assert self.opening(deadline=None, deadline_in="30m").deadline == T0 + timedelta(minutes=30, seconds=1)
        assert self.opening(0, deadline=None, deadline_in="2d").deadline == T0 + timedelta(days=2)

    def test_a_time_given_is_kept_as_is(self) -> None:
        moment = T0 + timedelta(hours=3, microseconds=250)
        assert self.opening(deadline=moment).deadline == moment

    def test_a_time_or_a_duration_not_both(self) -> None:
        open_with(threshold=5, deadline_in="2h").then_rejects("invalid", "deadline_in")

    @pytest.mark.parametrize("within", ["0h", "2 hours", "-1h", "36601d"])
    def test_a_duration_is_above_zero_and_at_most_a_century(self, within: str) -> None:
        open_with(threshold=5, deadline=None, deadline_in=within).then_rejects("invalid", "deadline_in")


class TestProposalId:
    COMMAND = propose(proposal_id=None, threshold=5)

    def test_a_missing_id_is_derived_from_the_actor_the_command_id_and_the_attempt(self) -> None:
        derived = hashlib.sha256(b"alice/cmd-1/0").hexdigest()[:8].upper()
        filled = q.with_proposal_id(self.COMMAND, "alice", "cmd-1", 0)
        assert filled.proposal_id == derived and filled == propose(proposal_id=derived, threshold=5)

    def test_a_retry_derives_the_same_id_and_another_attempt_another(self) -> None:
        ids = {q.with_proposal_id(self.COMMAND, "alice", "cmd-1", attempt).proposal_id
               for attempt in range(q.ID_ATTEMPTS)}
        assert q.with_proposal_id(self.COMMAND, "alice", "cmd-1", 0) == q.with_proposal_id(
            self.COMMAND, "alice", "cmd-1", 0)
        assert len(ids) == q.ID_ATTEMPTS == 4
        assert q.with_proposal_id(self.COMMAND, "bob", "cmd-1", 0).proposal_id not in ids

    def test_a_derived_id_is_one_the_rules_accept(self) -> None:
        command = q.with_proposal_id(self.COMMAND, "alice", "cmd-1", 0)
        given(FAMILY).when(command, at(0, "alice")).then("ProposalOpened")

    def test_an_id_given_is_kept(self) -> None:
        command = propose()
        assert q.with_proposal_id(command, "alice", "cmd-1", 3) is command


class TestAdvice:
    def test_a_text_over_the_short_form_is_accepted_with_a_warning(self) -> None:
        command = propose(threshold=5, text="x" * (q.SHORT_FORM + 1))
        given(FAMILY).when(command, at()).then("ProposalOpened")
        assert q.advice(command) == ["text is 401 characters; the fleet channel is short-form (400)"]

    def test_nothing_to_say_otherwise(self) -> None:
        assert q.advice(propose(threshold=5, text="x" * q.SHORT_FORM)) == []
        assert q.advice(ACK) == [] and q.advice(nack("x" * 1000)) == []


class TestVoting:
    def test_an_elector_acks(self) -> None:
        [event] = given(FAMILY, opened()).when(ACK, at(1, "agent-1")).then("ProposalAcked")
        assert event.agent == "agent-1"

    def test_a_nack_is_never_counted_as_an_ack(self) -> None:
        history = voting(opened(threshold=2), "-agent-1")
        outcome = given(FAMILY, history).when(ACK, at(1, "agent-2"))
        outcome.then("ProposalAcked")
        state = outcome.and_state()
        assert state.acks == ("agent-2",) and state.nacks == (Nack("agent-1", "no"),)
        assert state.status is Status.OPEN

    def test_one_vote_per_agent(self) -> None:
        history = voting(opened(), "agent-1")
        given(FAMILY, history).when(ACK, at(2, "agent-1")).then_rejects("already_voted", "agent")
        given(FAMILY, history).when(nack("changed my mind"), at(2, "agent-1")).then_rejects("already_voted", "agent")

    def test_a_nack_needs_a_reason(self) -> None:
        given(FAMILY, opened()).when(nack(" "), at(1, "agent-1")).then_rejects("invalid", "reason")

    def test_only_the_electorate_votes(self) -> None:
        given(FAMILY, opened()).when(ACK, at(1, "mallory")).then_rejects("not_in_electorate", "agent")

    def test_a_vote_at_or_after_the_deadline_is_closed(self) -> None:
        given(FAMILY, opened(hours=24)).when(ACK, at(24, "agent-1")).then_rejects("voting_closed")

    def test_a_vote_on_a_closed_proposal_is_not_open(self) -> None:
        history = voting(opened(threshold=1), "agent-1")
        given(FAMILY, history).when(ACK, at(2, "agent-2")).then_rejects("not_open")

    @pytest.mark.parametrize("command", [ACK, nack(), tiebreak(), override(), EXPIRE])
    def test_every_command_but_the_proposal_needs_one_to_exist(self, command: object) -> None:
        given(FAMILY).when(command, at(1, "agent-1")).then_rejects("not_found", "proposal_id")


class TestOutcomes:
    def test_k_minus_one_acks_keep_it_open_and_the_kth_accepts_at_once(self) -> None:
        history = voting(opened(threshold=5), *NINE[:4])
        assert given(FAMILY, history).state.status is Status.OPEN
        _, accepted = given(FAMILY, history).when(ACK, at(2, "agent-5")).then("ProposalAcked", "ProposalAccepted")
        assert accepted.acks == tuple(NINE[:5]) and accepted.nacks == ()

    def test_rejected_at_the_exact_vote_that_puts_k_out_of_reach(self) -> None:
        # 5 of 9: four NACKs leave five who could ACK; the fifth NACK leaves four.
        history = voting(opened(threshold=5), *[f"-{a}" for a in NINE[:4]])
        assert given(FAMILY, history).state.status is Status.OPEN
        _, rejected = given(FAMILY, history).when(nack(), at(2, "agent-5")).then("ProposalNacked", "ProposalRejected")
        assert rejected.reason == "threshold-unreachable" and len(rejected.nacks) == 5

    def test_with_veto_a_single_nack_rejects(self) -> None:
        history = voting(opened(veto_on_nack=True), *NINE[:4])
        _, rejected = given(FAMILY, history).when(nack("unsafe"), at(2, "agent-9")).then(
            "ProposalNacked", "ProposalRejected")
        assert rejected.reason == "veto-on-nack"

    def test_the_coordinator_vetoes_with_a_nack_even_outside_the_electorate(self) -> None:
        [vetoed] = given(FAMILY, opened(coordinator="heimdallr")).when(
            nack(COORDINATOR_VETO), at(1, "heimdallr")).then("ProposalVetoed")
        assert vetoed.by == "heimdallr"

    def test_anyone_else_saying_coordinator_veto_is_not_the_coordinator(self) -> None:
        given(FAMILY, opened(coordinator="heimdallr")).when(
            nack(COORDINATOR_VETO), at(1, "agent-1")).then_rejects("not_coordinator", "actor")
        given(FAMILY, opened()).when(nack(COORDINATOR_VETO), at(1, "agent-1")).then_rejects("not_coordinator", "actor")

    def test_expiry_at_the_deadline_without_a_tie(self) -> None:
        history = voting(opened(threshold=5), "agent-1", "agent-2", "-agent-3")
        [expired] = given(FAMILY, history).when(EXPIRE, at(24, "timer")).then("ProposalExpired")
        assert expired.acks == ("agent-1", "agent-2")

    def test_expiry_before_the_deadline_or_once_closed_does_nothing(self) -> None:
        given(FAMILY, opened()).when(EXPIRE, at(23, "timer")).then()
        given(FAMILY, voting(opened(threshold=1), "agent-1")).when(EXPIRE, at(30, "timer")).then()

    def test_without_a_coordinator_a_tie_at_the_deadline_expires(self) -> None:
        history = voting(opened(), "agent-1", "-agent-2")
        given(FAMILY, history).when(EXPIRE, at(24, "timer")).then("ProposalExpired")


class TestCoordinator:
    def four(self) -> list[Event]:
        return opened(electorate=NINE[:4], threshold=3, coordinator="heimdallr")

    def test_with_a_coordinator_unreachable_k_waits_for_every_vote(self) -> None:
        history = voting(self.four(), "-agent-1", "-agent-2")  # 3 of 4 is now out of reach
        assert given(FAMILY, history).state.status is Status.OPEN

    def test_a_tie_when_all_have_voted_awaits_the_coordinator(self) -> None:
        history = voting(self.four(), "agent-1", "-agent-2", "agent-3")
        outcome = given(FAMILY, history).when(nack(), at(2, "agent-4"))
        outcome.then("ProposalNacked", "TieDeclared")
        assert outcome.and_state().status is Status.AWAITING_COORDINATOR

    def test_all_voted_without_a_tie_rejects(self) -> None:
        history = voting(self.four(), "agent-1", "-agent-2", "-agent-3")
        given(FAMILY, history).when(nack(), at(2, "agent-4")).then("ProposalNacked", "ProposalRejected")

    def test_a_tie_at_the_deadline_awaits_the_coordinator(self) -> None:
        history = voting(self.four(), "agent-1", "-agent-2")
        given(FAMILY, history).when(EXPIRE, at(24, "timer")).then("TieDeclared")

    def test_no_votes_at_the_deadline_is_a_tie_of_nothing_for_the_coordinator(self) -> None:
        given(FAMILY, self.four()).when(EXPIRE, at(24, "timer")).then("TieDeclared")

    def test_after_the_deadline_the_votes_decide_however_late_the_timer(self) -> None:
        given(FAMILY, self.four()).when(nack(COORDINATOR_VETO), at(25, "heimdallr")).then_rejects("voting_closed")
        given(FAMILY, self.four()).when(override(), at(25, "heimdallr")).then_rejects("voting_closed")
        given(FAMILY, self.tied()).when(nack(COORDINATOR_VETO), at(25, "heimdallr")).then_rejects("not_open")

    def tied(self) -> list[Event]:
        history = voting(self.four(), "agent-1", "-agent-2")
        return history + decided(FAMILY, history, EXPIRE, at(24, "timer"))

    @pytest.mark.parametrize(("decision", "status"), [
        (CoordinatorDecision.ACCEPT, Status.ACCEPTED), (CoordinatorDecision.REJECT, Status.REJECTED)])
    def test_the_coordinator_breaks_the_tie(self, decision: CoordinatorDecision, status: Status) -> None:
        outcome = given(FAMILY, self.tied()).when(tiebreak(decision), at(25, "heimdallr"))
        outcome.then("CoordinatorTieBroken")
        assert outcome.and_state().status is status

    def test_only_the_coordinator_breaks_a_tie(self) -> None:
        given(FAMILY, self.tied()).when(tiebreak(), at(25, "agent-1")).then_rejects("not_coordinator", "actor")

    def test_no_tiebreak_without_a_tie(self) -> None:
        given(FAMILY, self.four()).when(tiebreak(), at(1, "heimdallr")).then_rejects("not_open")

    def test_votes_stop_while_awaiting_the_coordinator(self) -> None:
        given(FAMILY, self.tied()).when(ACK, at(23, "agent-3")).then_rejects("not_open")

    def test_the_coordinator_overrides_while_open(self) -> None:
        outcome = given(FAMILY, self.four()).when(override(CoordinatorDecision.REJECT, "the fleet is mid-migration"),
                                                  at(1, "heimdallr"))
        [event] = outcome.then("CoordinatorOverridden")
        assert event.reason == "the fleet is mid-migration" and outcome.and_state().status is Status.REJECTED

    def test_an_override_needs_the_coordinator_a_reason_and_an_open_proposal(self) -> None:
        given(FAMILY, self.four()).when(override(), at(1, "agent-1")).then_rejects("not_coordinator", "actor")
        given(FAMILY, self.four()).when(override(reason=""), at(1, "heimdallr")).then_rejects("invalid", "reason")
        given(FAMILY, self.tied()).when(override(), at(25, "heimdallr")).then_rejects("not_open")
