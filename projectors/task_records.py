"""A task's reviews and arbitration runs, read from its events in the shapes of the original
contract: ``{cycle, runs}``, ``{runs}``, each run ``{id, ..., postedAt}`` (its id is the
event's version in the task's history), and the stored addendum."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from athenaeum.events import Event
from athenaeum.events.task import ReviewPosted, RulingPosted, TaskReset


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
        elif isinstance(event, ReviewPosted) and event.cycle == cycle:
            runs.append({
                "id": event.originator_version,
                "taskId": int(event.key),
                "cycle": event.cycle,
                "reviewerRole": event.reviewer_role,
                "verdict": event.verdict.value,
                "rawMarkdown": event.raw_markdown,
                "findings": _renamed(msgspec.to_builtins(event.findings)),
                "postedAt": msgspec.to_builtins(event.timestamp),
            })
    return {"cycle": cycle, "runs": runs}


def arbitrations(events: Iterable[Event]) -> dict[str, Any]:
    """Every ruling, oldest first, with the epoch it belongs to."""
    epoch, runs = 0, []
    for event in events:
        if isinstance(event, TaskReset):
            epoch = event.epoch
        elif isinstance(event, RulingPosted):
            runs.append({
                "id": event.originator_version,
                "taskId": int(event.key),
                "epoch": epoch,
                "trigger": event.trigger.value,
                "ruling": event.ruling.value,
                "rulingMarkdown": event.ruling_markdown,
                "contradictionResolution": _renamed(msgspec.to_builtins(event.contradiction_resolution)),
                "postedAt": msgspec.to_builtins(event.timestamp),
            })
    return {"runs": runs}


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
