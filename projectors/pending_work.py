"""What must agent X do: the ``pending`` view, one document per agent, plus one for the
human principals (``@humans``), since who is human is the deployment's to say, not history's.

Each family's projector (``pending_ratification``, ``pending_quorum``) edits only the items
of its own ``kind``, through ``Pending``.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

from athenaeum.projectors.views import Change, Lookup, Projector

VIEW = "pending"
HUMANS = "@humans"
Item = dict[str, Any]


class Pending:
    """The items of the agents one event touches, read once and written back as changes."""

    def __init__(self, lookup: Lookup, kind: str) -> None:
        self.lookup = lookup
        self.kind = kind
        self._items: dict[str, list[Item]] = {}
        self._changed: set[str] = set()  # the agents whose items the event changed

    def _of(self, agent: str) -> list[Item]:
        if agent not in self._items:
            self._items[agent] = list((self.lookup(VIEW, agent) or {}).get("items", []))
        return self._items[agent]

    def add(self, agent: str, aggregate_id: str, action: str, deadline: str | None = None) -> None:
        self.remove(agent, aggregate_id, action)
        self._of(agent).append({"kind": self.kind, "id": aggregate_id, "action": action, "deadline": deadline})
        self._changed.add(agent)

    def remove(self, agent: str, aggregate_id: str, action: str | None = None) -> None:
        """Remove the agent's ``action`` on the aggregate, or every action on it."""
        items = self._of(agent)
        kept = [item for item in items
                if not (item["kind"] == self.kind and item["id"] == aggregate_id and action in (None, item["action"]))]
        if len(kept) != len(items):
            items[:] = kept
            self._changed.add(agent)

    def changes(self) -> list[Change]:
        return [
            Change(VIEW, agent, {"agent": agent, "items": sorted(self._items[agent], key=_order)})
            for agent in self._items if agent in self._changed
        ]


_order = itemgetter("kind", "id", "action")


def pending_projector(kind: str, apply: Callable[[Any, Pending], None]) -> Projector:
    """The projector of one family's items: ``apply`` edits them through a ``Pending``."""

    # A singledispatch function: its fallback (for other families' events) edits nothing, so
    # such an event is passed over without reading anyone's items. (The case found is called
    # as it is: the audit projects every event, and a second dispatch costs as much again.)
    dispatch = getattr(apply, "dispatch", None)
    fallback = dispatch(object) if dispatch is not None else None
    # Each event type's case, found once: singledispatch's own cache is a weak mapping, checked
    # for new ABC registrations at every call. (Every case registers as its module is imported.)
    cases: dict[type, Callable[[Any, Pending], None]] = {}

    def project(event: Any, lookup: Lookup) -> list[Change]:
        kind_of_event = type(event)
        case = cases.get(kind_of_event) if dispatch is not None else apply
        if case is None:
            case = cases[kind_of_event] = dispatch(kind_of_event)
        if case is fallback:
            return []
        pending = Pending(lookup, kind)
        case(event, pending)
        return pending.changes()

    return project
