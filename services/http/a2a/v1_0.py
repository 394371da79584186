"""The A2A 1.0 methods (``A2A-Version: 1.0``): ``SendMessage``, ``SendStreamingMessage``,
``GetTask``, ``CancelTask`` and ``SubscribeToTask``, in the shapes of the specification's
``a2a.proto`` as ProtoJSON (camelCase fields, ``TASK_STATE_*`` and ``ROLE_*`` names).

A message opens a ratification: its metadata is the init command, as in 0.3, and its
``messageId`` the task's id, so a retried message is the same task. The message's
``contextId``, when given, is the topic. A task completed carries the ratification's record as
its one artifact.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

import msgspec
from litestar import Response

from athenaeum.services.http.a2a.jsonrpc import (
    INVALID_PARAMS, PUSH_NOTIFICATION_NOT_SUPPORTED, UNSUPPORTED_OPERATION, Call, RpcError, event_stream,
    result_response, unless_disconnected,
)
from athenaeum.services.http.a2a.ratification_tasks import (
    TERMINAL, Method, RatificationTasks, a2a_state, task_metadata,
)

NonEmpty = msgspec.Meta(min_length=1)


class Message(msgspec.Struct, rename="camel"):
    message_id: Annotated[str, NonEmpty]
    role: Literal["ROLE_USER", "ROLE_AGENT"]
    parts: Annotated[list[dict[str, Any]], NonEmpty]
    context_id: str = ""
    task_id: str = ""
    metadata: dict[str, Any] | None = None


class SendMessageConfiguration(msgspec.Struct, rename="camel"):
    return_immediately: bool = False


class SendMessageRequest(msgspec.Struct, rename="camel"):
    message: Message
    configuration: SendMessageConfiguration = msgspec.field(default_factory=SendMessageConfiguration)
    metadata: dict[str, Any] | None = None


class TaskRequest(msgspec.Struct):
    """``GetTask``, ``CancelTask`` and ``SubscribeToTask`` name the task; nothing else they
    may carry (``historyLength``: a task here keeps no history) changes the answer."""

    id: Annotated[str, NonEmpty]


class TaskStatus(msgspec.Struct):
    state: str
    timestamp: str


class Artifact(msgspec.Struct, rename="camel"):
    artifact_id: str
    name: str
    parts: list[dict[str, Any]]


class Task(msgspec.Struct, rename="camel", omit_defaults=True):
    id: str
    context_id: str
    status: TaskStatus
    metadata: dict[str, Any]
    artifacts: list[Artifact] = []


class TaskStatusUpdateEvent(msgspec.Struct, rename="camel"):
    task_id: str
    context_id: str
    status: TaskStatus
    metadata: dict[str, Any]


class TaskArtifactUpdateEvent(msgspec.Struct, rename="camel"):
    task_id: str
    context_id: str
    artifact: Artifact
    last_chunk: bool = True


def task_object(task_id: str, document: dict[str, Any]) -> Task:
    state = a2a_state(document)
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    record = [{"data": document, "mediaType": "application/json"}]
    return Task(
        id=task_id,
        context_id=document["topic"],
        status=TaskStatus(state=f"TASK_STATE_{state.upper().replace('-', '_')}", timestamp=now),
        metadata=task_metadata(document),
        artifacts=[Artifact(artifact_id="ratification", name="ratification", parts=record)] if state == "completed" else [],
    )


def _decoded(params: dict[str, Any], kind: type[msgspec.Struct]) -> Any:
    try:
        return msgspec.convert(params, kind)
    except msgspec.ValidationError as error:
        raise RpcError(INVALID_PARAMS, str(error).replace("`$", "`params")) from error


async def _open(tasks: RatificationTasks, call: Call, sent: SendMessageRequest) -> tuple[str, dict[str, Any]]:
    message = sent.message
    if message.task_id:  # a message to a task already there: a ratification takes votes, not messages
        document = await tasks.get(message.task_id)
        raise RpcError(UNSUPPORTED_OPERATION, f"task {message.task_id!r} ({a2a_state(document)}) takes no messages: its "
                       "roster votes (ratification.vote) and a human decides (ratification.decide)")
    metadata = message.metadata or sent.metadata
    where = "params.message.metadata" if message.metadata else "params.metadata"
    if message.context_id and isinstance(metadata, dict):
        if metadata.setdefault("topic", message.context_id) != message.context_id:
            raise RpcError(INVALID_PARAMS, f"params.message.contextId {message.context_id!r} is the topic, and "
                           f"{where}.topic says {metadata['topic']!r}")
    document = await tasks.open(call.request, message.message_id, metadata, id_field="params.message.messageId",
                                metadata_field=where)
    return message.message_id, document


async def send_message(tasks: RatificationTasks, call: Call) -> Response[Any]:
    """Blocking unless ``configuration.returnImmediately``: the answer waits until the task is
    terminal or waits for a human (A2A 1.0 §3.2.2)."""
    sent = _decoded(call.params, SendMessageRequest)
    task_id, document = await _open(tasks, call, sent)
    if not sent.configuration.return_immediately:
        document = await unless_disconnected(call.request, tasks.settled(document)) or document
    return result_response(call.id, {"task": task_object(task_id, document)})


async def send_streaming_message(tasks: RatificationTasks, call: Call) -> Response[Any]:
    task_id, document = await _open(tasks, call, _decoded(call.params, SendMessageRequest))
    return event_stream(call.id, _events(tasks, task_id, document))


async def get_task(tasks: RatificationTasks, call: Call) -> Response[Any]:
    task_id = _decoded(call.params, TaskRequest).id
    return result_response(call.id, task_object(task_id, await tasks.get(task_id)))


async def cancel_task(tasks: RatificationTasks, call: Call) -> Response[Any]:
    task_id = _decoded(call.params, TaskRequest).id
    return result_response(call.id, task_object(task_id, await tasks.cancel(call.request, task_id)))


async def subscribe_to_task(tasks: RatificationTasks, call: Call) -> Response[Any]:
    task_id = _decoded(call.params, TaskRequest).id
    document = await tasks.get(task_id)
    if (state := a2a_state(document)) in TERMINAL:
        raise RpcError(UNSUPPORTED_OPERATION, f"task {task_id!r} is {state}: nothing more will happen to it "
                       "(GetTask reads it)")
    return event_stream(call.id, _events(tasks, task_id, document))


async def _events(tasks: RatificationTasks, task_id: str, document: dict[str, Any]) -> AsyncIterator[Any]:
    """The task as it stands, then an update at each later state; the record as an artifact
    before the final update (A2A 1.0 §3.1.2). The stream ends with the task."""
    yield {"task": task_object(task_id, document)}
    if a2a_state(document) in TERMINAL:
        return
    async for change in tasks.changes(document["topic"], since=a2a_state(document)):
        if change is None:
            yield None
            continue
        task = task_object(task_id, change)
        for artifact in task.artifacts:
            yield {"artifactUpdate": TaskArtifactUpdateEvent(task_id, task.context_id, artifact)}
        yield {"statusUpdate": TaskStatusUpdateEvent(task_id, task.context_id, task.status, task.metadata)}


def _refused(code: int, message: str) -> Method:
    async def method(tasks: RatificationTasks, call: Call) -> Response[Any]:
        raise RpcError(code, message)

    return method


METHODS = {
    "SendMessage": send_message,
    "SendStreamingMessage": send_streaming_message,
    "GetTask": get_task,
    "CancelTask": cancel_task,
    "SubscribeToTask": subscribe_to_task,
    # What the card does not declare, each refused as the specification says (§3.3.4).
    "ListTasks": _refused(UNSUPPORTED_OPERATION, "ListTasks is not offered: GetTask reads a task by its id"),
    "GetExtendedAgentCard": _refused(UNSUPPORTED_OPERATION, "there is no extended agent card: the card is "
                                     "/.well-known/agent-card.json"),
    **{name: _refused(PUSH_NOTIFICATION_NOT_SUPPORTED, "push notifications are not offered: SubscribeToTask streams a task")
       for name in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
                    "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig")},
}
