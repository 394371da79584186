"""Telling readers that a record changed. Each resource follows its view's key in the views
bucket (``services/views/bucket.py``): a plain NATS subscription on the key's subject, which an
agent's own key may take (``identity.accounts``), so stdio serves with the agent's connection.

Clients of 2026-07-28 ask with ``subscriptions/listen`` (the SDK's ``ListenHandler`` serves the
stream; each listen gets a bus of its own, fed by its own subscriptions); earlier clients with
``resources/subscribe``, told over the connection while it lasts."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

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
    """``resources/subscribe`` and ``unsubscribe`` (clients before 2026-07-28). A change is sent
    on the connection that subscribed; its subscriptions end with it (the SDK unwinds each
    connection's exit stack when it closes)."""

    def __init__(self, nc: Client, bucket: str) -> None:
        self.nc, self.bucket = nc, bucket

    async def subscribe(self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
                        ) -> types.EmptyResult:
        followed = self._followed(ctx)
        if params.uri in followed:
            return types.EmptyResult()
        _bounded([*followed, params.uri])
        try:
            record = record_of(params.uri)
        except UnknownResource as unknown:
            raise MCPError(types.INVALID_PARAMS, str(unknown),
                           {"code": "not_found", "field": "uri", "message": str(unknown)}) from None
        followed[params.uri] = await watch(self.nc, self.bucket, record, ctx.session.send_resource_updated)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
                          ) -> types.EmptyResult:
        subscription = self._followed(ctx).pop(params.uri, None)
        if subscription is not None:
            await _stop(subscription)
        return types.EmptyResult()

    def _followed(self, ctx: ServerRequestContext[Any, Any]) -> dict[str, Subscription]:
        """The connection's subscriptions by URI. The SDK hands a request its connection only
        through the request's session, which keeps it private."""
        connection = ctx.session._connection  # noqa: SLF001
        followed: dict[str, Subscription] | None = connection.state.get(_FOLLOWED)
        if followed is None:
            followed = connection.state[_FOLLOWED] = {}

            async def end() -> None:
                for subscription in followed.values():
                    await _stop(subscription)

            connection.exit_stack.push_async_callback(end)
        return followed


_FOLLOWED = "athenaeum.followed"  # the connection's state: its subscriptions by URI
