"""One NATS connection per infrastructure factory, shared by its recorders."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from eventsourcing.persistence import ProgrammingError

from athenaeum.services.jetstream.client import JetStreamClient, StreamFacts
from athenaeum.services.jetstream.loop import LoopThread

T = TypeVar("T")


class Settings(NamedTuple):
    """How to connect: what another process needs to connect as this one does."""

    urls: Sequence[str]
    timeout: float
    name: str
    key: Path | None = None


def closed() -> ProgrammingError:
    return ProgrammingError("this JetStream infrastructure factory is closed")


class Connection:
    """The loop thread, the client on it, and the streams known to exist."""

    def __init__(self, urls: Sequence[str], timeout: float, name: str, key: Path | None = None) -> None:
        self.settings = Settings(urls, timeout, name, key)
        self._loop = LoopThread()
        try:
            self.client = self._loop.run(JetStreamClient.connect(urls, timeout, name, key))
        except BaseException:
            self._loop.close()
            raise
        self._streams: dict[str, StreamFacts] = {}  # known to exist

    def run(self, coroutine: Coroutine[Any, Any, T], lasting: bool = False) -> T:
        """``coroutine``'s result, run on the connection's loop (``lasting``: see ``LoopThread.run``)."""
        if self._loop.loop.is_closed():
            coroutine.close()
            raise closed()
        return self._loop.run(coroutine, lasting)

    def call_soon(self, callback: Callable[[], object]) -> None:
        self._loop.call_soon(callback)

    def ensure_stream(self, config: dict[str, object], create: bool = True, keeps_history: bool = True) -> StreamFacts:
        """What the stream is, once it is known to exist as Athenaeum needs it."""
        name = str(config["name"])
        if name not in self._streams:
            self._streams[name] = self.run(self.client.ensure_stream(config, create, keeps_history))
        return self._streams[name]

    def __del__(self) -> None:
        # eventsourcing closes no factory it makes for a projection's view: like its SQL
        # datastores, a connection nothing uses any more closes itself. Without waiting: the
        # collector runs this on whatever thread it happens to, a loop's own included.
        loop = getattr(self, "_loop", None)
        if loop is not None and loop.running:
            loop.stop_soon(self.client.close())

    def close(self) -> None:
        if self._loop.running:
            self._loop.finish_operations(grace=self.client.timeout)
            self.run(self.client.close())
        self._loop.close()
