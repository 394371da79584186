"""The HTTP gateway inside ``athenaeum serve``: uvicorn on a socket bound before the ready
line, so ``--http 127.0.0.1:0`` gets a free port that the ready line and serve.json name."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import uvicorn
from nats.aio.client import Client

from athenaeum.services.http.app import create_app
from athenaeum.services.http.probes import Readiness


class _EmbeddedServer(uvicorn.Server):
    """``serve`` owns the process's signals; uvicorn must not take them over."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class HttpServer:
    def __init__(self, nc: Client, address: str, readiness: Readiness, trusted: frozenset[str] = frozenset()) -> None:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--http: {address!r} is not HOST:PORT")
        try:
            self.socket = socket.create_server((host, int(port)))
        except OSError as error:
            raise OSError(f"cannot serve HTTP on {address}: {error.strerror or error}") from error
        bound_host, bound_port = self.socket.getsockname()[:2]
        self.url = f"http://{bound_host}:{bound_port}"
        # Open event streams are cut after a short grace when serve stops.
        config = uvicorn.Config(create_app(nc, self.url, readiness, trusted), log_level="warning", log_config=None, lifespan="on",
                                timeout_graceful_shutdown=2)
        self.server = _EmbeddedServer(config)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> HttpServer:
        self._task = asyncio.create_task(self.server.serve(sockets=[self.socket]))
        while not self.server.started:  # bounded by uvicorn's own start-up, which raises on failure
            if self._task.done():
                await self._task
            await asyncio.sleep(0.01)
        return self

    async def stop(self) -> None:
        self.server.should_exit = True
        if self._task is not None:
            await asyncio.wait([self._task], timeout=10)
        self.socket.close()
