"""The files the original ratification tools count (a vote file per agent, the human's
decision), from events alone: sealed until the tally, a blank decision until the human's."""

from __future__ import annotations

from datetime import datetime

import yaml

from athenaeum.aggregates.ratification import FAMILY
from athenaeum.events.ratification import Decision, HumanChoice
from athenaeum.events.ratification_commands import ExpireRatification
from athenaeum.projectors.vote_records import files
from tests.aggregates.given import at, decided
from tests.aggregates.test_ratification import SHA, decomposed, frozen, human, objection, split, vote


def parsed(written: dict[str, str], name: str) -> dict:
    return yaml.safe_load(written[name])


def utc(text: str) -> datetime:  # YAML reads an ISO 8601 time as one
    return datetime.fromisoformat(text)


def test_a_vote_cast_before_the_tally_shows_who_when_and_on_which_sha_and_nothing_of_how() -> None:
    history = frozen()
    history += decided(FAMILY, history, vote(Decision.DISSENT, (objection(),)), at(1, "bob"))
    written = files("adr-7", history)
    assert set(written) == {"bob.vote.yaml"}  # alice and carol have not voted: the tools await them
    assert parsed(written, "bob.vote.yaml") == {"agent": "bob", "artifact_sha256": SHA,
                                                "timestamp": utc("2026-11-30T10:00:00Z"), "sealed": True}
    assert "DISSENT" not in written["bob.vote.yaml"] and "too broad" not in written["bob.vote.yaml"]


def test_the_tally_reveals_every_vote_as_cast() -> None:
    written = files("adr-7", decomposed())
    assert parsed(written, "alice.vote.yaml") == {"agent": "alice", "artifact_sha256": SHA, "decision": "SIGN",
                                                  "timestamp": utc("2026-11-30T10:00:00Z")}
    bob = parsed(written, "bob.vote.yaml")
    assert bob["decision"] == "DISSENT" and "sealed" not in bob
    assert bob["dissent"][0] == {"atom": {"section": "Scope", "anchor": "All agents"}, "objection": "too broad",
                                 "proposed_resolution": "carve-caveat"}


def test_an_abstention_recorded_at_expiry_is_written_as_such_so_nobody_awaits_that_vote() -> None:
    history = frozen()
    history += decided(FAMILY, history, vote(Decision.SIGN), at(1, "bob"))
    history += decided(FAMILY, history, ExpireRatification(topic="adr-7"), at(72, "timer"))
    written = files("adr-7", history)
    assert parsed(written, "carol.vote.yaml") == {"agent": "carol", "decision": "ABSTAIN_BY_TIMEOUT",
                                                  "timestamp": utc("2026-12-03T09:00:00Z")}
    assert parsed(written, "bob.vote.yaml")["decision"] == "SIGN"


def test_the_human_decision_is_blank_until_the_human_decides() -> None:
    assert "human-decision.yaml" not in files("adr-7", frozen())
    history = decomposed()
    blank = parsed(files("adr-7", history), "human-decision.yaml")
    assert blank == {"topic": "adr-7", "decision": None, "decided_at": None, "notes": []}
    history += decided(FAMILY, history, human(HumanChoice.DECOMPOSE_FURTHER, atoms=["A1", "A2"]), at(5, "ada"))
    assert parsed(files("adr-7", history), "human-decision.yaml")["decision"] == "decompose-further"
    history += decided(FAMILY, history, split("A1", objection("Scope", "a")), at(6, "alice"))
    assert parsed(files("adr-7", history), "human-decision.yaml")["decision"] == "decompose-further"
    history += decided(FAMILY, history, split("A2", objection("Logs", "b")), at(7, "alice"))
    assert parsed(files("adr-7", history), "human-decision.yaml")["decision"] is None  # decide again
    history += decided(FAMILY, history, human(HumanChoice.REJECT), at(8, "ada"))
    assert parsed(files("adr-7", history), "human-decision.yaml") == {
        "topic": "adr-7", "decision": "reject", "decided_at": utc("2026-11-30T17:00:00Z"), "notes": []}
