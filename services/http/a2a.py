"""A2A for ratifications: JSON-RPC 2.0 at ``POST /a2a`` and the agent card.

A ratification is an A2A task: ``submitted`` once frozen, ``working`` from the first vote,
``input-required`` while a human must decide, ``completed`` when ratified or rejected,
``canceled``. ``tasks/sendSubscribe`` streams each status change (server-sent events, read from
the view's KV key) until a terminal state.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from importlib import metadata
from typing import Any

import msgspec
from litestar import MediaType, Request, Response, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.response import ServerSentEvent

from athenaeum.aggregates.rules import COMMAND_ID_LIMIT
from athenaeum.events.ratification_commands import CancelRatification, InitRatification
from athenaeum.projectors import a2a_tasks, ratification_status
from athenaeum.services.http.common import Gateway
from athenaeum.services.views.bucket import BUCKET, kv_key

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
TASK_NOT_FOUND, TASK_NOT_CANCELABLE = -32001, -32002
_STATES = {"pending-human": "input-required", "ratified": "completed", "rejected": "completed", "canceled": "canceled"}
TERMINAL = ("completed", "canceled")


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def a2a_state(document: dict[str, Any]) -> str:
    if document["status"] == "open":
        return "working" if document["voted"] else "submitted"
    return _STATES[document["status"]]


def task_object(task_id: str, document: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": task_id,
        "kind": "task",
        "contextId": document["topic"],
        "status": {"state": a2a_state(document), "timestamp": datetime.now(timezone.utc).isoformat()},
        "metadata": {
            "athenaeum_mode": "ratify",
            "topic": document["topic"],
            "athenaeum_status": document["status"],
            "voted": document["voted"],
            "artifact_sha256": document["artifact_sha256"],
            "expires_at": document["expires_at"],
        },
    }


# A task id becomes a command id, with its prefix: it must fit in one.
MAX_TASK_ID = COMMAND_ID_LIMIT - len(a2a_tasks.COMMAND_PREFIX)


class A2A:
    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def send(self, params: dict[str, Any], request: Request) -> tuple[str, dict[str, Any]]:
        """Freeze the ratification the task describes; the same task id again is the same task."""
        task = params.get("task") if isinstance(params.get("task"), dict) else {}
        message = params.get("message") if isinstance(params.get("message"), dict) else {}
        task_id = task.get("id") or params.get("id") or message.get("taskId") or uuid.uuid4().hex
        if not isinstance(task_id, str) or not 0 < len(task_id.encode()) <= MAX_TASK_ID:
            raise RpcError(INVALID_PARAMS, f"the task id is a string of 1 to {MAX_TASK_ID} bytes")
        meta = task.get("metadata") or params.get("metadata") or message.get("metadata") or {}
        if not isinstance(meta, dict) or meta.get("athenaeum_mode") != "ratify":
            raise RpcError(INVALID_PARAMS, 'params.task.metadata.athenaeum_mode must be "ratify"')
        if "command_id" in meta:
            raise RpcError(INVALID_PARAMS, "params.task.metadata.command_id: the task id is the command id")
        # The metadata is the init command itself, so every field of it works and no other does.
        roster = meta.get("roster")
        fields = {key: value for key, value in meta.items() if key != "athenaeum_mode"} | {
            "roster": [a.strip() for a in roster.split(",")] if isinstance(roster, str) else roster,
            "command_id": f"{a2a_tasks.COMMAND_PREFIX}{task_id}",
        }
        try:
            command = msgspec.convert(fields, InitRatification)
        except msgspec.ValidationError as error:
            raise RpcError(INVALID_PARAMS, f"params.task.metadata: {error}") from error
        # Idempotent by task id: the same task again is that task; a task id names one topic.
        if (known := await self._topic(task_id)) is not None:
            if known != command.topic:
                raise RpcError(INVALID_PARAMS, f"task {task_id!r} is the ratification of {known!r}, not {command.topic!r}")
            return task_id, await self._document(known)
        reply = await self.gateway.send(request, command, a2a=True)
        if not reply.ok and reply.error is not None:
            if reply.error.code == "idempotency_key_reused":  # a racing send of this task id won
                raise RpcError(INVALID_PARAMS, f"task {task_id!r} is already another ratification")
            raise RpcError(INVALID_PARAMS, reply.error.message, msgspec.to_builtins(reply.error))
        return task_id, await self._document(command.topic, after=reply.position)

    async def get(self, task_id: str) -> dict[str, Any]:
        topic = await self._topic(task_id)
        if topic is None:
            raise RpcError(TASK_NOT_FOUND, f"task {task_id!r} not found")
        return await self._document(topic)

    async def cancel(self, task_id: str, request: Request) -> dict[str, Any]:
        topic = await self._topic(task_id)
        if topic is None:
            raise RpcError(TASK_NOT_FOUND, f"task {task_id!r} not found")
        reply = await self.gateway.send(request, CancelRatification(topic=topic))
        if not reply.ok and reply.error is not None:
            raise RpcError(TASK_NOT_CANCELABLE, reply.error.message, msgspec.to_builtins(reply.error))
        return await self._document(topic, after=reply.position)

    async def updates(self, rpc_id: Any, task_id: str, topic: str) -> AsyncIterator[str]:
        """One JSON-RPC result per status change, read from the view's KV key, until terminal."""
        kv = await self.gateway.nc.jetstream().key_value(BUCKET)
        watcher = await kv.watch(kv_key(ratification_status.VIEW, topic))
        last = None
        try:
            async for entry in watcher:
                if entry is None or not entry.value:
                    continue
                task = task_object(task_id, msgspec.json.decode(entry.value))
                state = task["status"]["state"]
                if state == last:
                    continue
                last = state
                final = state in TERMINAL
                yield _encoded({"jsonrpc": "2.0", "id": rpc_id, "result": task | {"final": final}})
                if final:
                    return
        finally:
            with contextlib.suppress(Exception):  # the connection may be closing: serve is stopping
                await watcher.stop()

    async def _topic(self, task_id: str) -> str | None:
        answer = await self.gateway.query("a2a.task", task_id=task_id)
        return answer["result"]["topic"] if answer["ok"] else None

    async def _document(self, topic: str, after: int | None = None) -> dict[str, Any]:
        fields = {"topic": topic} | ({"after": after} if after is not None else {})
        answer = await self.gateway.query("ratification.show", **fields)
        if not answer["ok"]:
            raise RpcError(TASK_NOT_FOUND, answer["error"]["message"])
        return answer["result"]


def handlers(gateway: Gateway, base_url: str) -> list[HTTPRouteHandler]:
    a2a = A2A(gateway)

    @post("/a2a", status_code=200, tags=["a2a"])
    async def rpc(request: Request) -> Response[Any]:
        """JSON-RPC 2.0: tasks/send (message/send), tasks/get, tasks/cancel, tasks/sendSubscribe
        (message/stream) and tasks/resubscribe, the last two as server-sent events."""
        rpc_id = None
        try:
            try:
                call = msgspec.json.decode(await request.body())
            except msgspec.DecodeError as error:
                raise RpcError(PARSE_ERROR, f"parse error: {error}") from error
            if not isinstance(call, dict):
                raise RpcError(INVALID_REQUEST, "a JSON-RPC request is an object")
            if isinstance(call.get("id"), (bool, dict, list)):
                raise RpcError(INVALID_REQUEST, "a JSON-RPC id is a string, a number or null")
            rpc_id = call.get("id")
            if call.get("jsonrpc") != "2.0" or not isinstance(call.get("method"), str):
                raise RpcError(INVALID_REQUEST, 'a JSON-RPC 2.0 request has "jsonrpc": "2.0" and a "method"')
            params = call.get("params", {})
            if "id" not in call:  # a notification: done, but never answered, not even an error
                with contextlib.suppress(RpcError):
                    await _dispatch(a2a, call["method"], params if isinstance(params, dict) else {}, None, request)
                return Response(b"", status_code=204)
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params is an object")
            return await _dispatch(a2a, call["method"], params, rpc_id, request)
        except RpcError as error:
            body: dict[str, Any] = {"code": error.code, "message": error.message}
            if error.data is not None:
                body["data"] = error.data
            return _json({"jsonrpc": "2.0", "id": rpc_id, "error": body})

    @get("/.well-known/agent.json", tags=["a2a"])
    async def agent_card() -> Response[bytes]:
        return _json({
            "name": "Athenaeum",
            "description": "The ledger of how a fleet of agents decides together: ratify an immutable "
                           "artifact by its SHA-256 with a roster of agents.",
            "url": f"{base_url}/a2a",
            "version": metadata.version("athenaeum"),
            "capabilities": {"streaming": True, "pushNotifications": False, "stateTransitionHistory": False},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "a token from `athenaeum agent token NAME`"}},
            "security": [{"bearer": []}],
            "defaultInputModes": ["application/json"],
            "defaultOutputModes": ["application/json"],
            "skills": [{
                "id": "ratify",
                "name": "Ratify an artifact",
                "description": 'tasks/send with metadata {"athenaeum_mode": "ratify", "topic", "roster", '
                               '"artifact"} and any other field of a ratification init ("mode", "expires_at", '
                               '"sha256", "artifact_origin", "supersedes"); the task completes when the roster '
                               'ratifies or a human decides.',
                "tags": ["ratification", "consensus"],
            }],
        })

    return [rpc, agent_card]


async def _dispatch(a2a: A2A, method: str, params: dict[str, Any], rpc_id: Any, request: Request) -> Response[Any]:
    match method:
        case "tasks/send" | "message/send":
            task_id, document = await a2a.send(params, request)
            return _json({"jsonrpc": "2.0", "id": rpc_id, "result": task_object(task_id, document)})
        case "tasks/get":
            task_id = _task_id(params)
            return _json({"jsonrpc": "2.0", "id": rpc_id, "result": task_object(task_id, await a2a.get(task_id))})
        case "tasks/cancel":
            task_id = _task_id(params)
            document = await a2a.cancel(task_id, request)
            return _json({"jsonrpc": "2.0", "id": rpc_id, "result": task_object(task_id, document)})
        case "tasks/sendSubscribe" | "message/stream":
            task_id, document = await a2a.send(params, request)
            return ServerSentEvent(a2a.updates(rpc_id, task_id, document["topic"]))
        case "tasks/resubscribe":
            task_id = _task_id(params)
            document = await a2a.get(task_id)
            return ServerSentEvent(a2a.updates(rpc_id, task_id, document["topic"]))
    raise RpcError(METHOD_NOT_FOUND, f"method {method!r} not found")


def _task_id(params: dict[str, Any]) -> str:
    task_id = params.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise RpcError(INVALID_PARAMS, "params.id names the task")
    return task_id


def _encoded(body: dict[str, Any]) -> str:
    return msgspec.json.encode(body).decode()


def _json(body: dict[str, Any]) -> Response[bytes]:
    return Response(msgspec.json.encode(body), status_code=200, media_type=MediaType.JSON)
