"""An imported ratification (``ImportRatification``): recorded as found, then under the rules."""

from __future__ import annotations

from datetime import timedelta

from athenaeum.aggregates.ratification import FAMILY
from athenaeum.aggregates.ratification_state import Status
from athenaeum.events import Event
from athenaeum.events.imported import ImportFinding, SourceFile
from athenaeum.events.ratification import Decision, HumanChoice, ImportedStatus, ImportedVote, Mode
from athenaeum.events.ratification_commands import ImportRatification
from athenaeum.projectors import imported_ratification
from tests.aggregates.given import T0, at, decided, given
from tests.aggregates.test_ratification import ARTIFACT, SHA, human, objection, vote

BEFORE = T0 - timedelta(days=3)


def imported_vote(agent: str, sha256: str = SHA, decision: Decision = Decision.SIGN, **fields: object) -> ImportedVote:
    return ImportedVote(agent=agent, decision=decision, artifact_sha256=sha256, cast_at=BEFORE, **fields)


def importing(status: ImportedStatus = ImportedStatus.OPEN, votes: tuple[ImportedVote, ...] = (),
              manifest: bytes = b"status: open\n") -> ImportRatification:
    return ImportRatification(
        topic="adr-7", source="repo/.athenaeum/adr-7", artifact=ARTIFACT, initiator="alice",
        roster=["alice", "bob", "carol"], mode=Mode.STANDARD, expires_at=T0 + timedelta(hours=72), status=status,
        votes=list(votes), files=[SourceFile(name="manifest.yaml", content=manifest)],
        findings=[ImportFinding(code="sha_mismatch", file="bob.vote.yaml", line=2, message="void")],
    )


def imported(**fields: object) -> list[Event]:
    return decided(FAMILY, [], importing(**fields), at(0, "ops"))  # type: ignore[arg-type]


def test_the_import_is_recorded_as_the_importer_and_counts_only_valid_votes() -> None:
    history = imported(votes=(imported_vote("alice"), imported_vote("bob", sha256="0" * 64)))
    [event] = history
    assert event.actor == "ops" and event.initiator == "alice"
    assert [file.name for file in event.files] == ["manifest.yaml"]
    state = FAMILY.project(None, history)
    assert state.status is Status.OPEN and [v.agent for v in state.votes] == ["alice"]


def test_the_same_record_imported_again_appends_nothing_and_another_is_refused() -> None:
    history = imported()
    given(FAMILY, history).when(importing(), at(1, "ops")).then()
    given(FAMILY, history).when(importing(manifest=b"status: open \n"), at(1, "ops")).then_rejects("already_exists")


def test_an_imported_open_ratification_tallies_on_its_last_vote_keeping_imported_times() -> None:
    history = imported(votes=(imported_vote("alice"), imported_vote("bob")))
    history += decided(FAMILY, history, vote(), at(1, "carol"))
    ratified = history[-1]
    assert ratified.tag == "ArtifactRatified"
    assert [s.cast_at for s in ratified.signatures] == [BEFORE, BEFORE, T0 + timedelta(hours=1)]


def test_an_imported_decomposition_waits_for_the_human() -> None:
    votes = (imported_vote("alice"), imported_vote("bob", decision=Decision.DISSENT, dissent=(objection(),)))
    history = imported(status=ImportedStatus.PENDING_HUMAN, votes=votes)
    state = FAMILY.project(None, history)
    assert [a.id for a in state.atoms] == ["A1"] and state.abstentions == ("carol",)
    given(FAMILY, history).when(human(HumanChoice.ACCEPT_SPLIT), at(1, "ada")).then(
        "HumanDecisionRecorded", "ArtifactRatified")


def test_a_human_decision_on_an_imported_decomposition_writes_ratified_md_over_the_originals() -> None:
    votes = (imported_vote("alice"), imported_vote("bob", decision=Decision.DISSENT, dissent=(objection(),)))
    history = imported(status=ImportedStatus.PENDING_HUMAN, votes=votes, manifest=b"topic: adr-7\nstatus: pending-human\n")
    history += decided(FAMILY, history, human(HumanChoice.ACCEPT_SPLIT), at(1, "ada"))
    files = imported_ratification.files(history)
    assert files["manifest.yaml"] == b"topic: adr-7\nstatus: ratified\n"
    ratified = files["ratified.md"].decode()
    assert "**Grain-gate:** human-decision: accept-split" in ratified
    assert "carved out: A1" in ratified and "- carol — ABSTAIN_BY_TIMEOUT" in ratified
