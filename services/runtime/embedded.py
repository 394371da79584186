"""serve's embedded nats-server, kept as the services need it: admitting the roster's keys as
they change, and started again when it exits.

serve supervises the server it started (DESIGN.md §13). When the server exits, however it
exits (a crash, an OOM kill, ``kill -9``), serve starts it again on the same store, port and
configuration, accounts included, and the services carry on: their connections reconnect by
themselves, and the ledger's guard verifies the ledger's shape again at once. The tries are
few and backed off, each said on stderr; if none succeeds within ``RESTART_WITHIN``, serve
stops with a non-zero exit that says why, for whatever supervises serve to start it whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import replace

from athenaeum.aggregates.fleet import Fleet
from athenaeum.services.identity.accounts import admitted
from athenaeum.services.jetstream.subscription import RESUME_TIMEOUT
from athenaeum.services.runtime.metrics import NATS_RESTARTS
from athenaeum.services.runtime.nats_binary import NatsServerError
from athenaeum.services.runtime.nats_server import READY_TIMEOUT, NatsServer

RESTART_WAITS = (0.0, 0.5, 1.0, 2.0, 4.0)  # seconds before each try: the first at once
# The services following the ledger wait RESUME_TIMEOUT for NATS before they give up: a server
# not back well within it is not coming back soon enough, and serve is better started whole.
RESTART_WITHIN = min(READY_TIMEOUT, RESUME_TIMEOUT * 2 / 3)
DROP_GRACE = 1.0  # seconds a key no longer bound stays admitted: for the answer to what unbound it
log = logging.getLogger(__name__)


def admitting(server: NatsServer) -> Callable[[Fleet | None], Awaitable[None]]:
    """What tells ``server`` the roster's keys, once the handler has a new roster. A new key is
    admitted at once, before its registration is answered; one no longer bound is dropped a
    moment later, so that the answer to its own rotation or revocation still reaches it (the
    command service refuses whatever it sends meanwhile)."""
    turn, latest = asyncio.Lock(), [frozenset[str]()]
    pending: set[asyncio.Task[None]] = set()

    async def reload(keys: frozenset[str]) -> None:
        async with turn:
            if server.accounts is not None:  # a server not running takes them when it starts again
                try:
                    await asyncio.to_thread(server.reload, replace(server.accounts, agents=keys))
                # It runs on with the keys it had: the ledger is not at stake.
                except (NatsServerError, OSError) as error:
                    log.error("the NATS server kept its previous accounts: %s", error)

    async def drop_later() -> None:
        await asyncio.sleep(DROP_GRACE)
        await reload(latest[0])

    async def admit(roster: Fleet | None) -> None:
        latest[0] = keys = admitted(roster)
        assert server.accounts is not None
        await reload(server.accounts.agents | keys)
        if not keys >= server.accounts.agents:
            task = asyncio.create_task(drop_later())
            pending.add(task)
            task.add_done_callback(pending.discard)

    return admit


class ServerSupervisor:
    """Watches the embedded server's process and starts it again when it exits."""

    def __init__(self, server: NatsServer, stop: asyncio.Event, on_restart: Callable[[], None]) -> None:
        """``stop``: serve's, set when the server cannot be started again (and by whoever
        stops serve, after which an exit is not a crash); ``on_restart``: called once a
        restarted server is ready."""
        self.server = server
        self.stop = stop
        self.on_restart = on_restart
        self.restarting = False
        self.failure: str | None = None  # why serve stops, once the server could not be started again
        self._task: asyncio.Task[None] | None = None

    def watch(self) -> ServerSupervisor:
        self._task = asyncio.create_task(self._watching())
        return self

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _watching(self) -> None:
        while not self.stop.is_set():
            # A thread waits for the process to end: nothing polls, and an exit is seen at once.
            code = await asyncio.to_thread(self.server.wait)
            if self.stop.is_set():
                return  # stopped by serve itself, on its way out
            self.restarting = True
            try:
                await self._restart(_exit_of(code))
            finally:
                self.restarting = False

    async def _restart(self, how: str) -> None:
        loop = asyncio.get_running_loop()
        began, tries, error = loop.time(), len(RESTART_WAITS), None
        for attempt, wait in enumerate(RESTART_WAITS, 1):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), wait)  # a pause that serve's stop cuts short
            left = RESTART_WITHIN - (loop.time() - began)
            if self.stop.is_set() or left <= 0:
                break
            log.warning("the NATS server %s; starting it again on port %d (try %d of %d)",
                        how, self.server.port, attempt, tries)
            try:
                await asyncio.to_thread(self.server.start, left)
            except (NatsServerError, OSError) as failed:  # OSError: its binary gone, say
                error = failed
                log.warning("try %d of %d to start the NATS server failed: %s", attempt, tries, failed)
                continue
            NATS_RESTARTS.inc()
            log.warning("the NATS server runs again on port %d; the services reconnect", self.server.port)
            self.on_restart()
            return
        if self.stop.is_set():
            return
        self.failure = (f"the embedded NATS server {how} and could not be started again "
                        f"(tried for {loop.time() - began:.0f}s): {error}")
        log.error("serve stops: %s", self.failure)
        self.stop.set()


def _exit_of(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"
