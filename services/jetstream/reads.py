"""Batched direct gets: one request, the stored messages streamed back to an inbox.

All reads share one wildcard inbox. A reply's ``Nats-Last-Sequence`` names the previous
message on the filter, so a batch whose replies were cut (a reconnect mid-read) is noticed
and refused instead of silently returning a read with a hole.
"""

from __future__ import annotations

import asyncio

from eventsourcing.persistence import OperationalError
from nats.aio.client import Client
from nats.aio.msg import Msg

from athenaeum.services.jetstream.messages import Stored, stored

# Bytes per batch: under the server's per-client pending limit even with reads in parallel.
MAX_BATCH_BYTES = 4 * 1024 * 1024


class PendingRead:
    def __init__(self, start: int) -> None:
        self.start = start
        self.messages: list[Stored] = []
        # (status, more may follow) once the server ends the batch
        self.finished: asyncio.Future[tuple[str, bool]] = asyncio.get_running_loop().create_future()

    def receive(self, msg: Msg) -> None:
        headers = msg.headers or {}
        status = headers.get("Status")
        previous = headers.get("Nats-Last-Sequence")
        if previous is not None and self._lost_replies_before(int(previous)):
            self.finished.set_exception(
                OperationalError(f"a direct get from sequence {self.start} lost replies; read again")
            )
        elif status is None:
            self.messages.append(stored(msg))
        else:
            # 204 ends a batch (with how many remain), 404 means nothing matched.
            more = status == "204" and headers.get("Nats-Num-Pending", "0") != "0"
            self.finished.set_result((status, more))

    def _lost_replies_before(self, previous: int) -> bool:
        if self.messages:
            return previous != self.messages[-1].seq
        return previous >= self.start  # the first reply follows a message before the start

    def abandon(self, reason: str) -> None:
        if not self.finished.done():
            self.finished.set_exception(OperationalError(reason))


class ReadReplies:
    """The shared inbox and the reads waiting on it."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.pending: dict[str, PendingRead] = {}
        self._next = 0

    @classmethod
    async def open(cls, nc: Client) -> ReadReplies:
        replies = cls(nc.new_inbox())
        await nc.subscribe(f"{replies.prefix}.*", cb=replies.route)
        return replies

    def expect(self, start: int) -> tuple[str, PendingRead]:
        self._next += 1
        reply = f"{self.prefix}.{self._next}"
        pending = self.pending[reply] = PendingRead(start)
        return reply, pending

    def forget(self, reply: str) -> None:
        self.pending.pop(reply, None)

    def abandon_all(self, reason: str) -> None:
        """A disconnect may have dropped replies: every read in flight must start again."""
        for pending in self.pending.values():
            pending.abandon(reason)

    async def route(self, msg: Msg) -> None:
        pending = self.pending.get(msg.subject)
        if pending is not None and not pending.finished.done():  # else the reader left
            pending.receive(msg)
