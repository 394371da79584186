"""The projector service: follows the ledger into the read models, recording the view changes
of the events it reads with their position in one transaction.

The events read together (those that came while the last were applied, up to ``BATCH``) are
applied together: each sees the views as the ones before it left them, and each document they
change is written once, at the position of the last. The documents the runner reads and writes
are kept in memory while it is the views' only writer, which each write checks (it claims the
views at the position the runner last recorded); a replica's write in between makes it forget
them and apply those events one at a time, on the views as they are."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import threading
from collections.abc import Callable, Sequence

import msgspec
from eventsourcing.persistence import Notification

from athenaeum.aggregates.application import AthenaeumApplication, MapperDeserialisationError
from athenaeum.events import Event, UnknownEventTag
from athenaeum.projectors.registry import PROJECTORS
from athenaeum.projectors.views import Change, Document, Lookup, overlaid, project_all
from athenaeum.services.jetstream.entries import Unreadable, held_as
from athenaeum.services.jetstream.subscription import JetStreamSubscription
from athenaeum.services.views.kept import KeptDocuments
from athenaeum.services.views.read_models import ReadModelStore, Written

PROJECTION = "views"
BATCH = 250  # events applied in one transaction at most: a read waiting for the first waits for them all
log = logging.getLogger(__name__)
Decoded = tuple[int, Event | None]  # an event at its position; None: one that does not decode


class ViewsUnreadable(Exception):
    """The read models could not be read: the store's failure, which stops the runner as its
    failure to write does, not a projector's, which skips one event."""


class ProjectionRunner:
    def __init__(
        self,
        app: AthenaeumApplication,
        store: ReadModelStore,
        on_change: Callable[[int, Sequence[Written]], None] = lambda position, changes: None,
    ) -> None:
        self.app = app
        self.store = store
        self.on_change = on_change
        self.position = store.position(PROJECTION) or 0
        # Where this runner last recorded the views, and documents as they stand there.
        self._recorded = self.position
        self._documents = KeptDocuments()
        self._lock = threading.Lock()
        # Readers waiting for a position, soonest first: (position, ticket, their loop, future).
        self._waiters: list[tuple[int, int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._tickets = itertools.count()
        self._subscription: JetStreamSubscription = app.recorder.subscribe(gt=self.position)  # type: ignore[assignment]
        self._thread = threading.Thread(target=self._run, name="athenaeum-projector", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> ProjectionRunner:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            with self._subscription:
                for notification in self._subscription:
                    self._apply([notification, *self._subscription.ready(BATCH - 1)])
        except BaseException as error:
            log.exception("the projector stopped")
            self.error = error
            self._advance(self.position)

    def _apply(self, notifications: Sequence[Notification]) -> None:
        """The notifications' changes, recorded together at the last one's position unless
        another writer moved the views since this runner last recorded them."""
        # Those a replica applied already (the views were last seen past them) are passed over:
        # the views hold them, and the rest are applied on those views.
        unapplied = [(notification.id, self._decoded(notification)) for notification in notifications
                     if notification.id > self._recorded]
        if not unapplied:
            self._advance(notifications[-1].id)
            return
        changed: dict[tuple[str, str], Change] = {}
        lookup = overlaid(changed, self._document)  # each event on the views as the ones before left them
        for position, event in unapplied:
            for change in self._project(event, position, lookup):
                changed[(change.view, change.key)] = change
        position, written = unapplied[-1][0], [Written.of(change) for change in changed.values()]
        if not self.store.apply(PROJECTION, position, written, after=self._recorded):
            self._documents.clear()  # a replica wrote: they may be out of date
            self._apply_each(unapplied)
            return
        self._recorded = position
        for change, stored in zip(changed.values(), written):
            self._documents.put(change.view, change.key, change.document, len(stored.json or b""))
        self._advance(position)
        self._publish(position, written)

    def _apply_each(self, events: Sequence[Decoded]) -> None:
        """One at a time, each on the views as they are, as replicas sharing them do: an event
        another got to first is passed over."""
        for position, event in events:
            written = [Written.of(change) for change in self._project(event, position, self._read)]
            applied = self.store.apply(PROJECTION, position, written)
            self._advance(position)
            if applied:
                self._publish(position, written)
        self._recorded = self.store.position(PROJECTION) or 0

    def _document(self, view: str, key: str) -> Document | None:
        kept = self._documents.get(view, key)
        if kept is not None:
            return kept.document
        stored = self._stored(view, key)
        document = _parsed(stored)
        self._documents.put(view, key, document, len(stored or ""))
        return document

    def _read(self, view: str, key: str) -> Document | None:
        return _parsed(self._stored(view, key))

    def _stored(self, view: str, key: str) -> str | None:
        try:
            return self.store.stored(view, key)
        except Exception as error:  # noqa: BLE001  sqlite3.Error, psycopg.Error
            raise ViewsUnreadable(f"reading {view} {key!r}: {error!r}") from error

    def _decoded(self, notification: Notification) -> Event | None:
        # History that does not decode, or that the ledger cannot hold where it is stored (an
        # event of another aggregate, say), is the audit's to report; the views move past it,
        # as a command's load of the aggregate does.
        try:
            event = self.app.mapper.to_domain_event(notification)
            return held_as(event, notification.topic, (notification.originator_id, notification.originator_version))
        except (UnknownEventTag, MapperDeserialisationError):
            log.exception("position %d does not decode; the views skip it", notification.id)
        except Unreadable as unreadable:
            log.error("position %d is no event the ledger can hold there (%s: %s); the views skip it",
                      notification.id, unreadable.code, unreadable.message)
        return None

    def _project(self, event: Event | None, position: int, lookup: Lookup) -> list[Change]:
        # A projector is a pure fold: one that raises on an event would raise on it forever,
        # so it is skipped (the audit finds the view that misses it) rather than stopping
        # every view for good. The store's own errors still stop the runner.
        if event is None:
            return []
        try:
            return project_all(PROJECTORS, event, lookup)
        except ViewsUnreadable:
            raise
        except Exception:  # noqa: BLE001
            log.exception("a projector failed on %s at position %d; its changes are skipped", event.tag, position)
            return []

    def _publish(self, position: int, changes: Sequence[Written]) -> None:
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


def _parsed(stored: str | None) -> Document | None:
    return None if stored is None else msgspec.json.decode(stored)


def _wake(waiting: asyncio.Future[None]) -> None:
    if not waiting.done():  # a reader that gave up has cancelled it
        waiting.set_result(None)
