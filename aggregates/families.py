"""Every family of aggregates, and which one an aggregate id belongs to."""

from __future__ import annotations

from athenaeum.aggregates import fleet, ledger, page, quorum, ratification, task, thread
from athenaeum.aggregates.family import Family, Fold
from athenaeum.events import family_of_id

FAMILIES = (ratification.FAMILY, quorum.FAMILY, thread.FAMILY, page.FAMILY, fleet.FAMILY, task.FAMILY, ledger.FAMILY)
# By the family an aggregate id names (``family_id``); the task family keeps its counter too.
_BY_ID = {family.name: family for family in FAMILIES} | {"task-ids": task.FAMILY}


def family_of(aggregate_id: str) -> Family | None:
    """The family whose aggregates include ``aggregate_id``; None for an id no family makes."""
    return _BY_ID.get(family_of_id(aggregate_id))


def fold_of(aggregate_id: str) -> Fold:
    """How ``aggregate_id``'s state is folded from its events (an unknown family's: nothing)."""
    family = family_of(aggregate_id)
    return family.project if family is not None else _nothing


def _nothing(state: object, events: object) -> None:
    return None
