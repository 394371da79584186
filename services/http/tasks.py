"""The arbitrator's HTTP contract for durable tasks (PROTOCOLS.md section 5), as the original
server answers it: camelCase bodies, its field names and its answers' shapes. Bodies are the
task commands without the ids the path and headers carry.

``X-Project-Id`` is required (400 when missing) where the original requires it: reviews,
arbitrations, transitions, and this contract's own routes (role sessions, addenda). Elsewhere a
request without it is in the project ``default``, as in the original. A task of another
project is 404."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import MediaType, Request, Response, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.params import HeaderParameter, Parameter

from athenaeum.events.commands import Command
from athenaeum.events.task import TaskStatus, Trigger
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
    SENDS_COMMANDS, After, AgentHeader, Gateway, IdempotencyHeader, ProjectHeader, answer_response, error_response,
    reply_response, waiting_for,
)
from athenaeum.services.http.task_replies import (
    TASK_READ_ERRORS, RulingAcceptedReply, ReviewAcceptedReply, TaskCreatedReply, TaskMovedReply, answers, body_of,
    facts, moved_reply,
)
from athenaeum.services.commands.replies import Reply

PROJECT_HEADER = "X-Project-Id"
DEFAULT_PROJECT = "default"
DefaultedProjectHeader = Annotated[str | None, HeaderParameter(
    name=PROJECT_HEADER, required=False, description=f"the task's project; without it, {DEFAULT_PROJECT!r}",
    schema_extra={"pattern": r"\S"})]
# What the routes check themselves, with the original's messages and order; the document shows it.
TaskId = Annotated[int, Parameter(schema_extra={"minimum": 1})]
Cycle = Annotated[int, Parameter(schema_extra={"minimum": 0})]
TriggerName = Annotated[str, Parameter(schema_extra={"enum": [trigger.value for trigger in Trigger]})]
StatusName = Annotated[str | None, Parameter(schema_extra={"enum": [status.value for status in TaskStatus]})]

CreateBody, TransitionBody, ReviewBody, RulingBody, SessionBody = (
    body_of(command) for command in (CreateTask, TransitionTask, PostReview, PostRuling, EndRoleSession)
)


class NoFields(msgspec.Struct, forbid_unknown_fields=True):
    """The body of a command whose path and headers say it all: none, or ``{}``."""


def invalid(message: str, field: str) -> Response[bytes]:
    return error_response({"code": "invalid", "message": message, "field": field})


def first_header(request: Request, name: str) -> str | None:
    """A header's first value. Sent twice, a header is one value per line on the wire; the
    original reads the first, where the framework would join them with a comma."""
    wanted = name.lower().encode()
    for key, value in request.scope["headers"]:
        if key.lower() == wanted:
            try:
                return value.decode("utf-8")
            except UnicodeError:
                return value.decode("latin-1")
    return None


def scoped(request: Request, task_id: int | None = None, *, guarded: bool = True) -> tuple[str, Response[bytes] | None]:
    """The request's project, or its refusal: ``X-Project-Id`` empty, or missing where it is
    ``guarded``; a task id below 1, which the original refuses as invalid (400)."""
    project = first_header(request, PROJECT_HEADER)
    if project == "" or (guarded and project is None):
        return "", invalid(f"{PROJECT_HEADER} header is required", PROJECT_HEADER)
    if task_id is not None and task_id < 1:
        return "", invalid(f"invalid task id {task_id}: task ids count from 1", "taskId")
    return project or DEFAULT_PROJECT, None


def handlers(gateway: Gateway) -> list[HTTPRouteHandler]:
    def json(body: msgspec.Struct) -> Response[bytes]:
        return Response(msgspec.json.encode(body), status_code=200, media_type=MediaType.JSON)

    async def sent(request: Request, command: Command) -> tuple[Reply, Response[bytes] | None]:
        reply = await gateway.send(request, command)
        return reply, None if reply.ok else reply_response(reply)

    async def standing(task_id: int, project: str, reply: Reply) -> TaskMovedReply:
        """Where the task stands after the command ``reply`` answers, the view having reached it."""
        shown = await gateway.query("task.show", task_id=task_id, project_id=project, after=reply.position or 0)
        return moved_reply(task_id, reply, shown.get("result") or {})

    async def moved(request: Request, task_id: int, command: Command) -> Response[bytes]:
        reply, failed = await sent(request, command)
        return failed or json(await standing(task_id, command.project_id, reply))  # type: ignore[attr-defined]

    async def read(request: Request, name: str, task_id: int, after: int | None, guarded: bool = True,
                   **fields: Any) -> Response[Any]:
        project, refused = scoped(request, task_id, guarded=guarded)
        if refused:
            return refused
        return answer_response(await gateway.query(name, task_id=task_id, project_id=project, **fields,
                                                   **waiting_for(after)))

    @post("/tasks", status_code=200, tags=["tasks"], responses=answers(TaskCreatedReply),
          opt=SENDS_COMMANDS)
    async def create(
        data: CreateBody, request: Request,  # type: ignore[valid-type]
        project: DefaultedProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        scope, refused = scoped(request, guarded=False)
        if refused:
            return refused
        reply, failed = await sent(request, CreateTask(project_id=scope, **msgspec.structs.asdict(data)))
        return failed or json(TaskCreatedReply(True, facts(reply, "TaskIdIssued")["number"], reply.position))

    @get("/tasks", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def listed(request: Request, status: StatusName = None, after: After = None,
                     project: DefaultedProjectHeader = None) -> Response[Any]:
        """The project's tasks, oldest first; ``?status=arbitrating`` is an arbitrator's work."""
        scope, refused = scoped(request, guarded=False)
        if refused:
            return refused
        return answer_response(await gateway.query("task.list", project_id=scope, **({"status": status} if status else {}),
                                                   **waiting_for(after)))

    @get("/tasks/{task_id:int}", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def show(task_id: TaskId, request: Request, after: After = None,
                   project: DefaultedProjectHeader = None) -> Response[Any]:
        return await read(request, "task.show", task_id, after, guarded=False)

    async def moved_by(request: Request, task_id: int, command: type[Command], guarded: bool,
                       **fields: Any) -> Response[bytes]:
        scope, refused = scoped(request, task_id, guarded=guarded)
        if refused:
            return refused
        return await moved(request, task_id, command(project_id=scope, task_id=task_id, **fields))

    @post("/tasks/{task_id:int}/claim", status_code=200, tags=["tasks"], responses=answers(TaskMovedReply),
          opt=SENDS_COMMANDS)
    async def claim(
        task_id: TaskId, request: Request, data: NoFields | None = None,
        project: DefaultedProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        return await moved_by(request, task_id, ClaimTask, guarded=False)

    @post("/tasks/{task_id:int}/transition", status_code=200, tags=["tasks"], responses=answers(TaskMovedReply),
          opt=SENDS_COMMANDS)
    async def transition(
        task_id: TaskId, data: TransitionBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        return await moved_by(request, task_id, TransitionTask, guarded=True, **msgspec.structs.asdict(data))

    @post("/tasks/{task_id:int}/integrate", status_code=200, tags=["tasks"], responses=answers(TaskMovedReply),
          opt=SENDS_COMMANDS)
    async def integrate(
        task_id: TaskId, request: Request, data: NoFields | None = None,
        project: DefaultedProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        """A completed task's work is merged: the transition to ``integrated``."""
        return await moved_by(request, task_id, TransitionTask, guarded=False, to=TaskStatus.INTEGRATED)

    @post("/tasks/{task_id:int}/reviews", status_code=200, tags=["tasks"], responses=answers(ReviewAcceptedReply),
          opt=SENDS_COMMANDS)
    async def review(
        task_id: TaskId, data: ReviewBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        scope, refused = scoped(request, task_id)
        if refused:
            return refused
        reply, failed = await sent(request, PostReview(project_id=scope, task_id=task_id, **msgspec.structs.asdict(data)))
        if failed:
            return failed
        posted = facts(reply, "ReviewPosted")
        return json(ReviewAcceptedReply(posted["originator_version"], [f["id"] for f in posted["findings"]],
                                        reply.position))

    @get("/tasks/{task_id:int}/reviews/{cycle:int}", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def reviews(task_id: TaskId, cycle: Cycle, request: Request, after: After = None,
                      project: ProjectHeader = None, agent: AgentHeader = None) -> Response[Any]:
        if cycle < 0:  # after the header and the task id, as the original checks them
            return scoped(request, task_id)[1] or invalid(f"invalid cycle {cycle}: cycles count from 0", "cycle")
        return await read(request, "task.reviews", task_id, after, cycle=cycle)

    @post("/tasks/{task_id:int}/arbitrations", status_code=200, tags=["tasks"], responses=answers(RulingAcceptedReply),
          opt=SENDS_COMMANDS)
    async def arbitrate(
        task_id: TaskId, data: RulingBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        scope, refused = scoped(request, task_id)
        if refused:
            return refused
        reply, failed = await sent(request, PostRuling(project_id=scope, task_id=task_id, **msgspec.structs.asdict(data)))
        if failed:
            return failed
        status = (await standing(task_id, scope, reply)).status
        return json(RulingAcceptedReply(facts(reply, "RulingPosted")["originator_version"], status, reply.position))

    @get("/tasks/{task_id:int}/arbitrations", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def arbitrations(task_id: TaskId, request: Request, after: After = None,
                           project: ProjectHeader = None, agent: AgentHeader = None) -> Response[Any]:
        return await read(request, "task.arbitrations", task_id, after)

    @get("/tasks/{task_id:int}/arbitrations/{trigger:str}/addendum", tags=["tasks"], responses=TASK_READ_ERRORS)
    async def addendum(task_id: TaskId, trigger: TriggerName, request: Request, after: After = None,
                       project: ProjectHeader = None, agent: AgentHeader = None) -> Response[Any]:
        return await read(request, "task.addendum", task_id, after, trigger=trigger)

    @post("/tasks/{task_id:int}/role-session-ended", status_code=200, tags=["tasks"], responses=answers(TaskMovedReply),
          opt=SENDS_COMMANDS)
    async def session_ended(
        task_id: TaskId, data: SessionBody, request: Request,  # type: ignore[valid-type]
        project: ProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        return await moved_by(request, task_id, EndRoleSession, guarded=True, **msgspec.structs.asdict(data))

    @post("/tasks/{task_id:int}/reset", status_code=200, tags=["tasks"], responses=answers(TaskMovedReply),
          opt=SENDS_COMMANDS)
    async def reset(
        task_id: TaskId, request: Request, data: NoFields | None = None,
        project: DefaultedProjectHeader = None, agent: AgentHeader = None, idempotency: IdempotencyHeader = None,
    ) -> Response[bytes]:
        return await moved_by(request, task_id, ResetTask, guarded=False)

    return [create, listed, show, claim, transition, integrate, review, reviews, arbitrate, arbitrations, addendum,
            session_ended, reset]
