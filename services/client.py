"""The Python client: send commands to Athenaeum over NATS.

``AthenaeumClient`` is async; ``SyncClient`` wraps it for scripts. Both give every command a
``command_id`` when the caller did not. A retry is safe when it carries the same id: set one on
the command, or take it from the ``Unreachable`` that a lost reply raises.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import msgspec
import nats
import nats.errors
from nats.aio.client import Client

from athenaeum.events.commands import Command
from athenaeum.services.command_service import ACTOR_HEADER
from athenaeum.services.query_service import QUERY_PREFIX
from athenaeum.services.replies import Reply, decode
from athenaeum.services.routes import ROUTES

_routes = {route.command: route for route in ROUTES}


class Unreachable(ConnectionError):
    """No Athenaeum server or command service answers. ``command_id`` is the id the command
    went with, if it went: send it again with that id, and it is applied at most once."""

    def __init__(self, message: str, command_id: str | None = None) -> None:
        super().__init__(message)
        self.command_id = command_id


class AthenaeumClient:
    def __init__(self, nc: Client, actor: str, timeout: float = 10.0) -> None:
        self.nc = nc
        self.actor = actor
        self.timeout = timeout

    @classmethod
    async def connect(cls, url: str, actor: str, timeout: float = 10.0) -> AthenaeumClient:
        try:
            # Within ``timeout``, so a command line says "unreachable" now; meanwhile, and once
            # connected, a node that goes away is replaced by another of the cluster's. A
            # command sent while reconnecting goes out once connected again: its command_id
            # makes it apply at most once, however often it is sent.
            nc = await asyncio.wait_for(
                nats.connect(
                    servers=url.split(","),  # a cluster: several URLs, comma-separated
                    connect_timeout=timeout,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.25,
                    error_cb=_quiet,
                ),
                timeout,
            )
        except (asyncio.TimeoutError, nats.errors.Error, OSError) as error:
            raise Unreachable(f"cannot reach Athenaeum's NATS at {url}: {error!r}") from error
        return cls(nc, actor, timeout)

    async def send(self, command: Command) -> Reply:
        """Send ``command`` as this client's actor; the reply says accepted or which rule broke."""
        route = _routes[type(command)]
        if command.command_id is None:
            command = msgspec.structs.replace(command, command_id=uuid.uuid4().hex)
        try:
            msg = await self.nc.request(
                route.subject, msgspec.json.encode(command), timeout=self.timeout, headers={ACTOR_HEADER: self.actor}
            )
        except nats.errors.NoRespondersError as error:
            raise Unreachable("no Athenaeum command service is running") from error
        except nats.errors.TimeoutError as error:
            raise Unreachable(f"no reply within {self.timeout}s (command_id {command.command_id!r})",
                              command.command_id) from error
        except nats.errors.MaxPayloadError as error:
            return Reply.rejected("invalid", f"the command is over the server's message size limit: {error}", "body")
        except nats.errors.Error as error:  # the connection is gone, perhaps after the command went
            raise Unreachable(f"the connection to Athenaeum's NATS is lost (command_id {command.command_id!r}): "
                              f"{error!r}", command.command_id) from error
        return decode(msg.data)

    async def query(self, name: str, **fields: Any) -> dict[str, Any]:
        """Ask a read model (``ratification.show``, ``check``); ``after=position`` waits for
        the views to reach that position first."""
        subject = f"{QUERY_PREFIX}.{name}"
        try:
            msg = await self.nc.request(subject, msgspec.json.encode(fields), timeout=self.timeout)
        except nats.errors.NoRespondersError as error:
            raise Unreachable(f"nothing answers the query {name!r}: no such query, or no query service running") from error
        except nats.errors.TimeoutError as error:
            raise Unreachable(f"no answer within {self.timeout}s") from error
        except nats.errors.Error as error:
            raise Unreachable(f"the connection to Athenaeum's NATS is lost: {error!r}") from error
        return msgspec.json.decode(msg.data)

    async def close(self) -> None:
        try:
            await self.nc.close()
        except (nats.errors.Error, OSError):  # a connection already broken has nothing to flush
            pass

    async def __aenter__(self) -> AthenaeumClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class SyncClient:
    """The same client for synchronous code: one private event loop."""

    def __init__(self, url: str, actor: str, timeout: float = 10.0) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._client = self._loop.run_until_complete(AthenaeumClient.connect(url, actor, timeout))
        except BaseException:
            self._loop.close()
            raise

    def send(self, command: Command) -> Reply:
        return self._loop.run_until_complete(self._client.send(command))

    def query(self, name: str, **fields: Any) -> dict[str, Any]:
        return self._loop.run_until_complete(self._client.query(name, **fields))

    def close(self) -> None:
        try:
            self._loop.run_until_complete(self._client.close())
        finally:
            # What nats-py leaves when closed mid-reconnect ends here, not in a warning.
            if left := asyncio.all_tasks(self._loop):
                for task in left:
                    task.cancel()
                self._loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            self._loop.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


async def _quiet(error: Exception) -> None:
    """Failures reach the caller as exceptions; nats-py need not print them too."""
