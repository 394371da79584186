"""PROTOCOLS.md section 1, rule by rule: ratification is unanimous-or-decompose."""

from __future__ import annotations

from datetime import timedelta

import pytest

from athenaeum.aggregates import ratification as r
from athenaeum.aggregates.ratification_state import Status, evolve
from athenaeum.events import Event
from athenaeum.events.ratification import (
    AtomRef,
    Caveat,
    Decision,
    DissentItem,
    HumanChoice,
    Mode,
    Note,
    Resolution,
    TallyOutcome,
)
from tests.aggregates.given import T0, at, given

ARTIFACT = "# ADR 7\n\n## Scope\nAll agents log to the ledger.\n"
SHA = r.sha256_of(ARTIFACT)
ROSTER = ["alice", "bob", "carol"]


def frozen(roster: list[str] = ROSTER, mode: Mode = Mode.STANDARD, hours: float = 72) -> list[Event]:
    return r.freeze(None, at(0, "alice"), topic="adr-7", artifact=ARTIFACT, roster=roster, mode=mode,
                    expires_at=T0 + timedelta(hours=hours))


def objection(section: str = "Scope", text: str = "too broad") -> DissentItem:
    return DissentItem(atom=AtomRef(section=section, anchor="All agents"), objection=text,
                       proposed_resolution=Resolution.CARVE_CAVEAT)


def voted(history: list[Event], agent: str, decision: Decision = Decision.SIGN, hours: float = 1,
          dissent: tuple[DissentItem, ...] = ()) -> list[Event]:
    state = given(evolve, history).state
    return r.cast_vote(state, at(hours, agent), decision=decision, artifact_sha256=SHA, dissent=dissent)


def decomposed() -> list[Event]:
    history = frozen()
    history += voted(history, "alice")
    history += voted(history, "bob", Decision.DISSENT, dissent=(objection(), objection("Logs", "no retention")))
    history += voted(history, "carol")
    return history


class TestFreezing:
    def test_the_service_computes_the_sha256_of_the_exact_bytes(self) -> None:
        [event] = given(evolve).when(r.freeze, at(), topic="adr-7", artifact=ARTIFACT, roster=ROSTER,
                                     mode=Mode.STANDARD, expires_at=T0 + timedelta(hours=72)).then("ArtifactFrozen")
        assert event.artifact_sha256 == SHA and event.artifact == ARTIFACT and event.initiator == "alice"

    def test_a_topic_is_frozen_once(self) -> None:
        given(evolve, frozen()).when(r.freeze, at(), topic="adr-7", artifact="x", roster=ROSTER,
                                     mode=Mode.STANDARD, expires_at=T0 + timedelta(hours=1)).then_rejects("already_exists")

    @pytest.mark.parametrize("roster", [[], ["alice", "alice"], ["Alice"], ["has space"]])
    def test_the_roster_is_non_empty_and_made_of_unique_slugs(self, roster: list[str]) -> None:
        given(evolve).when(r.freeze, at(), topic="adr-7", artifact=ARTIFACT, roster=roster, mode=Mode.STANDARD,
                           expires_at=T0 + timedelta(hours=1)).then_rejects("invalid", "roster")

    def test_a_declared_sha_that_differs_is_a_mismatch(self) -> None:
        given(evolve).when(r.freeze, at(), topic="adr-7", artifact=ARTIFACT, roster=ROSTER, mode=Mode.STANDARD,
                           expires_at=T0 + timedelta(hours=1), declared_sha256="0" * 64).then_rejects("sha_mismatch")

    def test_expiry_must_be_in_the_future(self) -> None:
        given(evolve).when(r.freeze, at(), topic="adr-7", artifact=ARTIFACT, roster=ROSTER, mode=Mode.STANDARD,
                           expires_at=T0).then_rejects("invalid", "expires_at")

    def test_supersedes_must_name_an_existing_topic(self) -> None:
        given(evolve).when(r.freeze, at(), topic="adr-8", artifact=ARTIFACT, roster=ROSTER, mode=Mode.STANDARD,
                           expires_at=T0 + timedelta(hours=1), supersedes="adr-1").then_rejects("not_found", "supersedes")


class TestVoting:
    def test_a_rostered_agent_signs(self) -> None:
        [vote] = given(evolve, frozen()).when(r.cast_vote, at(1, "bob"), decision=Decision.SIGN,
                                              artifact_sha256=SHA).then("VoteCast")
        assert vote.agent == "bob" and vote.decision is Decision.SIGN

    def test_an_agent_off_the_roster_cannot_vote(self) -> None:
        given(evolve, frozen()).when(r.cast_vote, at(1, "mallory"), decision=Decision.SIGN,
                                     artifact_sha256=SHA).then_rejects("not_rostered")

    def test_a_second_vote_by_the_same_agent_is_rejected(self) -> None:
        history = frozen()
        given(evolve, history, voted(history, "bob")).when(
            r.cast_vote, at(2, "bob"), decision=Decision.DISSENT, artifact_sha256=SHA, dissent=(objection(),)
        ).then_rejects("already_voted")

    def test_a_mismatched_hash_is_void(self) -> None:
        given(evolve, frozen()).when(r.cast_vote, at(1, "bob"), decision=Decision.SIGN,
                                     artifact_sha256="f" * 64).then_rejects("sha_mismatch")

    def test_a_vote_at_or_after_expiry_is_closed(self) -> None:
        given(evolve, frozen(hours=72)).when(r.cast_vote, at(72, "bob"), decision=Decision.SIGN,
                                             artifact_sha256=SHA).then_rejects("voting_closed")

    def test_a_dissent_needs_an_atom(self) -> None:
        given(evolve, frozen()).when(r.cast_vote, at(1, "bob"), decision=Decision.DISSENT,
                                     artifact_sha256=SHA).then_rejects("invalid", "dissent")

    def test_a_dissent_item_needs_text(self) -> None:
        given(evolve, frozen()).when(r.cast_vote, at(1, "bob"), decision=Decision.DISSENT, artifact_sha256=SHA,
                                     dissent=(objection(text=" "),)).then_rejects("invalid", "dissent.objection")

    def test_a_sign_carries_no_dissent(self) -> None:
        given(evolve, frozen()).when(r.cast_vote, at(1, "bob"), decision=Decision.SIGN, artifact_sha256=SHA,
                                     dissent=(objection(),)).then_rejects("invalid", "dissent")

    def test_a_vote_on_a_closed_ratification_is_not_open(self) -> None:
        history = frozen(roster=["alice"])
        history += voted(history, "alice")
        given(evolve, history).when(r.cast_vote, at(2, "alice"), decision=Decision.SIGN,
                                    artifact_sha256=SHA).then_rejects("not_open")


class TestTally:
    def test_the_last_signature_ratifies_with_each_votes_own_time(self) -> None:
        history = frozen()
        history += voted(history, "carol", hours=1)
        history += voted(history, "alice", hours=2)
        vote, tallied, ratified = given(evolve, history).when(
            r.cast_vote, at(3, "bob"), decision=Decision.SIGN, artifact_sha256=SHA
        ).then("VoteCast", "VotesTallied", "ArtifactRatified")
        assert tallied.outcome is TallyOutcome.RATIFIED and tallied.merge_writer == "alice"
        assert ratified.path == "all-SIGN"
        assert [(s.agent, s.cast_at) for s in ratified.signatures] == [
            ("alice", T0 + timedelta(hours=2)), ("bob", T0 + timedelta(hours=3)), ("carol", T0 + timedelta(hours=1))
        ]

    def test_any_dissent_decomposes_into_the_dissenters_atoms(self) -> None:
        history = decomposed()
        state = given(evolve, history).state
        assert state.status is Status.PENDING_HUMAN
        assert [(a.id, a.section, a.raised_by) for a in state.atoms] == [("A1", "Scope", "bob"), ("A2", "Logs", "bob")]

    def test_in_fast_mode_any_dissent_rejects(self) -> None:
        history = frozen(roster=["alice", "bob"], mode=Mode.FAST)
        history += voted(history, "alice")
        _, tallied, rejected = given(evolve, history).when(
            r.cast_vote, at(2, "bob"), decision=Decision.DISSENT, artifact_sha256=SHA, dissent=(objection(),)
        ).then("VoteCast", "VotesTallied", "RatificationRejected")
        assert tallied.outcome is TallyOutcome.REJECTED

    def test_expiry_records_abstentions_never_a_silent_yes(self) -> None:
        history = frozen()
        history += voted(history, "bob")
        tallied, decomposition = given(evolve, history).when(r.expire, at(72, "timer")).then(
            "VotesTallied", "ArtifactDecomposed"
        )
        assert tallied.abstentions == ("alice", "carol") and tallied.signs == ("bob",)
        assert decomposition.atoms == () and decomposition.abstentions == ("alice", "carol")

    def test_expiry_with_no_votes_has_no_merge_writer(self) -> None:
        tallied, _ = given(evolve, frozen()).when(r.expire, at(80, "timer")).then("VotesTallied", "ArtifactDecomposed")
        assert tallied.merge_writer is None

    def test_expiry_before_the_deadline_or_after_the_tally_does_nothing(self) -> None:
        given(evolve, frozen()).when(r.expire, at(71, "timer")).then()
        given(evolve, decomposed()).when(r.expire, at(80, "timer")).then()


class TestHumanDecision:
    def test_only_a_human_decides(self) -> None:
        given(evolve, decomposed()).when(r.decide, at(5, "bob"), decision=HumanChoice.REJECT).then_rejects("not_human")

    def test_no_decision_while_open(self) -> None:
        given(evolve, frozen()).when(r.decide, at(5, "ada"), decision=HumanChoice.REJECT).then_rejects(
            "not_pending_human"
        )

    def test_accept_split_ratifies_the_signers(self) -> None:
        _, ratified = given(evolve, decomposed()).when(
            r.decide, at(5, "ada"), decision=HumanChoice.ACCEPT_SPLIT, notes=(Note(atom="A1", note="later"),)
        ).then("HumanDecisionRecorded", "ArtifactRatified")
        assert ratified.path == "human-decision: accept-split"
        assert [s.agent for s in ratified.signatures] == ["alice", "carol"]

    def test_rewrite_with_caveats_needs_a_verifier_or_ticket_on_every_atom(self) -> None:
        given(evolve, decomposed()).when(
            r.decide, at(5, "ada"), decision=HumanChoice.REWRITE_WITH_CAVEATS,
            caveats=(Caveat(atom="A1", verifier="make check-scope"),),
        ).then_rejects("caveat_incomplete")

    def test_rewrite_with_caveats_ratifies_every_atom_with_its_caveat(self) -> None:
        caveats = (Caveat(atom="A1", verifier="make check-scope"), Caveat(atom="A2", ticket="OPS-12"))
        _, ratified = given(evolve, decomposed()).when(
            r.decide, at(5, "ada"), decision=HumanChoice.REWRITE_WITH_CAVEATS, caveats=caveats
        ).then("HumanDecisionRecorded", "ArtifactRatified")
        assert ratified.ratified_atoms == ("A1", "A2") and ratified.caveats == caveats

    def test_reject_is_terminal(self) -> None:
        outcome = given(evolve, decomposed()).when(r.decide, at(5, "ada"), decision=HumanChoice.REJECT)
        outcome.then("HumanDecisionRecorded", "RatificationRejected")
        assert outcome.and_state().status is Status.REJECTED

    def test_a_decision_must_name_existing_atoms(self) -> None:
        given(evolve, decomposed()).when(
            r.decide, at(5, "ada"), decision=HumanChoice.DECOMPOSE_FURTHER, atoms=("A9",)
        ).then_rejects("not_found", "atom")


class TestDecomposeFurther:
    def further(self) -> list[Event]:
        history = decomposed()
        return history + r.decide(given(evolve, history).state, at(5, "ada"),
                                  decision=HumanChoice.DECOMPOSE_FURTHER, atoms=("A2",))

    def test_it_stays_pending_human_until_the_merge_writer_splits(self) -> None:
        state = given(evolve, self.further()).state
        assert state.status is Status.PENDING_HUMAN and state.awaiting_split == ("A2",)

    def test_the_merge_writer_splits_with_new_never_reused_ids(self) -> None:
        into = (objection("Logs", "retention unclear"), objection("Logs", "format unspecified"))
        outcome = given(evolve, self.further()).when(r.split, at(6, "alice"), atom="A2", into=into)
        [split] = outcome.then("AtomSplit")
        assert [a.id for a in split.into] == ["A3", "A4"] and {a.raised_by for a in split.into} == {"bob"}
        assert [a.id for a in outcome.and_state().atoms] == ["A1", "A3", "A4"]

    def test_only_the_merge_writer_splits(self) -> None:
        given(evolve, self.further()).when(r.split, at(6, "bob"), atom="A2", into=(objection(),)).then_rejects(
            "actor_mismatch"
        )

    def test_only_an_atom_sent_back_is_split(self) -> None:
        given(evolve, self.further()).when(r.split, at(6, "alice"), atom="A1", into=(objection(),)).then_rejects(
            "invalid", "atom"
        )


class TestCancel:
    def test_the_initiator_cancels_while_open(self) -> None:
        given(evolve, frozen()).when(r.cancel, at(1, "alice")).then("RatificationCanceled")

    def test_a_human_may_cancel_too(self) -> None:
        given(evolve, frozen()).when(r.cancel, at(1, "ada")).then("RatificationCanceled")

    def test_another_agent_may_not(self) -> None:
        given(evolve, frozen()).when(r.cancel, at(1, "bob")).then_rejects("actor_mismatch")

    def test_nothing_to_cancel_once_expired_even_before_the_timer_tallies(self) -> None:
        given(evolve, frozen()).when(r.cancel, at(73, "alice")).then_rejects("voting_closed")

    def test_nothing_to_cancel_after_the_tally(self) -> None:
        given(evolve, decomposed()).when(r.cancel, at(9, "alice")).then_rejects("not_open")
