"""The HTTP face of Athenaeum, for agents with nothing but curl: every command at
``POST /commands/{family}/{verb}``, the reads, the arbitrator's task contract and A2A.

The gateway is a client of the NATS services like any other, so it runs wherever NATS is
reachable. Routes are generated from the one table of commands, and the OpenAPI document
(``/openapi.json``) from the same Structs the NATS service decodes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Annotated, Any, Literal

import msgspec
from litestar import Litestar, MediaType, Request, Response, get, post
from litestar.exceptions import HTTPException, ValidationException
from litestar.handlers import HTTPRouteHandler
from litestar.openapi import OpenAPIConfig
from litestar.params import Parameter
from nats.aio.client import Client

from athenaeum.aggregates.rules import SLUG
from athenaeum.events.constraints import AGENT_SLUG
from athenaeum.projectors.ratification_records import RECORDS
from athenaeum.services.http import a2a, probes, ui
from athenaeum.services.http import tasks as http_tasks
from athenaeum.services.http.openapi import SECURITY, contract
from athenaeum.services.http.common import (
    COMMAND_RESPONSES, MAX_BODY, READ_ERRORS, SENDS_COMMANDS, After, AgentHeader, Gateway, IdempotencyHeader,
    answer_response, body_refusal, error_response, reply_response, waiting_for,
)
from athenaeum.services.commands.replies import field_named
from athenaeum.services.commands.routes import EXPOSED, Route


AgentPath = Annotated[str, Parameter(schema_extra={"pattern": AGENT_SLUG})]  # checked here, with its message


def _command_route(route: Route, gateway: Gateway) -> HTTPRouteHandler:
    async def send(data: Any, request: Request, agent: Any = None, idempotency: Any = None) -> Response[bytes]:
        return reply_response(await gateway.send(request, data))  # it reads both headers itself

    send.__annotations__ = {"data": route.command, "request": Request, "agent": AgentHeader,
                            "idempotency": IdempotencyHeader, "return": Response[bytes]}
    send.__name__ = f"{route.group}_{route.verb}".replace("-", "_")
    return post(
        f"/commands/{route.group}/{route.verb}",
        status_code=200,
        tags=[route.group],
        summary=f"{route.group} {route.verb}",
        description=(route.command.__doc__ or "").strip() or None,
        responses=COMMAND_RESPONSES,
        opt=SENDS_COMMANDS,
    )(send)


def _reads(gateway: Gateway) -> list[HTTPRouteHandler]:
    @get("/check/{agent:str}", tags=["reads"], responses=READ_ERRORS)
    async def check(agent: AgentPath, after: After = None) -> Response[Any]:
        if not SLUG.fullmatch(agent):
            return error_response({"code": "invalid", "message": f"{agent!r} is not an agent slug", "field": "agent"})
        return answer_response(await gateway.query("check", agent=agent, **waiting_for(after)))

    @get("/ratifications/{topic:str}", tags=["reads"], responses=READ_ERRORS)
    async def ratification(topic: str, render: Literal[RECORDS] | None = None,  # type: ignore[valid-type]
                           after: After = None) -> Response[Any]:
        if render:
            return answer_response(await gateway.query("ratification.render", topic=topic, record=render, **waiting_for(after)))
        return answer_response(await gateway.query("ratification.show", topic=topic, **waiting_for(after)))

    @get("/proposals/{proposal_id:str}", tags=["reads"], responses=READ_ERRORS)
    async def proposal(proposal_id: str, after: After = None) -> Response[Any]:
        return answer_response(await gateway.query("quorum.show", proposal_id=proposal_id, **waiting_for(after)))

    @get("/threads/{slug:str}", tags=["reads"], responses=READ_ERRORS)
    async def thread(slug: str, render: bool = False, after: After = None) -> Response[Any]:
        name = "thread.render" if render else "thread.show"
        return answer_response(await gateway.query(name, slug=slug, **waiting_for(after)))

    @get("/pages/{path:path}", tags=["reads"], responses=READ_ERRORS)
    async def page(path: str, render: Literal["consensus"] | None = None, after: After = None) -> Response[Any]:
        name = "page.consensus" if render == "consensus" else "page.show"
        return answer_response(await gateway.query(name, page=path.lstrip("/"), **waiting_for(after)))

    @get("/ledger", tags=["reads"], responses=READ_ERRORS)
    async def ledger() -> Response[Any]:
        """The ledger's id, which a command signed by its sender's own key names."""
        return answer_response(await gateway.ledger())

    return [check, ratification, proposal, thread, page, ledger]


@get("/openapi.json", include_in_schema=False)
async def openapi_json(request: Request) -> Response[bytes]:
    document = request.app.state.get("openapi")
    if document is None:  # made once, on the first request: every route is known by then
        document = request.app.state.openapi = msgspec.json.encode(contract(request.app))
    return Response(document, media_type=MediaType.JSON)


def strict_requests(gateway: Gateway) -> Callable[[Request], Awaitable[Response[bytes] | None]]:
    """Before any route's handler: a route that sends a command refuses a sender who offers
    no proof, or a token never issued, first (401), before anything else is read of the request
    (see ``strict_request``)."""

    async def before(request: Request) -> Response[bytes] | None:
        if request.route_handler.opt.get("sends_commands") and (refused := await gateway.refused(request)) is not None:
            return reply_response(refused)
        return await strict_request(request)

    return before


async def strict_request(request: Request) -> Response[bytes] | None:
    """A query parameter the route does not take is refused, not ignored (``?stauts=`` would
    list every task); and bodies decode exactly as the NATS services decode commands. Litestar
    converts a body with ``strict=False``, which would take ``"3"`` for 3 and ``"true"`` for
    true; this runs before it and refuses such a body, naming the field."""
    parameters = request.route_handler.parsed_fn_signature.parameters
    queried = {(getattr(p.kwarg_definition, "query", None) or name) for name, p in parameters.items()
               if getattr(p.kwarg_definition, "header", None) is None}
    for name in request.query_params:
        if name not in queried or len(request.query_params.getall(name)) > 1:
            return error_response({"code": "invalid", "field": name, "message": f"?{name} is not a query parameter of "
                                   "this route, or is given twice"})
    data = parameters.get("data")
    if data is None:
        return None
    body = await request.body()
    if data.is_optional and not body.strip():
        return None
    refusal = body_refusal(body, data.annotation)
    return None if refusal is None else error_response(refusal)


def invalid_body(request: Request, error: ValidationException) -> Response[bytes]:
    """A body that is not the command: 400 with the error object, naming the field."""
    extra = [item for item in (error.extra if isinstance(error.extra, list) else []) if isinstance(item, dict)]
    detail = "; ".join(str(item.get("message", item)) for item in extra) or error.detail
    keyed = next((str(item["key"]) for item in extra if item.get("key") and item.get("key") != "data"), None)
    field = field_named(detail) or keyed
    return error_response({"code": "invalid", "message": f"the request is not valid: {detail}", "field": field})


def http_error(request: Request, error: HTTPException) -> Response[bytes]:
    """Framework errors (oversized or unreadable bodies, unknown routes) in the same shape; an
    oversized body is invalid input like any other, so a 400 naming the limit."""
    if error.status_code == 413:
        return error_response({"code": "invalid", "message": f"the body is over {MAX_BODY} bytes", "field": "body"})
    code = {404: "not_found", 405: "invalid"}.get(error.status_code, "invalid" if error.status_code < 500 else "unavailable")
    message = str(error.detail)
    if error.status_code == 404 and message == "Not Found":  # no route matched, or a path part is of the wrong kind
        path = request.url.path
        message = f"no route for {request.method} {path}; the routes are in /openapi.json"
        if path.startswith("/tasks/"):
            message += " (task ids and review cycles are integers)"
    body = msgspec.json.encode({"ok": False, "error": {"code": code, "message": message}})
    # A 405's Allow header names the methods the path takes.
    return Response(body, status_code=error.status_code, media_type=MediaType.JSON, headers=error.headers)


def create_app(nc: Client, base_url: str, readiness: probes.Readiness,
               trusted: frozenset[str] = frozenset()) -> Litestar:
    """``readiness``: serve's checks, for ``/readyz``; ``trusted``: the addresses whose
    ``X-Agent-Name`` is taken without proof (see ``Gateway``)."""
    gateway = Gateway(nc, trusted=trusted)
    handlers: list[Any] = [_command_route(route, gateway) for route in EXPOSED]
    handlers += _reads(gateway)
    handlers += http_tasks.handlers(gateway)
    handlers += a2a.handlers(gateway, base_url)
    handlers.append(openapi_json)
    handlers += ui.handlers(gateway)
    handlers += probes.handlers(readiness)
    # Imported here: the MCP SDK takes over a second to import, which the command line (importing
    # serve, and so this module) should not wait for on every verb.
    from athenaeum.services.mcp.http import McpMount

    mcp = McpMount(nc)  # MCP over streamable HTTP at /mcp, its sessions kept by the app's lifespan
    handlers.append(mcp.handler())
    return Litestar(
        lifespan=[mcp.lifespan],
        route_handlers=handlers,
        template_config=ui.templates(),
        before_request=strict_requests(gateway),
        exception_handlers={ValidationException: invalid_body, HTTPException: http_error},
        request_max_body_size=MAX_BODY,
        logging_config=None,  # serve's own log (services/runtime/logs.py), not one of Litestar's making
        # An agent bound to a key sends its token (athenaeum agent token NAME); see the README.
        openapi_config=OpenAPIConfig(title="Athenaeum", version=metadata.version("athenaeum"), components=SECURITY),
    )
