"""PROTOCOLS.md section 2, rule by rule: ACK/NACK quorum proposals."""

from __future__ import annotations

from datetime import timedelta

import pytest

from athenaeum.aggregates import quorum as q
from athenaeum.aggregates.quorum_state import Status, evolve
from athenaeum.events import Event
from athenaeum.events.quorum import COORDINATOR_VETO, CoordinatorDecision, Nack, Preset
from tests.aggregates.given import T0, at, given

PID = "0A1B2C3D"
NINE = [f"agent-{i}" for i in range(1, 10)]


def opened(electorate: list[str] = NINE, threshold: int | None = 5, hours: float = 24, **options: object) -> list[Event]:
    return q.open_proposal(None, at(0, "alice"), proposal_id=PID, text="Adopt the ledger", electorate=electorate,
                           threshold=threshold, deadline=T0 + timedelta(hours=hours), **options)


def voting(history: list[Event], *votes: str, hours: float = 1) -> list[Event]:
    """Cast votes in order: ``"agent-1"`` ACKs, ``"-agent-2"`` NACKs (reason "no")."""
    history = list(history)
    for vote in votes:
        state = given(evolve, history).state
        if vote.startswith("-"):
            history += q.nack(state, at(hours, vote[1:]), reason="no")
        else:
            history += q.ack(state, at(hours, vote))
    return history


def open_with(**arguments: object):  # type: ignore[no-untyped-def]
    defaults = dict(proposal_id=PID, text="Adopt the ledger", electorate=NINE, deadline=T0 + timedelta(hours=24))
    return given(evolve).when(q.open_proposal, at(0, "alice"), **(defaults | arguments))


class TestOpening:
    def test_a_proposal_records_its_threshold_of_the_electorate(self) -> None:
        [event] = open_with(threshold=5).then("ProposalOpened")
        assert (event.threshold, event.total, event.proposer, event.coordinator) == (5, 9, "alice", None)

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

    def test_an_id_is_used_once(self) -> None:
        given(evolve, opened()).when(q.open_proposal, at(1), proposal_id=PID, text="again", electorate=NINE,
                                     threshold=1, deadline=T0 + timedelta(hours=5)).then_rejects("already_exists")

    def test_the_text_is_required(self) -> None:
        open_with(threshold=5, text="  ").then_rejects("invalid", "text")

    def test_the_deadline_is_in_the_future(self) -> None:
        open_with(threshold=5, deadline=T0).then_rejects("invalid", "deadline")

    def test_a_coordinator_is_a_slug(self) -> None:
        open_with(threshold=5, coordinator="Heimdallr!").then_rejects("invalid", "coordinator")
        open_with(threshold=5, coordinator="heimdallr\n").then_rejects("invalid", "coordinator")

    def test_the_deadline_is_kept_in_utc_and_clear_of_the_calendars_end(self) -> None:
        from datetime import datetime, timezone

        [event] = open_with(threshold=5, deadline=datetime.fromisoformat("2030-01-01T12:00:00+02:00")).then(
            "ProposalOpened")
        assert event.deadline == datetime(2030, 1, 1, 10, tzinfo=timezone.utc) and event.deadline.utcoffset() == timedelta(0)
        open_with(threshold=5, deadline=datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)).then_rejects(
            "invalid", "deadline")
        # Message schedules end in 2262; the year is the UTC one, whatever the offset given.
        open_with(threshold=5, deadline=datetime(2262, 4, 12, tzinfo=timezone.utc)).then_rejects("invalid", "deadline")
        open_with(threshold=5, deadline=datetime.fromisoformat("2199-12-31T23:00:00-05:00")).then_rejects(
            "invalid", "deadline")
        open_with(threshold=5, deadline=datetime(2199, 12, 31, 23, tzinfo=timezone.utc)).then("ProposalOpened")


class TestVoting:
    def test_an_elector_acks(self) -> None:
        [event] = given(evolve, opened()).when(q.ack, at(1, "agent-1")).then("ProposalAcked")
        assert event.agent == "agent-1"

    def test_a_nack_is_never_counted_as_an_ack(self) -> None:
        history = voting(opened(threshold=2), "-agent-1")
        [ack] = given(evolve, history).when(q.ack, at(1, "agent-2")).then("ProposalAcked")
        state = given(evolve, [*history, ack]).state
        assert state.acks == ("agent-2",) and state.nacks == (Nack("agent-1", "no"),)
        assert state.status is Status.OPEN

    def test_one_vote_per_agent(self) -> None:
        history = voting(opened(), "agent-1")
        given(evolve, history).when(q.ack, at(2, "agent-1")).then_rejects("already_voted")
        given(evolve, history).when(q.nack, at(2, "agent-1"), reason="changed my mind").then_rejects("already_voted")

    def test_a_nack_needs_a_reason(self) -> None:
        given(evolve, opened()).when(q.nack, at(1, "agent-1"), reason=" ").then_rejects("invalid", "reason")

    def test_only_the_electorate_votes(self) -> None:
        given(evolve, opened()).when(q.ack, at(1, "mallory")).then_rejects("not_in_electorate")

    def test_a_vote_at_or_after_the_deadline_is_closed(self) -> None:
        given(evolve, opened(hours=24)).when(q.ack, at(24, "agent-1")).then_rejects("voting_closed")

    def test_a_vote_on_a_closed_proposal_is_not_open(self) -> None:
        history = voting(opened(threshold=1), "agent-1")
        given(evolve, history).when(q.ack, at(2, "agent-2")).then_rejects("not_open")


class TestOutcomes:
    def test_k_minus_one_acks_keep_it_open_and_the_kth_accepts_at_once(self) -> None:
        history = voting(opened(threshold=5), *NINE[:4])
        assert given(evolve, history).state.status is Status.OPEN
        _, accepted = given(evolve, history).when(q.ack, at(2, "agent-5")).then("ProposalAcked", "ProposalAccepted")
        assert accepted.acks == tuple(NINE[:5]) and accepted.nacks == ()

    def test_rejected_at_the_exact_vote_that_puts_k_out_of_reach(self) -> None:
        # 5 of 9: four NACKs leave five who could ACK; the fifth NACK leaves four.
        history = voting(opened(threshold=5), *[f"-{a}" for a in NINE[:4]])
        assert given(evolve, history).state.status is Status.OPEN
        _, rejected = given(evolve, history).when(q.nack, at(2, "agent-5"), reason="no").then(
            "ProposalNacked", "ProposalRejected")
        assert rejected.reason == "threshold-unreachable" and len(rejected.nacks) == 5

    def test_with_veto_a_single_nack_rejects(self) -> None:
        history = voting(opened(veto_on_nack=True), *NINE[:4])
        _, rejected = given(evolve, history).when(q.nack, at(2, "agent-9"), reason="unsafe").then(
            "ProposalNacked", "ProposalRejected")
        assert rejected.reason == "veto-on-nack"

    def test_the_coordinator_vetoes_with_a_nack_even_outside_the_electorate(self) -> None:
        [vetoed] = given(evolve, opened(coordinator="heimdallr")).when(
            q.nack, at(1, "heimdallr"), reason=COORDINATOR_VETO).then("ProposalVetoed")
        assert vetoed.by == "heimdallr"

    def test_anyone_else_saying_coordinator_veto_is_not_the_coordinator(self) -> None:
        given(evolve, opened(coordinator="heimdallr")).when(
            q.nack, at(1, "agent-1"), reason=COORDINATOR_VETO).then_rejects("not_coordinator")
        given(evolve, opened()).when(q.nack, at(1, "agent-1"), reason=COORDINATOR_VETO).then_rejects("not_coordinator")

    def test_expiry_at_the_deadline_without_a_tie(self) -> None:
        history = voting(opened(threshold=5), "agent-1", "agent-2", "-agent-3")
        [expired] = given(evolve, history).when(q.expire, at(24, "timer")).then("ProposalExpired")
        assert expired.acks == ("agent-1", "agent-2")

    def test_expiry_before_the_deadline_or_once_closed_does_nothing(self) -> None:
        given(evolve, opened()).when(q.expire, at(23, "timer")).then()
        given(evolve, voting(opened(threshold=1), "agent-1")).when(q.expire, at(30, "timer")).then()

    def test_without_a_coordinator_a_tie_at_the_deadline_expires(self) -> None:
        history = voting(opened(), "agent-1", "-agent-2")
        given(evolve, history).when(q.expire, at(24, "timer")).then("ProposalExpired")


class TestCoordinator:
    def four(self) -> list[Event]:
        return opened(electorate=NINE[:4], threshold=3, coordinator="heimdallr")

    def test_with_a_coordinator_unreachable_k_waits_for_every_vote(self) -> None:
        history = voting(self.four(), "-agent-1", "-agent-2")  # 3 of 4 is now out of reach
        assert given(evolve, history).state.status is Status.OPEN

    def test_a_tie_when_all_have_voted_awaits_the_coordinator(self) -> None:
        history = voting(self.four(), "agent-1", "-agent-2", "agent-3")
        _, tie = given(evolve, history).when(q.nack, at(2, "agent-4"), reason="no").then(
            "ProposalNacked", "TieDeclared")
        assert given(evolve, history, [_, tie]).state.status is Status.AWAITING_COORDINATOR

    def test_all_voted_without_a_tie_rejects(self) -> None:
        history = voting(self.four(), "agent-1", "-agent-2", "-agent-3")
        given(evolve, history).when(q.nack, at(2, "agent-4"), reason="no").then("ProposalNacked", "ProposalRejected")

    def test_a_tie_at_the_deadline_awaits_the_coordinator(self) -> None:
        history = voting(self.four(), "agent-1", "-agent-2")
        given(evolve, history).when(q.expire, at(24, "timer")).then("TieDeclared")

    def test_no_votes_at_the_deadline_is_a_tie_of_nothing_for_the_coordinator(self) -> None:
        given(evolve, self.four()).when(q.expire, at(24, "timer")).then("TieDeclared")

    def test_after_the_deadline_the_votes_decide_however_late_the_timer(self) -> None:
        given(evolve, self.four()).when(q.nack, at(25, "heimdallr"), reason=COORDINATOR_VETO).then_rejects(
            "voting_closed")
        given(evolve, self.four()).when(q.override, at(25, "heimdallr"), decision=CoordinatorDecision.ACCEPT,
                                        reason="x").then_rejects("voting_closed")
        given(evolve, self.tied()).when(q.nack, at(25, "heimdallr"), reason=COORDINATOR_VETO).then_rejects("not_open")

    def tied(self) -> list[Event]:
        history = voting(self.four(), "agent-1", "-agent-2")
        return history + q.expire(given(evolve, history).state, at(24, "timer"))

    @pytest.mark.parametrize(("decision", "status"), [
        (CoordinatorDecision.ACCEPT, Status.ACCEPTED), (CoordinatorDecision.REJECT, Status.REJECTED)])
    def test_the_coordinator_breaks_the_tie(self, decision: CoordinatorDecision, status: Status) -> None:
        outcome = given(evolve, self.tied()).when(q.tiebreak, at(25, "heimdallr"), decision=decision)
        outcome.then("CoordinatorTieBroken")
        assert outcome.and_state().status is status

    def test_only_the_coordinator_breaks_a_tie(self) -> None:
        given(evolve, self.tied()).when(q.tiebreak, at(25, "agent-1"),
                                        decision=CoordinatorDecision.ACCEPT).then_rejects("not_coordinator")

    def test_no_tiebreak_without_a_tie(self) -> None:
        given(evolve, self.four()).when(q.tiebreak, at(1, "heimdallr"),
                                        decision=CoordinatorDecision.ACCEPT).then_rejects("not_open")

    def test_votes_stop_while_awaiting_the_coordinator(self) -> None:
        given(evolve, self.tied()).when(q.ack, at(23, "agent-3")).then_rejects("not_open")

    def test_the_coordinator_overrides_while_open(self) -> None:
        outcome = given(evolve, self.four()).when(q.override, at(1, "heimdallr"), decision=CoordinatorDecision.REJECT,
                                                  reason="the fleet is mid-migration")
        [event] = outcome.then("CoordinatorOverridden")
        assert event.reason == "the fleet is mid-migration" and outcome.and_state().status is Status.REJECTED

    def test_an_override_needs_the_coordinator_a_reason_and_an_open_proposal(self) -> None:
        given(evolve, self.four()).when(q.override, at(1, "agent-1"), decision=CoordinatorDecision.ACCEPT,
                                        reason="x").then_rejects("not_coordinator")
        given(evolve, self.four()).when(q.override, at(1, "heimdallr"), decision=CoordinatorDecision.ACCEPT,
                                        reason="").then_rejects("invalid", "reason")
        given(evolve, self.tied()).when(q.override, at(25, "heimdallr"), decision=CoordinatorDecision.ACCEPT,
                                        reason="x").then_rejects("not_open")
