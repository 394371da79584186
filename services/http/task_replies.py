"""The bodies of the task contract's requests and answers, in the original server's shapes:
``{ok, id}`` for a creation, ``{ok, id, status, reviewCycleCount, reviewerVerdicts,
arbitrationPendingTrigger}`` for a transition, ``{runId, findingIds}`` for a review and
``{runId, newStatus}`` for a ruling; each with the ledger's ``position``, which a read's
``?after`` takes, and a transition with the task's ``epoch``."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar.openapi.datastructures import ResponseSpec

from athenaeum.aggregates.task_state import status_set_by
from athenaeum.events.commands import Command
from athenaeum.events.task import TaskEvent, TaskIdIssued, TaskReset
from athenaeum.services.commands.replies import RejectedReply, Reply
from athenaeum.services.http.common import COMMAND_ERRORS, READ_ERRORS, documented

_CARRIED = ("project_id", "task_id", "command_id")  # by the header, the path, Idempotency-Key


def body_of(command: type[Command]) -> type[msgspec.Struct]:
    """The HTTP body of a task command: its own fields, but the ids carried elsewhere."""
    return msgspec.defstruct(
        f"{command.__name__}Body",
        [_field(f) for f in msgspec.structs.fields(command) if f.name not in _CARRIED],
        kw_only=True, rename="camel", forbid_unknown_fields=True, frozen=True, module=__name__,
    )


def _field(f: msgspec.structs.FieldInfo) -> tuple[Any, ...]:
    if f.default is not msgspec.NODEFAULT:
        return (f.name, f.type, f.default)
    if f.default_factory is not msgspec.NODEFAULT:
        return (f.name, f.type, msgspec.field(default_factory=f.default_factory))
    return (f.name, f.type)


class TaskCreatedReply(msgspec.Struct):
    """The task's number, and the stream position of its creation."""

    ok: bool
    id: int
    position: int | None


class TaskMovedReply(msgspec.Struct, rename="camel"):
    """Where the task stands after the command: its status and epoch as the command left them
    (a retry gets the first answer), the rest as the task's view reads after it."""

    ok: bool
    id: int
    status: str | None
    epoch: int | None
    review_cycle_count: int | None
    reviewer_verdicts: dict[str, str]
    arbitration_pending_trigger: str | None
    position: int | None


class ReviewAcceptedReply(msgspec.Struct, rename="camel"):
    """The review's run (its version in the task's history) and the ids given to its findings."""

    run_id: int
    finding_ids: list[int]
    position: int | None


class RulingAcceptedReply(msgspec.Struct, rename="camel"):
    """The ruling's run and the task's status after it."""

    run_id: int
    new_status: str | None
    position: int | None


def answers(body: type[msgspec.Struct]) -> dict[int, ResponseSpec]:
    return {200: documented(body, body.__doc__ or ""), **COMMAND_ERRORS}


TASK_READ_ERRORS = READ_ERRORS | {
    400: documented(RejectedReply, "invalid: X-Project-Id is missing where required, or a parameter breaks a rule"),
}

_decode_events = msgspec.json.Decoder(list[TaskEvent | TaskIdIssued]).decode


def facts(reply: Reply, tag: str) -> dict[str, Any]:
    """The first event of ``tag`` the command appended, as JSON."""
    return next((e for e in msgspec.json.decode(reply.events) if e["type"] == tag), {})


def moved_reply(task_id: int, reply: Reply, shown: dict[str, Any]) -> TaskMovedReply:
    """The status the command's own events set, and the epoch a reset set; ``shown`` (the task's
    view after the command) gives the status a command did not move, and the rest."""
    events = _decode_events(reply.events)
    status = status_set_by(events)
    reset = next((e for e in reversed(events) if isinstance(e, TaskReset)), None)
    return TaskMovedReply(
        ok=True, id=task_id, status=status.value if status else shown.get("status"),
        epoch=reset.epoch if reset else shown.get("epoch"), review_cycle_count=shown.get("reviewCycleCount"),
        reviewer_verdicts=shown.get("reviewerVerdicts") or {},
        arbitration_pending_trigger=shown.get("arbitrationPendingTrigger"), position=reply.position,
    )
