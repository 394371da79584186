"""The arbitrator's HTTP contract for durable tasks (PROTOCOLS.md section 5), camelCase as in
the original: ``X-Project-Id`` is required (400 when missing) and a task of another project is
404. Bodies are the task commands without the ids the path and headers carry."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import MediaType, Request, Response, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec

from athenaeum.aggregates.task_state import status_set_by
from athenaeum.events.commands import Command
from athenaeum.events.task import TaskEvent, TaskIdIssued, TaskReset
from athenaeum.events.task_commands import (
    ClaimTask,
    CreateTask,
    EndRoleSession,
    PostReview,
    PostRuling,
    ResetTask,
    TransitionTask,
)
from athenaeum.services.http.common import (
    COMMAND_ERRORS, READ_ERRORS, After, AgentHeader, Gateway, IdempotencyHeader, ProjectHeader, answer_response,
    documented, error_response, reply_response, waiting_for,
)
from athenaeum.services.commands.replies import RejectedReply, Reply

PROJECT_HEADER = "X-Project-Id"
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


CreateBody, TransitionBody, ReviewBody, RulingBody, SessionBody = (
    body_of(command) for command in (CreateTask, TransitionTask, PostReview, PostRuling, EndRoleSession)
)


class NoFields(msgspec.Struct, forbid_unknown_fields=True):
    """The body of a command whose path and headers say it all: none, or ``{}``."""


class TaskCreatedReply(msgspec.Struct):
    """The task's number in its project, and the stream position of its creation."""

    id: int
    position: int | None


class TaskMovedReply(msgspec.Struct):
    """Where the task stands after the command."""

    id: int
    status: str | None
    epoch: int | None
    position: int | None


class ReviewAcceptedReply(msgspec.Struct, rename="camel"):
    """The review's run (its version in the task's history) and the ids given to its findings."""

    run_id: int
    finding_ids: list[int]


class RulingAcceptedReply(msgspec.Struct, rename="camel"):
    """The ruling's run and the task's status after it."""

    run_id: int
    new_status: str | None


def _answers(body: type[msgspec.Struct]) -> dict[int, ResponseSpec]:
    return {200: documented(body, body.__doc__ or ""), **COMMAND_ERRORS}


_decode_events = msgspec.json.Decoder(list[TaskEvent | TaskIdIssued]).decode


TASK_READ_ERRORS = READ_ERRORS | {
    400: documented(RejectedReply, f"invalid: the {PROJECT_HEADER} header is missing, or a parameter breaks a rule"),
}


def handlers(gateway: Gateway) -> list[HTTPRouteHandler]:
    def missing_project() -> Response[bytes]:
        return error_response({"code": "invalid", "message": f"the {PROJECT_HEADER} header is required",
                               "field": PROJECT_HEADER})

    async def sent(request: Request, command: Command) -> tuple[Reply, Response[bytes] | None]:
        reply = await gateway.send(request, command)
        return reply, None if reply.ok else reply_response(reply)

    async def status_after(task_id: int, project: str, reply: Reply) -> tuple[str | None, int | None]:
        """The status the command left, from its own events, so that a retry gets the first
        answer; the view gives the status a command did not move, and the epoch a reset did not set."""
        events = _decode_events(reply.events)
        status = status_set_by(events)
        reset = next((e for e in reversed(events) if isinstance(e, TaskReset)), None)
        if status is not None and reset is not None:  # a reset moves the task, into its new epoch
            return status.value, reset.epoch
        answer = await gateway.query("task.show", task_id=task_id, project_id=project, after=reply.position or 0)
        task = answer.get("result") or {}
        return (status.value if status else task.get("status")), task.get("epoch")

    def facts(reply: Reply, tag: str) -> dict[str, Any]:
        return next((e for e in msgspec.json.decode(reply.events) if e["type"] == tag), {})

    def json(body: msgspec.Struct) -> Response[bytes]:
        return Response(msgspec.json.encode(body), status_code=200, media_type=MediaType.JSON)

    async def moved(request: Request, task_id: int, command: Command) -> Response[bytes]:
        reply, failed = await sent(request, command)
        if failed:
            return failed
        status, epoch = await status_after(task_id, command.project_id, reply)  # type: ignore[attr-defined]
        return json(TaskMovedReply(task_id, status, epoch, reply.position))

    @post("/tasks", status_code=200, tags=["tasks"], responses=_answers(TaskCreatedReply))
    async def create(
        data: CreateBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        if not project:
            return missing_project()
        reply, failed = await sent(request, CreateTask(project_id=project, **msgspec.structs.asdict(data)))
        return failed or json(TaskCreatedReply(facts(reply, "TaskIdIssued")["number"], reply.position))

    @get("/tasks", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def listed(request: Request, status: str | None = None, after: After = None,
                     project: ProjectHeader = None) -> Response[Any]:
        """The project's tasks, oldest first; ``?status=arbitrating`` is an arbitrator's work."""
        if not project:
            return missing_project()
        return answer_response(await gateway.query("task.list", project_id=project, **({"status": status} if status else {}),
                                                   **waiting_for(after)))

    @get("/tasks/{task_id:int}", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def show(task_id: int, request: Request, after: After = None, project: ProjectHeader = None) -> Response[Any]:
        if not project:
            return missing_project()
        return answer_response(await gateway.query("task.show", task_id=task_id, project_id=project,
                                                   **waiting_for(after)))

    @post("/tasks/{task_id:int}/claim", status_code=200, tags=["tasks"], responses=_answers(TaskMovedReply))
    async def claim(
        task_id: int, request: Request, data: NoFields | None = None,
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        if not project:
            return missing_project()
        return await moved(request, task_id, ClaimTask(project_id=project, task_id=task_id))

    @post("/tasks/{task_id:int}/transition", status_code=200, tags=["tasks"], responses=_answers(TaskMovedReply))
    async def transition(
        task_id: int, data: TransitionBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        if not project:
            return missing_project()
        command = TransitionTask(project_id=project, task_id=task_id, **msgspec.structs.asdict(data))
        return await moved(request, task_id, command)

    @post("/tasks/{task_id:int}/reviews", status_code=200, tags=["tasks"], responses=_answers(ReviewAcceptedReply))
    async def review(
        task_id: int, data: ReviewBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        if not project:
            return missing_project()
        reply, failed = await sent(request, PostReview(project_id=project, task_id=task_id,
                                                       **msgspec.structs.asdict(data)))
        if failed:
            return failed
        posted = facts(reply, "ReviewPosted")
        return json(ReviewAcceptedReply(posted["originator_version"], [f["id"] for f in posted["findings"]]))

    @get("/tasks/{task_id:int}/reviews/{cycle:int}", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def reviews(task_id: int, cycle: int, request: Request, project: ProjectHeader = None, agent: AgentHeader = None) -> Response[Any]:
        if not project:
            return missing_project()
        return answer_response(await gateway.query("task.reviews", task_id=task_id, project_id=project, cycle=cycle))

    @post("/tasks/{task_id:int}/arbitrations", status_code=200, tags=["tasks"], responses=_answers(RulingAcceptedReply))
    async def arbitrate(
        task_id: int, data: RulingBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        if not project:
            return missing_project()
        reply, failed = await sent(request, PostRuling(project_id=project, task_id=task_id,
                                                       **msgspec.structs.asdict(data)))
        if failed:
            return failed
        status, _ = await status_after(task_id, project, reply)
        return json(RulingAcceptedReply(facts(reply, "RulingPosted")["originator_version"], status))

    @get("/tasks/{task_id:int}/arbitrations", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def arbitrations(task_id: int, request: Request, project: ProjectHeader = None, agent: AgentHeader = None) -> Response[Any]:
        if not project:
            return missing_project()
        return answer_response(await gateway.query("task.arbitrations", task_id=task_id, project_id=project))

    @get("/tasks/{task_id:int}/arbitrations/{trigger:str}/addendum", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def addendum(task_id: int, trigger: str, request: Request, project: ProjectHeader = None, agent: AgentHeader = None) -> Response[Any]:
        if not project:
            return missing_project()
        return answer_response(await gateway.query("task.addendum", task_id=task_id, project_id=project,
                                                   trigger=trigger))

    @post("/tasks/{task_id:int}/role-session-ended", status_code=200, tags=["tasks"], responses=_answers(TaskMovedReply))
    async def session_ended(
        task_id: int, data: SessionBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        if not project:
            return missing_project()
        command = EndRoleSession(project_id=project, task_id=task_id, **msgspec.structs.asdict(data))
        return await moved(request, task_id, command)

    @post("/tasks/{task_id:int}/reset", status_code=200, tags=["tasks"], responses=_answers(TaskMovedReply))
    async def reset(
        task_id: int, request: Request, data: NoFields | None = None,
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        if not project:
            return missing_project()
        return await moved(request, task_id, ResetTask(project_id=project, task_id=task_id))

    return [create, listed, show, claim, transition, review, reviews, arbitrate, arbitrations, addendum, session_ended, reset]
