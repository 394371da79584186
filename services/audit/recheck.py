"""What a re-check of one command is: the command's events, its context, and what the replay
so far knows, in; the events the rules produce, out. Each protocol's module registers its own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from athenaeum.aggregates.page_consensus import Member
from athenaeum.aggregates.rules import Context
from athenaeum.events import Event


class Replayed(NamedTuple):
    """What a re-check may read: states before the command, the deployment's configuration,
    and the fleet as the views saw it."""

    state: Callable[[str], Any]  # an aggregate's state by id, None when it has no events yet
    bootstrap: bool  # anyone may register on an empty roster (no configured humans)
    members: Callable[[int | None], Sequence[Member]]  # as of a position (None: as of the command)


Recheck = Callable[[Sequence[Event], Context, Replayed], list[Event]]


class Rechecks(dict[type, Recheck]):
    """Re-checks by the type of a command's first event."""

    def of(self, *kinds: type) -> Callable[[Recheck], Recheck]:
        def register(fn: Recheck) -> Recheck:
            for kind in kinds:
                self[kind] = fn
            return fn

        return register


def own(group: Sequence[Event], replayed: Replayed) -> Any:
    """The state of the aggregate the command's first event belongs to."""
    return replayed.state(group[0].originator_id)
