"""A live subscription to an application's notifications.

It pulls with direct gets, like eventsourcing's LISTEN/NOTIFY subscriptions on PostgreSQL:
a core NATS subscription on the event subjects wakes it as soon as anything is published.
A batch's messages are published before the stream commits them, so a wake-up that finds
nothing new pulls again after a few milliseconds; a slow poll covers what no wake-up reports
(a reconnect). A lost connection is retried until ``resume_timeout`` runs out, then the
iterator raises a clear error instead of waiting forever.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from queue import Empty

from eventsourcing.persistence import ApplicationRecorder, ListenNotifySubscription, Notification, OperationalError, ShutDown
from nats.aio.msg import Msg

from athenaeum.services.jetstream.connection import Connection
from athenaeum.services.jetstream.log import StreamLog
from athenaeum.services.jetstream.notifications import scan

POLL_INTERVAL = 0.25
# After a wake-up that found nothing: an atomic batch commits within milliseconds of its
# last message being published.
COMMIT_WAITS = (0.002, 0.01, 0.05)
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
        self._wake_up = None if pace is not None else connection.run(
            connection.client.nc.subscribe(log.subjects.events, cb=self._on_append))
        self._connection = connection
        self._log = log
        super().__init__(recorder=recorder, gt=gt, topics=topics)

    async def _on_append(self, msg: Msg) -> None:
        # The wake-up subscription exists before the base class creates this event, so that
        # nothing appended between the first pull and the subscription goes unnoticed.
        notified = getattr(self, "_has_been_notified", None)
        if notified is not None:
            notified.set()

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
            more = self._notifications[self._notifications_index:self._notifications_index + limit - len(taken)]
            self._notifications_index += len(more)
            taken += more
        return taken

    def stop(self) -> None:
        try:
            if not self._stopped.is_set():
                self._stopped.set()
                if self._wake_up is not None and not self._connection.client.nc.is_closed:
                    self._connection.run(self._wake_up.unsubscribe())
        finally:
            super().stop()

    def _loop_on_pull(self) -> None:
        try:
            self._pull()
            while not self._has_been_stopped:
                woken = self._has_been_notified.wait(timeout=self._pace or POLL_INTERVAL)
                before = self._last_notification_id
                self._pull()
                for pause in COMMIT_WAITS if woken else ():
                    if self._last_notification_id != before or self._stopped.wait(pause):
                        break
                    self._pull()
        except BaseException as error:  # handed to the iterating thread by __next__
            if self._thread_error is None:
                self._thread_error = error
            self.stop()

    def _pull(self) -> None:
        lost_since: float | None = None
        while True:
            try:
                self._pull_batches()
                return
            except OperationalError as error:
                lost_since = lost_since or time.monotonic()
                if time.monotonic() - lost_since > self.resume_timeout:
                    raise OperationalError(
                        f"subscription gave up after {self.resume_timeout:.0f}s without NATS: {error}"
                    ) from error
                if self._stopped.wait(POLL_INTERVAL):
                    return

    def _pull_batches(self) -> None:
        """eventsourcing's pull, except that the subscription moves on past what it looked at,
        not only past what matched its topics: one following rare topics would otherwise read
        the same tail of the stream again at every wake-up."""
        while not self._has_been_stopped:
            self._has_been_notified.clear()
            notifications, looked_at = self._connection.run(
                scan(self._log, self._last_notification_id or 0, self._select_limit, None, self._topics, False))
            if notifications:
                try:
                    self._notifications_queue.put(notifications)
                except ShutDown:
                    return
            self._last_notification_id = max(self._last_notification_id or 0, looked_at) or None
            if len(notifications) < self._select_limit:
                return
