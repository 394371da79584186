"""The A2A 0.3 methods, as 0.3 clients (and the requests without an ``A2A-Version``) call them:
``tasks/send`` (``message/send``), ``tasks/get``, ``tasks/cancel``, ``tasks/sendSubscribe``
(``message/stream``) and ``tasks/resubscribe``, the last two as server-sent events."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any

from litestar import Response

from athenaeum.services.http.a2a.jsonrpc import INVALID_PARAMS, Call, RpcError, event_stream, result_response
from athenaeum.services.http.a2a.ratification_tasks import TERMINAL, RatificationTasks, a2a_state, task_metadata


def task_object(task_id: str, document: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": task_id,
        "kind": "task",
        "contextId": document["topic"],
        "status": {"state": a2a_state(document), "timestamp": datetime.now(timezone.utc).isoformat()},
        "metadata": task_metadata(document),
    }


async def _open(tasks: RatificationTasks, call: Call) -> tuple[str, dict[str, Any]]:
    """The task and its metadata from ``params.task``, ``params`` or ``params.message``."""
    params = call.params
    task = params.get("task") if isinstance(params.get("task"), dict) else {}
    message = params.get("message") if isinstance(params.get("message"), dict) else {}
    task_id = task.get("id") or params.get("id") or message.get("taskId") or uuid.uuid4().hex
    metadata = task.get("metadata") or params.get("metadata") or message.get("metadata") or {}
    document = await tasks.open(call.request, task_id, metadata, id_field="params.task.id",
                                metadata_field="params.task.metadata")
    return task_id, document


def _task_id(params: dict[str, Any]) -> str:
    task_id = params.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise RpcError(INVALID_PARAMS, "params.id names the task")
    return task_id


async def send(tasks: RatificationTasks, call: Call) -> Response[Any]:
    return result_response(call.id, task_object(*await _open(tasks, call)))


async def get(tasks: RatificationTasks, call: Call) -> Response[Any]:
    task_id = _task_id(call.params)
    return result_response(call.id, task_object(task_id, await tasks.get(task_id)))


async def cancel(tasks: RatificationTasks, call: Call) -> Response[Any]:
    task_id = _task_id(call.params)
    return result_response(call.id, task_object(task_id, await tasks.cancel(call.request, task_id)))


async def send_subscribe(tasks: RatificationTasks, call: Call) -> Response[Any]:
    task_id, document = await _open(tasks, call)
    return event_stream(call.id, _updates(tasks, task_id, document["topic"]))


async def resubscribe(tasks: RatificationTasks, call: Call) -> Response[Any]:
    task_id = _task_id(call.params)
    document = await tasks.get(task_id)
    return event_stream(call.id, _updates(tasks, task_id, document["topic"]))


async def _updates(tasks: RatificationTasks, task_id: str, topic: str) -> AsyncIterator[dict[str, Any] | None]:
    """The task at each state, from the one the bucket holds, ``final`` at a terminal one."""
    async for document in tasks.changes(topic):
        if document is None:
            yield None
            continue
        task = task_object(task_id, document)
        yield task | {"final": task["status"]["state"] in TERMINAL}


METHODS = {
    "tasks/send": send,
    "message/send": send,
    "tasks/get": get,
    "tasks/cancel": cancel,
    "tasks/sendSubscribe": send_subscribe,
    "message/stream": send_subscribe,
    "tasks/resubscribe": resubscribe,
}
