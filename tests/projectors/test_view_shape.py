"""The views' shape is a contract with the views already stored: what the projectors write for
sample histories of every family, kept in ``tests/golden/views.jsonl`` under the shape it is of.

A change to what they write fails here: bump ``SHAPE`` in ``projectors/registry.py`` (serve then
writes the views it stored in the old shape again from the ledger) and regenerate with
``ATHENAEUM_WRITE_GOLDEN=1 python -m pytest tests/projectors``.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from athenaeum.events import Event
from athenaeum.projectors.registry import SHAPE
from tests.aggregates.test_golden_events import ratification_histories, task_histories
from tests.aggregates.test_quorum import opened as proposed
from tests.aggregates.test_quorum import voting
from tests.aggregates.test_thread import closed, contributed
from tests.aggregates.test_thread import opened as thread_opened
from tests.projectors.test_ratification_views import views

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "views.jsonl"


def histories() -> list[list[Event]]:
    quorum = voting(proposed(electorate=["agent-1", "agent-2", "agent-3"], threshold=2), "agent-1", "-agent-2", "agent-3")
    thread = closed(contributed(thread_opened(), "bob"))
    return [*ratification_histories(), *task_histories(), quorum, thread]


def lines() -> list[str]:
    """The shape, then each history's views, their keys in order."""
    written = [{f"{view}/{key}": document for (view, key), document in sorted(views(history).items())}
               for history in histories()]
    return [msgspec.json.encode({"shape": SHAPE}).decode(), *(msgspec.json.encode(each).decode() for each in written)]


def test_the_views_of_the_sample_histories_are_those_of_their_shape() -> None:
    found = lines()
    recorded = GOLDEN.read_text().splitlines() if GOLDEN.exists() else []
    if os.environ.get("ATHENAEUM_WRITE_GOLDEN") and recorded[1:] != found[1:]:
        assert recorded[:1] != found[:1], "the views changed: bump SHAPE in projectors/registry.py first"
        GOLDEN.write_text("\n".join(found) + "\n")
        recorded = found
    assert recorded[1:] == found[1:], (
        "the projectors write other views for these histories than stored views of this shape hold: bump SHAPE "
        "in projectors/registry.py, then regenerate with ATHENAEUM_WRITE_GOLDEN=1")
    assert recorded[:1] == found[:1], "SHAPE changed, the views did not: regenerate with ATHENAEUM_WRITE_GOLDEN=1"
