"""Event tags and shapes are a published contract: one golden JSON sample per event.

A change to a sample fails here; evolve an event by adding fields with defaults, or add a new
tag, and regenerate with ``ATHENAEUM_WRITE_GOLDEN=1 python -m pytest tests/aggregates``.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from athenaeum.aggregates import task
from athenaeum.aggregates.ratification import FAMILY
from athenaeum.events import Event, event_registry
from athenaeum.events.ratification import Caveat, Decision, HumanChoice, Mode, RatificationEvent
from athenaeum.events.ratification_commands import CancelRatification
from athenaeum.events.task import TaskEvent, TaskIdIssued, TaskStatus, Verdict
from tests.aggregates import test_ratification_import, test_task, test_task_import
from tests.aggregates.given import at, decided
from tests.aggregates.test_ratification import decomposed, frozen, human, objection, split, vote

FOLDER = Path(__file__).resolve().parent.parent / "golden"
GOLDEN = FOLDER / "ratification.jsonl"
TASK_GOLDEN = FOLDER / "task.jsonl"


def samples() -> dict[str, Event]:
    """One event of every ratification tag, from scenarios that run the real rules."""
    histories = [decomposed()]
    history = decomposed()
    history += decided(FAMILY, history, human(HumanChoice.DECOMPOSE_FURTHER, atoms=["A2"]), at(5, "ada"))
    history += decided(FAMILY, history, split("A2", objection("Logs")), at(6, "alice"))
    caveats = [Caveat(atom=a.id, ticket="OPS-1") for a in FAMILY.project(None, history).atoms]
    history += decided(FAMILY, history, human(HumanChoice.REWRITE_WITH_CAVEATS, caveats=caveats), at(7, "ada"))
    histories.append(history)
    canceled = frozen()
    canceled += decided(FAMILY, canceled, CancelRatification(topic="adr-7"), at(1, "alice"))
    histories.append(canceled)
    fast = frozen(roster=["bob"], mode=Mode.FAST)
    fast += decided(FAMILY, fast, vote(Decision.DISSENT, (objection(),)), at(1, "bob"))
    histories.append(fast)
    histories.append(test_ratification_import.imported(votes=(test_ratification_import.imported_vote("alice"),)))
    return {event.tag: event for events in histories for event in events}


def task_samples() -> dict[str, Event]:
    """One event of every task tag: a contradiction ruled, a completed task integrated, a
    reviewer's verdict, a session that changed nothing, failing its task, which is reset, and an
    imported task."""
    ruled = test_task.contradicted()
    ruled += decided(task.FAMILY, ruled, test_task.rule(resolution=test_task.RESOLVED), at(5, "arbitrator"))
    done = test_task.at_review()
    done += decided(task.FAMILY, done, test_task.to(TaskStatus.REVIEWING, reviewer_role="a", verdict=Verdict.APPROVE),
                    at(3, "fanout"))
    done = test_task.cycle(done, ("a", Verdict.APPROVE, 0, test_task.Severity.NOTE), ending=TaskStatus.COMPLETED)
    done += decided(task.FAMILY, done, test_task.to(TaskStatus.INTEGRATED), at(4, "ops"))
    idle = test_task.moved(test_task.ONLY_TASK, TaskStatus.CLAIMED)
    idle += decided(task.FAMILY, idle, test_task.ended("engineer"), at(2))
    idle += decided(task.FAMILY, idle, test_task.ended("engineer"), at(3))
    idle += decided(task.FAMILY, idle, test_task.RESET, at(6, "ops"))
    issued = decided(task.FAMILY, [], test_task.create(), at(0, "ops"))
    imported = test_task_import.imported(reviews=(test_task_import.review(1, ids=(3,)),))
    return {event.tag: event for events in (imported, issued, ruled, done, idle) for event in events}


def matches_its_golden_file(golden: Path, found: dict[str, Event], tags: set[str]) -> None:
    assert set(found) == tags
    lines = [msgspec.json.encode(found[tag]).decode() for tag in sorted(found)]
    if os.environ.get("ATHENAEUM_WRITE_GOLDEN"):
        golden.write_text("\n".join(lines) + "\n")
    assert golden.read_text().splitlines() == lines


def test_every_ratification_event_matches_its_golden_sample() -> None:
    matches_its_golden_file(GOLDEN, samples(), {cls.__struct_config__.tag for cls in RatificationEvent.__args__})


def test_every_task_event_matches_its_golden_sample() -> None:
    tags = {cls.__struct_config__.tag for cls in (*TaskEvent.__args__, TaskIdIssued)}
    matches_its_golden_file(TASK_GOLDEN, task_samples(), tags)


def test_every_golden_sample_decodes_to_its_struct() -> None:
    for line in [*GOLDEN.read_text().splitlines(), *TASK_GOLDEN.read_text().splitlines()]:
        tag = msgspec.json.decode(line)["type"]
        event = event_registry.decoder_for(tag).decode(line)
        assert msgspec.json.encode(event).decode() == line
