"""A small given/when/then harness for pure aggregate rules."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from athenaeum.aggregates.rules import Context, RuleViolation
from athenaeum.aggregates.state import fold
from athenaeum.events import Event

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
HUMANS = frozenset({"ada"})


def at(hours: float = 0, actor: str = "alice") -> Context:
    return Context(actor=actor, now=T0 + timedelta(hours=hours), command_id=f"cmd-{actor}-{hours}",
                   is_human=HUMANS.__contains__)


class Scenario:
    def __init__(self, evolve: Callable[[Any, Event], Any], history: list[Event]) -> None:
        self.project = fold(evolve)
        self.history = history

    @property
    def state(self) -> Any:
        return self.project(None, self.history)

    def when(self, decide: Callable[..., list[Event]], context: Context, **arguments: Any) -> Outcome:
        try:
            return Outcome(self, decide(self.state, context, **arguments), None)
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
        assert self.violation is None, f"rejected with {self.violation.code}: {self.violation}"
        assert [event.tag for event in self.events] == list(tags)
        versions = [event.originator_version for event in self.events]
        previous = self.scenario.state.version if self.scenario.history else 0
        assert versions == list(range(previous + 1, previous + 1 + len(versions)))
        return self.events

    def and_state(self) -> Any:
        return self.scenario.project(None, [*self.scenario.history, *self.events])


def given(evolve: Callable[[Any, Event], Any], *history: list[Event]) -> Scenario:
    return Scenario(evolve, [event for events in history for event in events])


__all__ = ["HUMANS", "T0", "at", "given", "pytest"]
