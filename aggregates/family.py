"""What the command path needs of a family of aggregates: which aggregate a command decides
on, how its state is folded, the one ``decide`` over its command union, and which other
aggregates a decision reads (so the service can load them first and the audit give them again)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from athenaeum.aggregates.context import Context
from athenaeum.aggregates.rules import NotFound
from athenaeum.events import Event

Fold = Callable[[Any, Iterable[Any]], Any]
Decide = Callable[[Any, Any, Context], list[Event]]


def reads_nothing(command: Any, state: Any) -> Sequence[str]:
    return ()


class Family(NamedTuple):
    name: str
    aggregate_of: Callable[[Any], str]  # the id of the aggregate a command decides on
    project: Fold  # its state, from its events
    decide: Decide  # (state or None, command, context) -> the events, or a RuleViolation
    reads: Callable[[Any, Any], Sequence[str]] = reads_nothing  # (command, state) -> other aggregates' ids


def existing(state: Any, what: str, field: str) -> Any:
    """The state of an aggregate a command needs to exist (``what``, named by ``field``)."""
    if state is None:
        raise NotFound(f"no {what}", field)
    return state
