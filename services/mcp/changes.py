"""Telling readers that a record changed. Each resource follows its view's key in the views
bucket (``services/views/bucket.py``): a plain NATS subscription on the key's subject, which an
agent's own key may take (``identity.accounts``), so stdio serves with the agent's connection.

Clients of 2026-07-28 ask with ``subscriptions/listen`` (the SDK's ``ListenHandler`` serves the
stream; each listen gets a bus of its own, fed by its own subscriptions); earlier clients with
``resources/subscribe``, told over the connection while it lasts."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio
import mcp_types as types
import nats.errors
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from athenaeum.services.mcp.resources import Record, UnknownResource, record_of

MAX_WATCHED = 256  # records one listen, or one connection, follows at once
log = logging.getLogger(__name__)


async def watch(nc: Client, bucket: str, record: Record, changed: Callable[[str], Awaitable[None]]) -> Subscription:
    """Call ``changed(uri)`` whenever ``record``'s view changes."""

    async def on_change(_: Msg) -> None:
        await changed(record.uri)

    return await nc.subscribe(f"$KV.{bucket}.{record.watched}", cb=on_change)


async def _stop(subscription: Subscription) -> None:
    with contextlib.suppress(nats.errors.Error):  # a connection already closed holds no subscription
        await subscription.unsubscribe()


def _bounded(uris: Sequence[str]) -> None:
    if len(uris) > MAX_WATCHED:
        raise MCPError(types.INVALID_PARAMS, f"at most {MAX_WATCHED} resources are followed at once",
                       {"code": "invalid", "field": "uri", "message": f"over {MAX_WATCHED} resources"})


class Listening:
    """Serves ``subscriptions/listen``: the changes of the records named, for as long as it lasts.
    A URI that names no record is honoured and never fires, as the protocol says."""

    def __init__(self, nc: Client, bucket: str) -> None:
        self.nc, self.bucket = nc, bucket

    async def __call__(self, ctx: ServerRequestContext[Any, Any],
                       params: types.SubscriptionsListenRequestParams) -> types.SubscriptionsListenResult:
        uris = params.notifications.resource_subscriptions or []
        _bounded(uris)
        bus = InMemorySubscriptionBus()
        async with self._following(uris, bus):
            return await ListenHandler(bus)(ctx, params)

    @contextlib.asynccontextmanager
    async def _following(self, uris: Sequence[str], bus: InMemorySubscriptionBus) -> AsyncIterator[None]:
        async def changed(uri: str) -> None:
            await bus.publish(ResourceUpdated(uri))

        subscriptions = []
        try:
            for uri in uris:
                with contextlib.suppress(UnknownResource):
                    subscriptions.append(await watch(self.nc, self.bucket, record_of(uri), changed))
            yield
        finally:
            for subscription in subscriptions:
                await _stop(subscription)


class Subscriptions:
    """``resources/subscribe`` and ``unsubscribe`` (clients before 2026-07-28), by connection: a
    change is sent on the connection that subscribed, and a connection gone ends its own."""

    def __init__(self, nc: Client, bucket: str) -> None:
        self.nc, self.bucket = nc, bucket
        self._by_connection: dict[object, dict[str, Subscription]] = {}

    async def subscribe(self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
                        ) -> types.EmptyResult:
        connection = _connection(ctx)
        followed = self._by_connection.setdefault(connection, {})
        if params.uri in followed:
            return types.EmptyResult()
        _bounded([*followed, params.uri])
        try:
            record = record_of(params.uri)
        except UnknownResource as unknown:
            raise MCPError(types.INVALID_PARAMS, str(unknown),
                           {"code": "not_found", "field": "uri", "message": str(unknown)}) from None
        session = ctx.session

        async def changed(uri: str) -> None:
            try:
                await session.send_resource_updated(uri)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the connection is gone
                await self._forget(connection)

        followed[params.uri] = await watch(self.nc, self.bucket, record, changed)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
                          ) -> types.EmptyResult:
        subscription = self._by_connection.get(_connection(ctx), {}).pop(params.uri, None)
        if subscription is not None:
            await _stop(subscription)
        return types.EmptyResult()

    async def _forget(self, connection: object) -> None:
        for subscription in self._by_connection.pop(connection, {}).values():
            await _stop(subscription)

    async def close(self) -> None:
        for connection in list(self._by_connection):
            await self._forget(connection)


def _connection(ctx: ServerRequestContext[Any, Any]) -> object:
    """The connection a request came on: a session's requests each get a session object of their
    own, all on the one connection the SDK keeps (and exposes no other way)."""
    return ctx.session._connection  # noqa: SLF001
