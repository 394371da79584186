"""Which ratification an A2A task is: the ``a2a`` view, by A2A task id. The A2A gateway
freezes a ratification with the command id ``a2a:<task id>``, so the ledger itself says which
task opened which topic."""

from __future__ import annotations

from athenaeum.events import Event
from athenaeum.events.ratification import ArtifactFrozen
from athenaeum.projectors.views import Change, Lookup

VIEW = "a2a"
COMMAND_PREFIX = "a2a:"


def project(event: Event, lookup: Lookup) -> list[Change]:
    if not isinstance(event, ArtifactFrozen) or not event.command_id.startswith(COMMAND_PREFIX):
        return []
    task_id = event.command_id.removeprefix(COMMAND_PREFIX)
    if lookup(VIEW, task_id) is not None:
        return []  # a task id names the first ratification it opened, for good
    return [Change(VIEW, task_id, {"task_id": task_id, "topic": event.key, "by": event.actor})]
