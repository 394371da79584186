"""A live subscription to an application's notifications.

It pulls with direct gets, like eventsourcing's LISTEN/NOTIFY subscriptions on PostgreSQL:
a core NATS subscription on the event subjects wakes it as soon as anything is appended,
and a short poll covers what a wake-up cannot (an append seen before its batch commits, a
reconnect). A lost connection is retried until ``resume_timeout`` runs out, then the
iterator raises a clear error instead of waiting forever.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from eventsourcing.persistence import ListenNotifySubscription, OperationalError

if TYPE_CHECKING:
    from nats.aio.msg import Msg

    from athenaeum.services.jetstream.recorders import JetStreamApplicationRecorder

POLL_INTERVAL = 0.25
RESUME_TIMEOUT = 30.0


class JetStreamSubscription(ListenNotifySubscription["JetStreamApplicationRecorder"]):
    def __init__(
        self,
        recorder: JetStreamApplicationRecorder,
        gt: int | None = None,
        topics: Sequence[str] = (),
        resume_timeout: float = RESUME_TIMEOUT,
    ) -> None:
        self.resume_timeout = resume_timeout
        self._stopped = threading.Event()
        connection = recorder.connection
        self._wake_up = connection.run(
            connection.client.nc.subscribe(recorder.log.subjects.events, cb=self._on_append)
        )
        self._connection = connection
        super().__init__(recorder=recorder, gt=gt, topics=topics)

    async def _on_append(self, msg: Msg) -> None:
        notified = getattr(self, "_has_been_notified", None)
        if notified is not None:
            notified.set()

    def stop(self) -> None:
        if not self._stopped.is_set():
            self._stopped.set()
            if not self._connection.client.nc.is_closed:
                self._connection.run(self._wake_up.unsubscribe())
        super().stop()

    def _loop_on_pull(self) -> None:
        try:
            self._pull()
            while not self._has_been_stopped:
                self._has_been_notified.wait(timeout=POLL_INTERVAL)
                self._pull()
        except BaseException as error:  # handed to the iterating thread by __next__
            if self._thread_error is None:
                self._thread_error = error
            self.stop()

    def _pull(self) -> None:
        lost_since: float | None = None
        while True:
            try:
                super()._pull()
                return
            except OperationalError as error:
                lost_since = lost_since or time.monotonic()
                if time.monotonic() - lost_since > self.resume_timeout:
                    raise OperationalError(
                        f"subscription gave up after {self.resume_timeout:.0f}s without NATS: {error}"
                    ) from error
                if self._stopped.wait(POLL_INTERVAL):
                    return
