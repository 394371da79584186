"""Live updates for the web page: a server-sent event each time a view changes, from a watch of
the views bucket (``views.bucket``), naming the view's key and the ledger position it reflects.
The page then reads itself again; nothing about a record travels on the stream, so a page
shows only what its own reads may show (never a vote before the tally)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import msgspec
from litestar import get
from litestar.handlers import HTTPRouteHandler
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage
from nats.js.api import DeliverPolicy

from athenaeum.services.http.common import Gateway
from athenaeum.services.views.bucket import BUCKET
from athenaeum.services.views.bucket_entries import POSITION

KEEPALIVE_SECONDS = 15.0  # a comment line this often: an idle stream is not cut, a closed one is noticed
WATCH_FORGOTTEN = 30.0  # seconds after the page goes away that the server drops the watch


def handler(gateway: Gateway) -> HTTPRouteHandler:
    @get("/ui/events", include_in_schema=False)
    async def events() -> ServerSentEvent:
        """``changed`` events, ``{"key": "<view>.<key>", "position": N}``, from now on."""
        return ServerSentEvent(_changes(gateway))

    return events


async def _changes(gateway: Gateway) -> AsyncIterator[ServerSentEventMessage]:
    changed: asyncio.Queue[ServerSentEventMessage] = asyncio.Queue()
    prefix = f"$KV.{BUCKET}."

    async def tell(msg) -> None:  # type: ignore[no-untyped-def]
        body = {"key": msg.subject.removeprefix(prefix), "position": int((msg.headers or {}).get(POSITION, 0) or 0)}
        changed.put_nowait(ServerSentEventMessage(event="changed", data=msgspec.json.encode(body).decode()))

    # Headers alone, from now on: the page has read what was there when it loaded.
    subscription = await gateway.nc.jetstream().subscribe(
        f"{prefix}>", cb=tell, ordered_consumer=True, deliver_policy=DeliverPolicy.NEW, headers_only=True,
        inactive_threshold=WATCH_FORGOTTEN)
    try:
        yield ServerSentEventMessage(event="ready", data="{}")
        while True:
            try:
                yield await asyncio.wait_for(changed.get(), KEEPALIVE_SECONDS)
            except asyncio.TimeoutError:
                yield ServerSentEventMessage(data=None, comment="keep-alive")
    finally:
        with contextlib.suppress(Exception):  # the connection may be closing: serve is stopping
            await subscription.unsubscribe()
