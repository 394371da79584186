"""The projector service: follows the ledger into the read models, one event at a time,
recording each view change with its position in one transaction."""

from __future__ import annotations

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
        self._advanced = threading.Condition()
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
                    with self._advanced:
                        self.position = notification.id
                        self._advanced.notify_all()
                    if applied:
                        self._publish(notification.id, changes)
        except BaseException as error:
            log.exception("the projector stopped")
            self.error = error
            with self._advanced:
                self._advanced.notify_all()

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

    def wait_for(self, position: int, timeout: float) -> bool:
        """Whether the views reached ``position`` within ``timeout`` seconds."""
        with self._advanced:
            return self._advanced.wait_for(lambda: self.position >= position or self.error is not None, timeout) and (
                self.position >= position
            )

    def stop(self) -> bool:
        """Whether the runner ended (within a bounded wait)."""
        self._subscription.stop()
        self._thread.join(timeout=10)
        return not self._thread.is_alive()
