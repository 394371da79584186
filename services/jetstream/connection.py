"""One NATS connection per infrastructure factory, shared by its recorders."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from typing import Any, Generic, TypeVar

from eventsourcing.persistence import ProgrammingError

from athenaeum.services.jetstream.client import JetStreamClient
from athenaeum.services.jetstream.loop import LoopThread

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")

_STREAM_NAME = re.compile(r"^[A-Za-z0-9_-]{1,200}$")


class LRU(Generic[K, V]):
    """A bounded map; touched only from the loop thread, so it needs no lock."""

    def __init__(self, maxsize: int) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._maxsize = maxsize

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self._maxsize:
            self._items.popitem(last=False)

    def forget(self, key: K) -> None:
        self._items.pop(key, None)


def stream_config(name: str, replicas: int, *, immutable: bool) -> dict[str, object]:
    if not _STREAM_NAME.match(name):
        raise ProgrammingError(
            f"ATHENAEUM_STREAM: {name!r} is not a stream name (letters, digits, '-' and '_' only)"
        )
    return {
        "name": name,
        "subjects": [f"{name}.>"],
        "storage": "file",
        "retention": "limits",
        "num_replicas": replicas,
        "allow_atomic": True,
        "allow_direct": True,
        "deny_delete": immutable,
        "deny_purge": immutable,
    }


class Connection:
    """The loop thread, the client on it, and the streams known to exist."""

    def __init__(self, urls: Sequence[str], timeout: float, name: str) -> None:
        self._loop = LoopThread()
        try:
            self.client = self._loop.run(JetStreamClient.connect(urls, timeout, name))
        except BaseException:
            self._loop.close()
            raise
        self._ensured: set[str] = set()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._loop.run(coroutine)

    def ensure_stream(self, config: dict[str, object]) -> None:
        name = str(config["name"])
        if name not in self._ensured:
            self.run(self.client.ensure_stream(config))
            self._ensured.add(name)

    def close(self) -> None:
        if not self._loop.loop.is_closed():
            self._loop.finish_operations(grace=self.client.timeout)
            self.run(self.client.close())
            self._loop.close()
