"""The projector service: follows the ledger into the read models, one event at a time,
recording each view change with its position in one transaction."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import threading
from collections.abc import Callable, Sequence

from eventsourcing.persistence import Notification

from athenaeum.aggregates.application import AthenaeumApplication, MapperDeserialisationError
from athenaeum.events import Event, UnknownEventTag
from athenaeum.projectors.registry import PROJECTORS
from athenaeum.projectors.views import Change, project_all
from athenaeum.services.views.read_models import ReadModelStore

PROJECTION = "views"
log = logging.getLogger(__name__)


class ProjectionRunner:
    def __init__(
        self,
        app: AthenaeumApplication,
        store: ReadModelStore,
        on_change: Callable[[int, Sequence[Change]], None] = lambda position, changes: None,
    ) -> None:
        self.app = app
        self.store = store
        self.on_change = on_change
        self.position = store.position(PROJECTION) or 0
        self._lock = threading.Lock()
        # Readers waiting for a position, soonest first: (position, ticket, their loop, future).
        self._waiters: list[tuple[int, int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._tickets = itertools.count()
        self._subscription = app.recorder.subscribe(gt=self.position)
        self._thread = threading.Thread(target=self._run, name="athenaeum-projector", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> ProjectionRunner:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            with self._subscription:
                for notification in self._subscription:
                    event = self._decoded(notification)
                    changes = [] if event is None else self._project(event, notification.id)
                    applied = self.store.apply(PROJECTION, notification.id, changes)
                    self._advance(notification.id)
                    if applied:
                        self._publish(notification.id, changes)
        except BaseException as error:
            log.exception("the projector stopped")
            self.error = error
            self._advance(self.position)

    def _decoded(self, notification: Notification) -> Event | None:
        # History that does not decode is the audit's to report; the views move past it.
        try:
            return self.app.mapper.to_domain_event(notification)
        except (UnknownEventTag, MapperDeserialisationError):
            log.exception("position %d does not decode; the views skip it", notification.id)
            return None

    def _project(self, event: Event, position: int) -> list[Change]:
        # A projector is a pure fold: one that raises on an event would raise on it forever,
        # so it is skipped (the audit finds the view that misses it) rather than stopping
        # every view for good. The store's own errors still stop the runner.
        try:
            return project_all(PROJECTORS, event, self.store.get)
        except Exception:  # noqa: BLE001
            log.exception("a projector failed on %s at position %d; its changes are skipped", event.tag, position)
            return []

    def _publish(self, position: int, changes: Sequence[Change]) -> None:
        # The views are the record; a key the mirror missed is repaired by its next change, or
        # by the reconciliation at the next start.
        try:
            self.on_change(position, changes)
        except Exception:  # noqa: BLE001
            log.exception("could not mirror view changes")

    def _advance(self, position: int) -> None:
        with self._lock:
            self.position = position
            while self._waiters and (self._waiters[0][0] <= position or self.error is not None):
                _, _, loop, waiting = heapq.heappop(self._waiters)
                with contextlib.suppress(RuntimeError):  # its loop closed: nobody waits any more
                    loop.call_soon_threadsafe(_wake, waiting)

    async def reach(self, position: int, timeout: float) -> bool:
        """Whether the views reached ``position`` within ``timeout`` seconds. The caller's loop
        waits; no thread is held, so slow readers never starve anyone of workers."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.position >= position or self.error is not None:
                return self.position >= position
            waiter = (position, next(self._tickets), loop, loop.create_future())
            heapq.heappush(self._waiters, waiter)
        try:
            await asyncio.wait_for(waiter[3], timeout)
        except TimeoutError:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                    heapq.heapify(self._waiters)
        return self.position >= position

    def stop(self) -> bool:
        """Whether the runner ended (within a bounded wait)."""
        self._subscription.stop()
        self._thread.join(timeout=10)
        return not self._thread.is_alive()


def _wake(waiting: asyncio.Future[None]) -> None:
    if not waiting.done():  # a reader that gave up has cancelled it
        waiting.set_result(None)
