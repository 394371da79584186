"""The server's refusals of what a connection may not publish, told to the requests waiting on
them. nats-server answers a publish the principal has no permission for with a permissions
violation at once, and keeps the connection; nats-py reports it only through its error
callback, so without this the request would wait out its whole timeout for a reply that
cannot come."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager

# nats-py lowercases the server's -ERR line: nats: permissions violation for publish to "subject"
_PUBLISH_REFUSED = re.compile(r'permissions violation for publish to "?([^"\s]+)"?')


class NotPermitted(PermissionError):
    """The server refused to let this connection's principal publish on ``subject``."""

    def __init__(self, subject: str) -> None:
        super().__init__(f"Athenaeum's NATS refused it: the principal this key connects as has no permission to "
                         f"publish to {subject!r} (the auditor's key reads, never sends commands): "
                         "send it as a registered principal with its own key (--as NAME, or --key FILE)")
        self.subject = subject


class Refusals:
    """Requests waiting, by subject, for the server to refuse them."""

    def __init__(self) -> None:
        self._waiting: dict[str, set[asyncio.Future[None]]] = {}

    def told(self, error: Exception) -> bool:
        """Fail the requests waiting on the subject ``error`` (from nats-py's error callback)
        says was refused; whether it was such a refusal."""
        refused = _PUBLISH_REFUSED.search(str(error))
        if refused is None:
            return False
        for waiting in self._waiting.get(refused.group(1), ()):
            if not waiting.done():
                waiting.set_exception(NotPermitted(refused.group(1)))
        return True

    @contextmanager
    def watching(self, subject: str) -> Iterator[asyncio.Future[None]]:
        """A future that fails with ``NotPermitted`` if the server refuses a publish on ``subject``
        while it is watched."""
        waiting: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        key = subject.lower()  # as nats-py gives it
        self._waiting.setdefault(key, set()).add(waiting)
        try:
            yield waiting
        finally:
            self._waiting[key].discard(waiting)
            if not self._waiting[key]:
                del self._waiting[key]
            if not waiting.done():
                waiting.cancel()
            elif not waiting.cancelled():
                waiting.exception()  # retrieved: a refusal nobody awaited is no "never retrieved" warning
