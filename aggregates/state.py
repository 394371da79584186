"""Immutable aggregate state, its snapshots, and the fold that rebuilds it from events.

A family defines a frozen state Struct with a stable tag and an ``evolve(state, event)``
that only applies facts: it never raises, never reads a clock, so old history always loads.
Rules live in the family's ``decide`` functions, checked before an event exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any, TypeVar

import msgspec

from athenaeum.events import Event, TagRegistry, natural_key


class AggregateState(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """The state of one aggregate as of ``version``; subclasses declare ``tag=``."""

    id: str
    version: int

    @property
    def key(self) -> str:
        """The natural key users name it by (see ``family_id``)."""
        return natural_key(self.id)


S = TypeVar("S", bound=AggregateState)
Evolve = Callable[[S | None, Event], S]

SNAPSHOT_TAG = "AggregateSnapshot"


class Snapshot(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=SNAPSHOT_TAG):
    """An aggregate's state at one version, stored beside its events to shorten loads."""

    originator_id: str
    originator_version: int
    timestamp: datetime
    state_type: str
    state: msgspec.Raw

    @classmethod
    def take(cls, aggregate: AggregateState) -> Snapshot:
        return cls(
            originator_id=aggregate.id,
            originator_version=aggregate.version,
            timestamp=datetime.now(timezone.utc),
            state_type=type(aggregate).__struct_config__.tag,  # type: ignore[arg-type]
            state=msgspec.Raw(msgspec.json.encode(aggregate)),
        )

    def restore(self) -> AggregateState:
        return state_registry.decoder_for(self.state_type).decode(self.state)


state_registry = TagRegistry(AggregateState)


def fold(evolve: Evolve[S]) -> Callable[[S | None, Iterable[Any]], S | None]:
    """The eventsourcing projector function for a family: snapshots restore, events evolve.

    The fold, not each family, stamps every state with the version of the event it applied.
    """

    def project(state: S | None, events: Iterable[Any]) -> S | None:
        for event in events:
            if isinstance(event, Snapshot):
                state = event.restore()  # type: ignore[assignment]
            else:
                evolved = evolve(state, event)  # None: history that is not this family's (the audit says so)
                state = None if evolved is None else msgspec.structs.replace(evolved, version=event.originator_version)
        return state

    return project
