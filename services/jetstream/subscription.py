"""A live subscription to an application's notifications.

It pulls with direct gets, like eventsourcing's LISTEN/NOTIFY subscriptions on PostgreSQL:
a core NATS subscription on the stream's subjects wakes it as soon as anything is published.
The pulls run on the recorder's own loop, where the wake-ups arrive, and hand what they read
to the iterating thread: no thread of their own between a wake-up and its pull. An atomic
batch is stored when its last message (an event, a command's marker or a tracking record)
commits it, so only that message wakes the pull; it may still be published before the stream
commits, so a wake-up that finds nothing new pulls again after a few milliseconds. A slow poll
covers what no wake-up reports (a reconnect). A lost connection is retried until
``resume_timeout`` runs out, then the iterator raises a clear error instead of waiting forever.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from queue import Empty, Full

from eventsourcing.persistence import ApplicationRecorder, ListenNotifySubscription, Notification, OperationalError, ShutDown
from nats.aio.msg import Msg

from athenaeum.services.jetstream.connection import Connection, closed
from athenaeum.services.jetstream.log import StreamLog
from athenaeum.services.jetstream.notifications import scan

POLL_INTERVAL = 0.25
# After a wake-up that found nothing: an atomic batch commits within milliseconds of its
# last message being published (on one node, staging it costs the server about 3 ms).
COMMIT_WAITS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.05)
BATCH_ID = "Nats-Batch-Id"
BATCH_COMMIT = "Nats-Batch-Commit"
RESUME_TIMEOUT = 30.0


class JetStreamSubscription(ListenNotifySubscription[ApplicationRecorder]):
    def __init__(
        self,
        recorder: ApplicationRecorder,
        connection: Connection,
        log: StreamLog,
        gt: int | None = None,
        topics: Sequence[str] = (),
        resume_timeout: float = RESUME_TIMEOUT,
        pace: float | None = None,
    ) -> None:
        """``connection`` and ``log``: the recorder's, which this reads from directly. ``pace``:
        for a follower that need not be woken by each append (the timers' look for deadlines),
        seconds between pulls, each of all that came meanwhile."""
        self.resume_timeout = resume_timeout
        self._stopped = threading.Event()
        self._pace = pace
        self._connection = connection
        self._log = log
        self._woken = asyncio.Event()  # set on the loop, by a wake-up or by ``stop``
        # Set when the iterating thread takes from a full queue the follower waits to fill.
        self._room = asyncio.Event()
        self._awaiting_room = False
        self._wake_up = None if pace is not None else connection.run(
            connection.client.nc.subscribe(log.subjects.all, cb=self._on_append))
        super().__init__(recorder=recorder, gt=gt, topics=topics)

    async def _on_append(self, msg: Msg) -> None:
        # A batch's messages before its last cannot be read before it commits: the last one,
        # whatever its subject, wakes the pull. (The subscription exists before the first
        # pull, so that nothing appended in between goes unnoticed.)
        headers = msg.headers
        if not headers or BATCH_ID not in headers or BATCH_COMMIT in headers:
            self._woken.set()

    def __next__(self) -> Notification:
        taking = self._notifications_index == len(self._notifications)  # the next list, off the queue
        notification = super().__next__()
        if taking:
            self._took()
        return notification

    def _took(self) -> None:
        if self._awaiting_room:
            self._connection.call_soon(self._room.set)

    def ready(self, limit: int) -> list[Notification]:
        """Up to ``limit`` more notifications that were read already, without waiting for any:
        a follower then applies those that came together in one go."""
        taken: list[Notification] = []
        while len(taken) < limit:
            if self._notifications_index == len(self._notifications):
                try:
                    self._notifications = self._notifications_queue.get_nowait()
                except (Empty, ShutDown):
                    break
                self._notifications_queue.task_done()
                self._notifications_index = 0
                self._took()
            more = self._notifications[self._notifications_index:self._notifications_index + limit - len(taken)]
            self._notifications_index += len(more)
            taken += more
        return taken

    def stop(self) -> None:
        try:
            if not self._stopped.is_set():
                self._stopped.set()
                self._connection.call_soon(self._end_waits)  # without waiting: from any loop
                if self._wake_up is not None and not self._connection.client.nc.is_closed:
                    self._connection.run(self._wake_up.unsubscribe())
        finally:
            super().stop()

    def _end_waits(self) -> None:
        self._woken.set()
        self._room.set()

    def _loop_on_pull(self) -> None:
        """The base class's pull thread: it waits while the pulls run on the loop."""
        try:
            self._connection.run(self._follow(), lasting=True)
        except BaseException as error:  # handed to the iterating thread by __next__
            if isinstance(error, asyncio.CancelledError) and not self._stopped.is_set():
                error = closed()  # the factory closed under it, cancelling what ran on its loop
            if self._thread_error is None:
                self._thread_error = error
            self.stop()

    async def _follow(self) -> None:
        await self._pull()
        while not self._stopped.is_set():
            woken = await self._wait(self._woken, self._pace or POLL_INTERVAL)
            before = self._last_notification_id
            await self._pull()
            for pause in COMMIT_WAITS if woken else ():
                if self._last_notification_id != before or self._stopped.is_set():
                    break
                await self._wait(self._woken, pause)  # a batch's last message ends the pause
                await self._pull()

    @staticmethod
    async def _wait(event: asyncio.Event, timeout: float) -> bool:
        """Whether ``event`` was set within ``timeout`` seconds."""
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def _pull(self) -> None:
        lost_since: float | None = None
        while True:
            try:
                await self._pull_batches()
                return
            except OperationalError as error:
                lost_since = lost_since or time.monotonic()
                if time.monotonic() - lost_since > self.resume_timeout:
                    raise OperationalError(
                        f"subscription gave up after {self.resume_timeout:.0f}s without NATS: {error}"
                    ) from error
                if self._stopped.is_set():
                    return
                self._woken.clear()  # a wake-up before the loss says nothing of when NATS is back
                await self._wait(self._woken, POLL_INTERVAL)

    async def _pull_batches(self) -> None:
        """eventsourcing's pull, except that the subscription moves on past what it looked at,
        not only past what matched its topics: one following rare topics would otherwise read
        the same tail of the stream again at every wake-up."""
        while not self._stopped.is_set():
            self._woken.clear()
            notifications, looked_at = await scan(
                self._log, self._last_notification_id or 0, self._select_limit, None, self._topics, False)
            if notifications and not await self._hand_over(notifications):
                return
            self._last_notification_id = max(self._last_notification_id or 0, looked_at) or None
            if len(notifications) < self._select_limit:
                return

    async def _hand_over(self, notifications: list[Notification]) -> bool:
        """Queue ``notifications`` for the iterating thread, waiting (without holding up the
        loop) while it is behind, until it takes from the queue; False once the subscription
        is stopped."""
        while True:
            try:
                self._notifications_queue.put_nowait(notifications)
                return True
            except ShutDown:
                return False
            except Full:
                self._room.clear()
                self._awaiting_room = True  # the iterating thread taking from now on says so
                if self._notifications_queue.full():  # else it took since the put: put again
                    await self._wait(self._room, POLL_INTERVAL)
                self._awaiting_room = False
