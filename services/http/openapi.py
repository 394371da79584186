"""The OpenAPI document at ``/openapi.json``: Litestar's, from the routes, with every request
body's schema as msgspec generates it from the Struct the route decodes. So the document says
exactly what a body must be: no unknown field (``additionalProperties: false``), each field's
pattern, enum and limit, and the bounds the rules check (see ``events.constraints``).

Every POST sends a command, which needs a credential (a bearer token, or a signature: see the
README); reads need none, and ``/a2a`` takes a token for the methods that send commands."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar
from litestar.openapi.spec import Components, SecurityScheme
from litestar.routes import HTTPRoute

BEARER = "bearer"
SECURITY = Components(security_schemes={BEARER: SecurityScheme(type="http", scheme="bearer")})
_TOKEN: list[dict[str, list[str]]] = [{BEARER: []}]
_ANYONE: list[dict[str, list[str]]] = []
_EITHER: list[dict[str, list[str]]] = [{BEARER: []}, {}]  # A2A: reads are anyone's, its commands need a token
A2A_PATH = "/a2a"


def contract(app: Litestar) -> dict[str, Any]:
    document = app.openapi_schema.to_schema()
    paths: dict[str, dict[str, Any]] = document["paths"]
    bodies: list[tuple[dict[str, Any], Any]] = []
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or route.path_format not in paths:
            continue
        for handler in route.route_handlers:
            data = handler.parsed_fn_signature.parameters.get("data")
            for method in handler.http_methods:
                operation = paths[route.path_format].get(method.lower())
                if operation is None:
                    continue
                operation["security"] = _security(route.path_format, method)
                if data is not None and "requestBody" in operation:
                    bodies.append((operation["requestBody"], data.annotation))
    refs, components = msgspec.json.schema_components(
        [annotation for _, annotation in bodies], ref_template="#/components/schemas/{name}")
    for (body, _), ref in zip(bodies, refs):
        body["content"]["application/json"]["schema"] = ref
    document.setdefault("components", {}).setdefault("schemas", {}).update(components)
    return document


def _security(path: str, method: str) -> list[dict[str, list[str]]]:
    if path == A2A_PATH:
        return _EITHER
    return _TOKEN if method == "POST" else _ANYONE
