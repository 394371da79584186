"""A2A for ratifications: JSON-RPC 2.0 at ``POST /a2a``, in A2A 1.0 (``A2A-Version: 1.0``) and
in the 0.3 method names (``A2A-Version: 0.3``, or no header), and the agent cards."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

import msgspec
from litestar import MediaType, Request, Response, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter

from athenaeum.services.http.a2a import v0_3, v1_0
from athenaeum.services.http.a2a.card import agent_card, legacy_card
from athenaeum.services.http.a2a.jsonrpc import (
    INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, V0_3, V1_0, VERSION_HEADER, VERSION_NOT_SUPPORTED,
    Call, RpcError, error_response, spoken_version,
)
from athenaeum.services.http.a2a.ratification_tasks import Method, RatificationTasks, refusal
from athenaeum.services.http.common import Gateway, header

# Every method, with the version that defines it: a request calls those of the version it speaks.
METHODS: dict[str, tuple[str, Method]] = {
    **{name: (V0_3, method) for name, method in v0_3.METHODS.items()},
    **{name: (V1_0, method) for name, method in v1_0.METHODS.items()},
}
# The methods that send a command: an unproven sender is refused before their params are read.
ACTING = frozenset({"SendMessage", "SendStreamingMessage", "CancelTask",
                    "tasks/send", "message/send", "tasks/cancel", "tasks/sendSubscribe", "message/stream"})
CARD = {200: ResponseSpec(dict[str, Any], description="the agent card, a JSON object", generate_examples=False)}
# A JSON-RPC error all the same, but refused at the HTTP layer as well (A2A §4.4).
REFUSED = {
    401: ResponseSpec(dict[str, Any], description="who sends is not proven: no bearer token, or one the ledger did "
                      "not issue (WWW-Authenticate: Bearer)", generate_examples=False),
    403: ResponseSpec(dict[str, Any], description="who sends is proven, and may not (actor_mismatch, key_revoked, "
                      "not_human)", generate_examples=False),
}
VersionHeader = Annotated[str | None, HeaderParameter(
    name=VERSION_HEADER, required=False, description=f"the A2A version the request speaks: {V1_0}, or {V0_3} (the default)")]


def method_of(name: str, version: str) -> Method:
    if name not in METHODS:
        raise RpcError(METHOD_NOT_FOUND, f"method {name!r} not found")
    defined_in, method = METHODS[name]
    if defined_in != version:
        raise RpcError(VERSION_NOT_SUPPORTED, f"{name} is a method of A2A {defined_in}, and the request speaks A2A "
                       f"{version}: send {VERSION_HEADER}: {defined_in}", {"requested": version, "supported": defined_in})
    return method


def handlers(gateway: Gateway, base_url: str) -> list[HTTPRouteHandler]:
    tasks = RatificationTasks(gateway)

    @post("/a2a", status_code=200, tags=["a2a"], responses=REFUSED)
    async def rpc(request: Request, a2a_version: VersionHeader = None) -> Response[Any]:
        """JSON-RPC 2.0. A2A 1.0: SendMessage, SendStreamingMessage, GetTask, CancelTask and
        SubscribeToTask; A2A 0.3: tasks/send (message/send), tasks/get, tasks/cancel,
        tasks/sendSubscribe (message/stream) and tasks/resubscribe. The streams are server-sent events."""
        rpc_id, version = None, V1_0  # the error for a version not spoken is 1.0's, which defines it
        unproven = await gateway.refused(request)
        try:
            try:
                version = spoken_version(a2a_version or "")
            except RpcError:
                rpc_id = _id_of(await request.body())  # answered with it, where it can be read
                raise
            if unproven is not None and header(request, "Authorization"):  # a proof it cannot take: nothing is read
                raise refusal(INVALID_REQUEST, unproven.error)
            try:
                body = msgspec.json.decode(await request.body())
            except msgspec.DecodeError as error:
                raise RpcError(PARSE_ERROR, f"parse error: {error}") from error
            except RecursionError:
                raise RpcError(INVALID_REQUEST, "the request nests arrays or objects deeper than any does") from None
            if not isinstance(body, dict):
                raise RpcError(INVALID_REQUEST, "a JSON-RPC request is an object")
            if isinstance(body.get("id"), (bool, dict, list)):
                raise RpcError(INVALID_REQUEST, "a JSON-RPC id is a string, a number or null")
            rpc_id = body.get("id")
            if body.get("jsonrpc") != "2.0" or not isinstance(body.get("method"), str):
                raise RpcError(INVALID_REQUEST, 'a JSON-RPC 2.0 request has "jsonrpc": "2.0" and a "method"')
            if unproven is not None and body["method"] in ACTING:
                raise refusal(INVALID_REQUEST, unproven.error)
            params = body.get("params", {})
            if "id" not in body:  # a notification: done, but never answered, not even an error
                with contextlib.suppress(RpcError):
                    call = Call(None, params if isinstance(params, dict) else {}, request)
                    await method_of(body["method"], version)(tasks, call)
                return Response(b"", status_code=204)
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params is an object")
            return await method_of(body["method"], version)(tasks, Call(rpc_id, params, request))
        except RpcError as error:
            if unproven is not None and error.code in (PARSE_ERROR, INVALID_REQUEST) and error.status == 200:
                # Not even a request: whether it meant to act or read, an unproven sender learns nothing of it.
                error = refusal(error.code, unproven.error)
            return error_response(rpc_id, error, version)

    @get("/.well-known/agent-card.json", tags=["a2a"], responses=CARD)
    async def card() -> Response[bytes]:
        """The agent card, as A2A 1.0 reads it."""
        return _card(agent_card(base_url))

    @get("/.well-known/agent.json", tags=["a2a"], responses=CARD)
    async def card_0_3() -> Response[bytes]:
        """The agent card, as A2A 0.3 read it."""
        return _card(legacy_card(base_url))

    return [rpc, card, card_0_3]


class _Identified(msgspec.Struct):
    id: str | int | float | None = None


def _id_of(body: bytes) -> str | int | float | None:
    """A request's JSON-RPC id, if it is one that can be read from ``body``; else None."""
    try:
        return msgspec.json.decode(body, type=_Identified).id
    except (msgspec.DecodeError, RecursionError):
        return None


def _card(card: dict[str, Any]) -> Response[bytes]:
    # The card changes only when serve is upgraded (A2A 1.0 §8.6).
    return Response(msgspec.json.encode(card), media_type=MediaType.JSON, headers={"Cache-Control": "max-age=300"})
