"""A task's reviews and arbitration runs, read from its events in the shapes of the original
contract: ``{cycle, runs}``, ``{runs}``, each run ``{id, ..., postedAt}`` (its id is the
event's version in the task's history), and the stored addendum."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from athenaeum.events import Event
from athenaeum.events.task import ImportedReview, ImportedRuling, ReviewPosted, RulingPosted, TaskImported, TaskReset


def _camelcase(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _renamed(value: Any) -> Any:
    if isinstance(value, dict):
        return {_camelcase(key): _renamed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_renamed(item) for item in value]
    return value


def reviews(events: Iterable[Event], cycle: int) -> dict[str, Any]:
    """The current epoch's reviews of ``cycle``; an absent cycle is an empty list."""
    runs: list[dict[str, Any]] = []
    for event in events:
        if isinstance(event, TaskReset):
            runs = []
        elif isinstance(event, TaskImported):
            runs += [_review(event, review, review.posted_at) for review in event.reviews if review.cycle == cycle]
        elif isinstance(event, ReviewPosted) and event.cycle == cycle:
            runs.append(_review(event, event, event.timestamp))
    return {"cycle": cycle, "runs": runs}


def reviewed_cycles(events: Iterable[Event]) -> list[int]:
    """The cycles with a review, imported or posted here."""
    cycles = set()
    for event in events:
        if isinstance(event, TaskImported):
            cycles |= {review.cycle for review in event.reviews}
        elif isinstance(event, ReviewPosted):
            cycles.add(event.cycle)
    return sorted(cycles)


def _review(event: Event, review: ReviewPosted | ImportedReview, at: Any) -> dict[str, Any]:
    """A review run; an imported one's id is the version of its task's import."""
    return {
        "id": event.originator_version,
        "taskId": int(event.key),
        "cycle": review.cycle,
        "reviewerRole": review.reviewer_role,
        "verdict": review.verdict.value,
        "rawMarkdown": review.raw_markdown,
        "findings": _renamed(msgspec.to_builtins(review.findings)),
        "postedAt": msgspec.to_builtins(at),
    }


def arbitrations(events: Iterable[Event]) -> dict[str, Any]:
    """Every ruling, oldest first, with the epoch it belongs to."""
    epoch, runs = 0, []
    for event in events:
        if isinstance(event, TaskReset):
            epoch = event.epoch
        elif isinstance(event, TaskImported):
            runs += [_ruling(event, ruling, epoch, ruling.posted_at) for ruling in event.rulings]
        elif isinstance(event, RulingPosted):
            runs.append(_ruling(event, event, epoch, event.timestamp))
    return {"runs": runs}


def _ruling(event: Event, ruling: RulingPosted | ImportedRuling, epoch: int, at: Any) -> dict[str, Any]:
    return {
        "id": event.originator_version,
        "taskId": int(event.key),
        "epoch": epoch,
        "trigger": ruling.trigger.value,
        "ruling": ruling.ruling.value,
        "rulingMarkdown": ruling.ruling_markdown,
        "contradictionResolution": _renamed(msgspec.to_builtins(ruling.contradiction_resolution)),
        "postedAt": msgspec.to_builtins(at),
    }


def addendum(events: Iterable[Event], trigger: str) -> str | None:
    """The latest stored addendum of a ``rule`` ruling on ``trigger`` in the current epoch, if
    any: a reset task starts afresh, and its engineer must not be told to leave a finding be."""
    found = None
    for event in events:
        if isinstance(event, TaskReset):
            found = None
        elif isinstance(event, RulingPosted) and event.trigger.value == trigger and event.addendum:
            found = event.addendum
    return found
