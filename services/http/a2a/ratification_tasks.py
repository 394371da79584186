"""A ratification as an A2A task, whichever version of A2A asks: opened under its task id, read,
canceled, and followed state by state through the view's KV key.

A task is ``submitted`` once frozen, ``working`` from the first vote, ``input-required`` while a
human must decide, ``completed`` when ratified or rejected, or ``canceled``; it never moves back.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import nats.errors
from litestar import Request, Response

from athenaeum.aggregates.rules import COMMAND_ID_LIMIT, RuleViolation
from athenaeum.events.ratification_commands import CancelRatification, InitRatification
from athenaeum.projectors import a2a_tasks, ratification_status
from athenaeum.services.http.a2a.jsonrpc import INVALID_PARAMS, TASK_NOT_CANCELABLE, TASK_NOT_FOUND, Call, RpcError
from athenaeum.services.commands.reading import read_command
from athenaeum.services.commands.replies import ErrorBody, http_status
from athenaeum.services.http.common import Gateway
from athenaeum.services.views.bucket import BUCKET, kv_key

_CLOSED = {"pending-human": "input-required", "ratified": "completed", "rejected": "completed", "canceled": "canceled"}
# How far along each state is; the terminal ones last.
RANK = {"submitted": 0, "working": 1, "input-required": 2, "completed": 3, "canceled": 3}
TERMINAL = ("completed", "canceled")
# A task id becomes a command id, with its prefix: it must fit in one.
MAX_TASK_ID = COMMAND_ID_LIMIT - len(a2a_tasks.COMMAND_PREFIX)
# An idle stream says it is alive this often: the A2A SDK's client gives up on a read after 5 s.
KEEPALIVE_SECONDS = 2.0
WATCH_FORGOTTEN = 10.0  # seconds
_JSON = msgspec.json.Decoder()


def refusal(code: int, error: ErrorBody) -> RpcError:
    """The ledger's refusal as a JSON-RPC error; a sender not proven (401) or not allowed (403)
    is refused at the HTTP layer too, as it is on every other route."""
    status = http_status(error.code)
    return RpcError(code, error.message, msgspec.to_builtins(error), status if status in (401, 403) else 200)


def a2a_state(document: dict[str, Any]) -> str:
    if document["status"] == "open":
        return "working" if document["voted"] else "submitted"
    return _CLOSED[document["status"]]


def task_metadata(document: dict[str, Any]) -> dict[str, Any]:
    return {
        "athenaeum_mode": "ratify",
        "topic": document["topic"],
        "athenaeum_status": document["status"],
        "voted": document["voted"],
        "artifact_sha256": document["artifact_sha256"],
        "expires_at": document["expires_at"],
    }


class RatificationTasks:
    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def open(self, request: Request, task_id: Any, metadata: Any, *,
                   id_field: str, metadata_field: str) -> dict[str, Any]:
        """Freeze the ratification that ``metadata`` describes (the init command itself, so
        every field of it works and no other does); the same task id again is the same task.
        ``id_field`` and ``metadata_field`` name where the request gave them, for its errors."""
        if not isinstance(task_id, str) or not 0 < len(task_id.encode()) <= MAX_TASK_ID:
            raise RpcError(INVALID_PARAMS, f"{id_field}: the task id is a string of 1 to {MAX_TASK_ID} bytes")
        if not isinstance(metadata, dict) or metadata.get("athenaeum_mode") != "ratify":
            raise RpcError(INVALID_PARAMS, f'{metadata_field}.athenaeum_mode must be "ratify"')
        try:  # the request as sent: its metadata became a dict that kept the last of two values
            read_command(await request.body(), _JSON)
        except RuleViolation as violation:
            raise RpcError(INVALID_PARAMS, violation.message,
                           {"code": violation.code, "message": violation.message, "field": violation.field}) from None
        if "command_id" in metadata:
            raise RpcError(INVALID_PARAMS, f"{metadata_field}.command_id: the task id is the command id")
        fields = {key: value for key, value in metadata.items() if key != "athenaeum_mode"} | {
            "command_id": f"{a2a_tasks.COMMAND_PREFIX}{task_id}",
        }
        try:
            command = msgspec.convert(fields, InitRatification)
        except msgspec.ValidationError as error:
            raise RpcError(INVALID_PARAMS, f"{metadata_field}: {error}") from error
        # Idempotent by task id: the same task again is that task (the ledger answers it as the
        # first time); a task id names one topic, opened with one metadata.
        if (known := await self.topic(task_id)) is not None and known != command.topic:
            raise RpcError(INVALID_PARAMS, f"task {task_id!r} is the ratification of {known!r}, not {command.topic!r}")
        reply = await self.gateway.send(request, command, a2a=True)
        if not reply.ok and reply.error is not None:
            if reply.error.code == "idempotency_key_reused":  # sent before with other metadata, or a racing send won
                raise RpcError(INVALID_PARAMS, f"task {task_id!r} is already a ratification opened with other metadata: "
                                               "send it again as it was first sent, or as a new task")
            raise refusal(INVALID_PARAMS, reply.error)
        return await self._document(command.topic, after=reply.position)

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self._document(await self._existing(task_id))

    async def cancel(self, request: Request, task_id: str) -> dict[str, Any]:
        topic = await self._existing(task_id)
        reply = await self.gateway.send(request, CancelRatification(topic=topic))
        if not reply.ok and reply.error is not None:
            raise refusal(TASK_NOT_CANCELABLE, reply.error)
        return await self._document(topic, after=reply.position)

    async def changes(self, topic: str, since: str | None = None) -> AsyncIterator[dict[str, Any] | None]:
        """The ratification's document each time its task moves past the state ``since``, until
        a terminal state; None whenever ``KEEPALIVE_SECONDS`` pass without one, for a stream to
        show it is alive. A watch first delivers the key as the bucket holds it, which may be
        older than the caller's read: a state behind the last one is no change."""
        kv = await self.gateway.nc.jetstream().key_value(BUCKET)
        # Each stream has a watch of its own: once it stops, the server forgets it within seconds
        # rather than after nats-py's five minutes.
        watcher = await kv.watch(kv_key(ratification_status.VIEW, topic), inactive_threshold=WATCH_FORGOTTEN)
        clock = asyncio.get_running_loop()
        reached = RANK[since] if since is not None else -1
        quiet_until = clock.time() + KEEPALIVE_SECONDS
        try:
            while True:
                try:
                    entry = await watcher.updates(timeout=max(0.0, quiet_until - clock.time()))
                except nats.errors.TimeoutError:
                    quiet_until = clock.time() + KEEPALIVE_SECONDS
                    yield None
                    continue
                if entry is None or not entry.value:  # the end of the initial values, or a removal
                    continue
                document = msgspec.json.decode(entry.value)
                state = a2a_state(document)
                if RANK[state] <= reached:
                    continue
                reached, quiet_until = RANK[state], clock.time() + KEEPALIVE_SECONDS
                yield document
                if state in TERMINAL:
                    return
        finally:
            with contextlib.suppress(Exception):  # the connection may be closing: serve is stopping
                await watcher.stop()

    async def settled(self, document: dict[str, Any]) -> dict[str, Any]:
        """The document once the task is terminal or waits for a human: what a blocking send returns."""
        if RANK[a2a_state(document)] < RANK["input-required"]:
            async with contextlib.aclosing(self.changes(document["topic"], since=a2a_state(document))) as changes:
                async for change in changes:
                    if change is not None:
                        document = change
                        if RANK[a2a_state(change)] >= RANK["input-required"]:
                            break
        return document

    async def topic(self, task_id: str) -> str | None:
        answer = await self.gateway.query("a2a.task", task_id=task_id)
        return answer["result"]["topic"] if answer["ok"] else None

    async def _existing(self, task_id: str) -> str:
        if (topic := await self.topic(task_id)) is None:
            raise RpcError(TASK_NOT_FOUND, f"task {task_id!r} not found")
        return topic

    async def _document(self, topic: str, after: int | None = None) -> dict[str, Any]:
        fields = {"topic": topic} | ({"after": after} if after is not None else {})
        answer = await self.gateway.query("ratification.show", **fields)
        if not answer["ok"]:
            raise RpcError(TASK_NOT_FOUND, answer["error"]["message"])
        return answer["result"]


# A JSON-RPC method: what it answers the call with, JSON or a stream.
Method = Callable[[RatificationTasks, Call], Awaitable[Response[Any]]]
