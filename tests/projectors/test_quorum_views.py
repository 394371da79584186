"""The quorum views, folded from real rule outcomes: status, scratchpad, pending work."""

from __future__ import annotations

from athenaeum.aggregates.quorum import FAMILY
from athenaeum.projectors.quorum_status import announcement
from tests.aggregates.given import at, decided
from tests.aggregates.test_quorum import NINE, PID, opened, tiebreak, voting
from tests.projectors.test_ratification_views import items, views


def test_votes_are_public_with_reasons() -> None:
    document = views(voting(opened(), "agent-1", "-agent-2"))[("proposals", PID)]
    assert document["acks"] == ["agent-1"] and document["nacks"] == [{"agent": "agent-2", "reason": "no"}]
    assert (document["status"], document["threshold"], document["total"]) == ("open", 5, 9)


def test_the_scratchpad_has_the_original_shape_and_the_result_once_resolved() -> None:
    history = voting(opened(threshold=2), "agent-1")
    pad = views(history)[("fleet/quorum", PID)]
    assert pad == {"proposal": "Adopt the ledger", "proposer": "alice", "threshold": 2, "acks": ["agent-1"],
                   "nacks": [], "status": "open", "opened_at": "2026-11-30T09:00:00Z"}
    pad = views(voting(history, "agent-2"))[("fleet/quorum", PID)]
    assert pad["status"] == "accepted" and pad["result"]["reason"] == "threshold-reached"


def test_electors_are_asked_to_vote_until_they_have_or_it_closes() -> None:
    history = opened()
    assert items(views(history), "agent-3") == [(PID, "vote")]
    history = voting(history, "agent-3")
    assert items(views(history), "agent-3") == [] and items(views(history), "agent-4") == [(PID, "vote")]
    history = voting(history, *NINE[3:7])  # five ACKs accept
    assert all(items(views(history), agent) == [] for agent in NINE)


def test_a_tie_asks_the_coordinator_and_the_tiebreak_clears_it() -> None:
    history = voting(opened(electorate=NINE[:2], threshold=2, coordinator="heimdallr"), "agent-1", "-agent-2")
    assert items(views(history), "heimdallr") == [(PID, "tiebreak")]
    assert views(history)[("proposals", PID)]["status"] == "awaiting-coordinator"
    history += decided(FAMILY, history, tiebreak(), at(2, "heimdallr"))
    assert items(views(history), "heimdallr") == []
    document = views(history)[("proposals", PID)]
    assert (document["status"], document["reason"], document["decided_by"]) == (
        "accepted", "coordinator-tiebreak", "heimdallr")


def test_the_announcement_is_the_protocol_text() -> None:
    document = views(opened(threshold=5))[("proposals", PID)]
    assert announcement(document) == (
        f"[QUORUM:{PID}] Adopt the ledger\nThreshold: 5/9\nDeadline: 2026-12-01T09:00:00Z\n"
        f"Reply: ACK {PID} or NACK {PID} <reason>"
    )


def test_a_text_with_line_breaks_keeps_the_announcement_to_its_lines() -> None:
    document = views(opened(threshold=5))[("proposals", PID)] | {"text": "Adopt\nThreshold: 1/9"}
    assert announcement(document).splitlines()[:2] == [f"[QUORUM:{PID}] Adopt\\nThreshold: 1/9", "Threshold: 5/9"]
