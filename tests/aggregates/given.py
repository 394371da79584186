"""A small given/when/then harness for a family's ``decide``: given its history, when a command
arrives in a context, then these events, or this rule's refusal."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from athenaeum.aggregates.context import Context
from athenaeum.aggregates.family import Family
from athenaeum.aggregates.rules import RuleViolation
from athenaeum.events import Event

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
HUMANS = frozenset({"ada"})


def at(hours: float = 0, actor: str = "alice", **known: Any) -> Context:
    """A context ``hours`` after T0, sent by ``actor``; ``known``: what else the decision is given."""
    return Context(actor=actor, now=T0 + timedelta(hours=hours), command_id=f"cmd-{actor}-{hours}",
                   actor_is_human=actor in HUMANS, **known)


class Scenario:
    def __init__(self, family: Family, history: list[Event]) -> None:
        self.family = family
        self.history = history

    @property
    def state(self) -> Any:
        return self.family.project(None, self.history)

    def when(self, command: Any, context: Context) -> Outcome:
        try:
            return Outcome(self, self.family.decide(self.state, command, context), None)
        except RuleViolation as violation:
            return Outcome(self, [], violation)


class Outcome:
    def __init__(self, scenario: Scenario, events: list[Event], violation: RuleViolation | None) -> None:
        self.scenario = scenario
        self.events = events
        self.violation = violation

    def then_rejects(self, code: str, field: str | None = None) -> RuleViolation:
        assert self.violation is not None, f"expected {code}, got events {[e.tag for e in self.events]}"
        assert self.violation.code == code, f"expected {code}, got {self.violation.code}: {self.violation}"
        if field is not None:
            assert self.violation.field == field
        return self.violation

    def then(self, *tags: str) -> list[Event]:
        """The events' tags; those on the command's own aggregate (the first event's) follow its
        versions on (a decision may also write others: a recognized closure's pages)."""
        assert self.violation is None, f"rejected with {self.violation.code}: {self.violation}"
        assert [event.tag for event in self.events] == list(tags)
        versions = [event.originator_version for event in self.own()]
        previous = self.scenario.state.version if self.scenario.history else 0
        assert versions == list(range(previous + 1, previous + 1 + len(versions)))
        return self.events

    def own(self) -> list[Event]:
        return [event for event in self.events if event.originator_id == self.events[0].originator_id]

    def and_state(self) -> Any:
        return self.scenario.family.project(None, [*self.scenario.history, *self.own()])


def given(family: Family, *history: list[Event]) -> Scenario:
    return Scenario(family, [event for events in history for event in events])


def decided(family: Family, history: list[Event], command: Any, context: Context) -> list[Event]:
    """The events ``command`` appends after ``history``, for building the next history."""
    return family.decide(family.project(None, history), command, context)


__all__ = ["HUMANS", "T0", "at", "decided", "given", "pytest"]
