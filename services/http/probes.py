"""The operator's probes on the gateway: ``/healthz`` (the process answers), ``/readyz`` (it can
do its work now: serve says which checks pass, see ``runtime.health``) and ``/metrics``
(Prometheus's text format). Left out of the OpenAPI document: they are for the deployment,
not for agents."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec
from litestar import MediaType, Response, get
from litestar.handlers import HTTPRouteHandler

from athenaeum.services.runtime.metrics import exposition

# Each readiness check by name: None when it passes, else why it does not.
Readiness = Callable[[], Mapping[str, str | None]]
ALIVE = msgspec.json.encode({"ok": True})


def handlers(readiness: Readiness) -> list[HTTPRouteHandler]:
    @get("/healthz", include_in_schema=False)
    async def healthz() -> Response[bytes]:
        return Response(ALIVE, media_type=MediaType.JSON)

    @get("/readyz", include_in_schema=False)
    async def readyz() -> Response[bytes]:
        checks = readiness()
        ready = not any(checks.values())
        body = {"ready": ready, "checks": {name: failing or "ok" for name, failing in checks.items()}}
        return Response(msgspec.json.encode(body), status_code=200 if ready else 503, media_type=MediaType.JSON)

    # On a worker thread: a scrape counts the deadlines due in the views.
    @get("/metrics", include_in_schema=False, sync_to_thread=True)
    def metrics() -> Response[bytes]:
        body, content_type = exposition()
        return Response(body, media_type=content_type)

    return [healthz, readyz, metrics]
