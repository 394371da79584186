"""PROTOCOLS.md section 1, rule by rule: ratification is unanimous-or-decompose."""

from __future__ import annotations

from datetime import timedelta

import pytest

from athenaeum.aggregates import ratification as r
from athenaeum.aggregates.ratification import FAMILY
from athenaeum.aggregates.ratification_state import Status
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
from athenaeum.events.ratification_commands import (
    CancelRatification,
    CastVote,
    ExpireRatification,
    InitRatification,
    RecordHumanDecision,
    SplitAtom,
)
from tests.aggregates.given import T0, at, decided, given

ARTIFACT = "# ADR 7\n\n## Scope\nAll agents log to the ledger.\n"
SHA = r.sha256_of(ARTIFACT)
ROSTER = ["alice", "bob", "carol"]


def init(topic: str = "adr-7", roster: list[str] = ROSTER, hours: float = 72, **fields: object) -> InitRatification:
    return InitRatification(topic=topic, artifact=ARTIFACT, roster=roster, expires_at=T0 + timedelta(hours=hours),
                            **fields)


def frozen(roster: list[str] = ROSTER, mode: Mode = Mode.STANDARD, hours: float = 72) -> list[Event]:
    return decided(FAMILY, [], init(roster=roster, mode=mode, hours=hours), at(0, "alice"))


def vote(decision: Decision = Decision.SIGN, dissent: tuple[DissentItem, ...] = (), sha256: str = SHA) -> CastVote:
    return CastVote(topic="adr-7", sha256=sha256, decision=decision, dissent=list(dissent))


def human(decision: HumanChoice, **fields: object) -> RecordHumanDecision:
    return RecordHumanDecision(topic="adr-7", decision=decision, **fields)


def split(atom: str, *into: DissentItem) -> SplitAtom:
    return SplitAtom(topic="adr-7", atom=atom, into=list(into))


def objection(section: str = "Scope", text: str = "too broad") -> DissentItem:
    return DissentItem(atom=AtomRef(section=section, anchor="All agents"), objection=text,
                       proposed_resolution=Resolution.CARVE_CAVEAT)


def voted(history: list[Event], agent: str, decision: Decision = Decision.SIGN, hours: float = 1,
          dissent: tuple[DissentItem, ...] = ()) -> list[Event]:
    return decided(FAMILY, history, vote(decision, dissent), at(hours, agent))


def decomposed() -> list[Event]:
    history = frozen()
    history += voted(history, "alice")
    history += voted(history, "bob", Decision.DISSENT, dissent=(objection(), objection("Logs", "no retention")))
    history += voted(history, "carol")
    return history


class TestFreezing:
    def test_the_service_computes_the_sha256_of_the_exact_bytes(self) -> None:
        [event] = given(FAMILY).when(init(), at()).then("ArtifactFrozen")
        assert event.artifact_sha256 == SHA and event.artifact == ARTIFACT and event.initiator == "alice"

    def test_a_topic_is_frozen_once(self) -> None:
        given(FAMILY, frozen()).when(init(hours=1), at()).then_rejects("already_exists")

    @pytest.mark.parametrize("roster", [[], ["alice", "alice"], ["Alice"], ["has space"]])
    def test_the_roster_is_non_empty_and_made_of_unique_slugs(self, roster: list[str]) -> None:
        given(FAMILY).when(init(roster=roster, hours=1), at()).then_rejects("invalid", "roster")

    def test_a_declared_sha_that_differs_is_a_mismatch(self) -> None:
        given(FAMILY).when(init(hours=1, sha256="0" * 64), at()).then_rejects("sha_mismatch")

    def test_expiry_must_be_in_the_future(self) -> None:
        given(FAMILY).when(init(hours=0), at()).then_rejects("invalid", "expires_at")

    def test_supersedes_must_name_an_existing_topic(self) -> None:
        given(FAMILY).when(init("adr-8", hours=1, supersedes="adr-1"), at()).then_rejects("not_found", "supersedes")


class TestVoting:
    def test_a_rostered_agent_signs(self) -> None:
        [cast] = given(FAMILY, frozen()).when(vote(Decision.SIGN), at(1, "bob")).then("VoteCast")
        assert cast.agent == "bob" and cast.decision is Decision.SIGN

    def test_an_agent_off_the_roster_cannot_vote(self) -> None:
        given(FAMILY, frozen()).when(vote(Decision.SIGN), at(1, "mallory")).then_rejects("not_rostered")

    def test_a_second_vote_by_the_same_agent_is_rejected(self) -> None:
        history = frozen()
        given(FAMILY, history, voted(history, "bob")).when(
            vote(Decision.DISSENT, (objection(),)), at(2, "bob")).then_rejects(
            "already_voted")

    def test_a_mismatched_hash_is_void(self) -> None:
        given(FAMILY, frozen()).when(vote(Decision.SIGN, sha256="f" * 64), at(1, "bob")).then_rejects("sha_mismatch")

    def test_a_vote_at_or_after_expiry_is_closed(self) -> None:
        given(FAMILY, frozen(hours=72)).when(vote(Decision.SIGN), at(72, "bob")).then_rejects("voting_closed")

    def test_a_dissent_needs_an_atom(self) -> None:
        given(FAMILY, frozen()).when(vote(Decision.DISSENT), at(1, "bob")).then_rejects("invalid", "dissent")

    def test_a_dissent_item_needs_text(self) -> None:
        given(FAMILY, frozen()).when(vote(Decision.DISSENT, (objection(text=" "),)), at(1, "bob")).then_rejects(
            "invalid", "dissent.objection")

    def test_a_sign_carries_no_dissent(self) -> None:
        given(FAMILY, frozen()).when(vote(Decision.SIGN, (objection(),)), at(1, "bob")).then_rejects(
            "invalid", "dissent")

    def test_a_vote_on_a_closed_ratification_is_not_open(self) -> None:
        history = frozen(roster=["alice"])
        history += voted(history, "alice")
        given(FAMILY, history).when(vote(Decision.SIGN), at(2, "alice")).then_rejects("not_open")


class TestTally:
    def test_the_last_signature_ratifies_with_each_votes_own_time(self) -> None:
        history = frozen()
        history += voted(history, "carol", hours=1)
        history += voted(history, "alice", hours=2)
        _, tallied, ratified = given(FAMILY, history).when(vote(Decision.SIGN), at(3, "bob")).then(
            "VoteCast", "VotesTallied", "ArtifactRatified")
        assert tallied.outcome is TallyOutcome.RATIFIED and tallied.merge_writer == "alice"
        assert ratified.path == "all-SIGN"
        assert [(s.agent, s.cast_at) for s in ratified.signatures] == [
            ("alice", T0 + timedelta(hours=2)), ("bob", T0 + timedelta(hours=3)), ("carol", T0 + timedelta(hours=1))
        ]

    def test_any_dissent_decomposes_into_the_dissenters_atoms(self) -> None:
        history = decomposed()
        state = given(FAMILY, history).state
        assert state.status is Status.PENDING_HUMAN
        assert [(a.id, a.section, a.raised_by) for a in state.atoms] == [("A1", "Scope", "bob"), ("A2", "Logs", "bob")]

    def test_in_fast_mode_any_dissent_rejects(self) -> None:
        history = frozen(roster=["alice", "bob"], mode=Mode.FAST)
        history += voted(history, "alice")
        _, tallied, rejected = given(FAMILY, history).when(vote(Decision.DISSENT, (objection(),)), at(2, "bob")).then(
            "VoteCast", "VotesTallied", "RatificationRejected")
        assert tallied.outcome is TallyOutcome.REJECTED

    def test_expiry_records_abstentions_never_a_silent_yes(self) -> None:
        history = frozen()
        history += voted(history, "bob")
        tallied, decomposition = given(FAMILY, history).when(ExpireRatification(topic="adr-7"), at(72, "timer")).then(
            "VotesTallied", "ArtifactDecomposed"
        )
        assert tallied.abstentions == ("alice", "carol") and tallied.signs == ("bob",)
        assert decomposition.atoms == () and decomposition.abstentions == ("alice", "carol")

    def test_expiry_with_no_votes_has_no_merge_writer(self) -> None:
        tallied, _ = given(FAMILY, frozen()).when(ExpireRatification(topic="adr-7"), at(80, "timer")).then(
            "VotesTallied", "ArtifactDecomposed")
        assert tallied.merge_writer is None

    def test_expiry_before_the_deadline_or_after_the_tally_does_nothing(self) -> None:
        given(FAMILY, frozen()).when(ExpireRatification(topic="adr-7"), at(71, "timer")).then()
        given(FAMILY, decomposed()).when(ExpireRatification(topic="adr-7"), at(80, "timer")).then()


class TestHumanDecision:
    def test_only_a_human_decides(self) -> None:
        given(FAMILY, decomposed()).when(human(HumanChoice.REJECT), at(5, "bob")).then_rejects("not_human")

    def test_no_decision_while_open(self) -> None:
        given(FAMILY, frozen()).when(human(HumanChoice.REJECT), at(5, "ada")).then_rejects(
            "not_pending_human"
        )

    def test_accept_split_ratifies_the_signers(self) -> None:
        _, ratified = given(FAMILY, decomposed()).when(
            human(HumanChoice.ACCEPT_SPLIT, notes=[Note(atom="A1", note="later")]), at(5, "ada"),
        ).then("HumanDecisionRecorded", "ArtifactRatified")
        assert ratified.path == "human-decision: accept-split"
        assert [s.agent for s in ratified.signatures] == ["alice", "carol"]

    def test_rewrite_with_caveats_needs_a_verifier_or_ticket_on_every_atom(self) -> None:
        given(FAMILY, decomposed()).when(
            human(HumanChoice.REWRITE_WITH_CAVEATS, caveats=[Caveat(atom="A1", verifier="make check-scope")]),
            at(5, "ada"),
        ).then_rejects("caveat_incomplete")

    def test_rewrite_with_caveats_ratifies_every_atom_with_its_caveat(self) -> None:
        caveats = (Caveat(atom="A1", verifier="make check-scope"), Caveat(atom="A2", ticket="OPS-12"))
        _, ratified = given(FAMILY, decomposed()).when(
            human(HumanChoice.REWRITE_WITH_CAVEATS, caveats=caveats), at(5, "ada")).then(
            "HumanDecisionRecorded", "ArtifactRatified")
        assert ratified.ratified_atoms == ("A1", "A2") and ratified.caveats == caveats

    def test_reject_is_terminal(self) -> None:
        outcome = given(FAMILY, decomposed()).when(human(HumanChoice.REJECT), at(5, "ada"))
        outcome.then("HumanDecisionRecorded", "RatificationRejected")
        assert outcome.and_state().status is Status.REJECTED

    def test_a_decision_must_name_existing_atoms(self) -> None:
        given(FAMILY, decomposed()).when(human(HumanChoice.DECOMPOSE_FURTHER, atoms=["A9"]), at(5, "ada")).then_rejects(
            "not_found", "atom")


class TestDecomposeFurther:
    def further(self) -> list[Event]:
        history = decomposed()
        return history + decided(FAMILY, history, human(HumanChoice.DECOMPOSE_FURTHER, atoms=["A2"]), at(5, "ada"))

    def test_it_stays_pending_human_until_the_merge_writer_splits(self) -> None:
        state = given(FAMILY, self.further()).state
        assert state.status is Status.PENDING_HUMAN and state.awaiting_split == ("A2",)

    def test_the_merge_writer_splits_with_new_never_reused_ids(self) -> None:
        into = (objection("Logs", "retention unclear"), objection("Logs", "format unspecified"))
        outcome = given(FAMILY, self.further()).when(split("A2", *into), at(6, "alice"))
        [atoms] = outcome.then("AtomSplit")
        assert [a.id for a in atoms.into] == ["A3", "A4"] and {a.raised_by for a in atoms.into} == {"bob"}
        assert [a.id for a in outcome.and_state().atoms] == ["A1", "A3", "A4"]

    def test_only_the_merge_writer_splits(self) -> None:
        given(FAMILY, self.further()).when(split("A2", objection()), at(6, "bob")).then_rejects(
            "actor_mismatch"
        )

    def test_only_an_atom_sent_back_is_split(self) -> None:
        given(FAMILY, self.further()).when(split("A1", objection()), at(6, "alice")).then_rejects(
            "invalid", "atom"
        )


class TestCancel:
    def test_the_initiator_cancels_while_open(self) -> None:
        given(FAMILY, frozen()).when(CancelRatification(topic="adr-7"), at(1, "alice")).then("RatificationCanceled")

    def test_a_human_may_cancel_too(self) -> None:
        given(FAMILY, frozen()).when(CancelRatification(topic="adr-7"), at(1, "ada")).then("RatificationCanceled")

    def test_another_agent_may_not(self) -> None:
        given(FAMILY, frozen()).when(CancelRatification(topic="adr-7"), at(1, "bob")).then_rejects("actor_mismatch")

    def test_nothing_to_cancel_once_expired_even_before_the_timer_tallies(self) -> None:
        given(FAMILY, frozen()).when(CancelRatification(topic="adr-7"), at(73, "alice")).then_rejects("voting_closed")

    def test_nothing_to_cancel_after_the_tally(self) -> None:
        given(FAMILY, decomposed()).when(CancelRatification(topic="adr-7"), at(9, "alice")).then_rejects("not_open")
