"""The checkpoint writer: runs in the command service's process (never in clients), follows
the ledger, and every N events appends a ``LedgerCheckpoint`` with the running digest; and
one more at shutdown. Replicas race on the checkpoints' versions: one wins, the others agree."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.rules import Context, Stamp
from athenaeum.aggregates.state import AggregateState, fold
from athenaeum.events import Event
from athenaeum.events.ledger import CHECKPOINTS_ID, LedgerCheckpoint
from athenaeum.services.commands.handler import utc_now
from athenaeum.services.audit.digest import Digest

DEFAULT_EVERY = 1000
WRITER = "athenaeum-ledger"
log = logging.getLogger(__name__)


class Checkpoints(AggregateState, tag="Checkpoints"):
    count: int
    position: int
    sha256: str


def evolve(state: Checkpoints | None, event: Event) -> Checkpoints | None:
    if isinstance(event, LedgerCheckpoint):
        return Checkpoints(id=event.originator_id, version=event.originator_version, count=event.count,
                           position=event.position, sha256=event.sha256)
    return state


project = fold(evolve)


class CheckpointWriter:
    def __init__(
        self, app: AthenaeumApplication, every: int = DEFAULT_EVERY, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.app = app
        self.every = every
        self.clock = clock  # the services' clock, so checkpoints keep time with the events
        last = self._last()
        self.digest = Digest(last.sha256, last.count, last.position) if last else Digest()
        self.written = last.count if last else 0
        self._subscription = app.recorder.subscribe(gt=self.digest.position)
        self._thread = threading.Thread(target=self._run, name="athenaeum-checkpoints", daemon=True)

    def start(self) -> CheckpointWriter:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._subscription.stop()
        self._thread.join(timeout=10)
        if not self._thread.is_alive() and self.digest.count > self.written:
            self._write()  # at shutdown: whatever came since the last one

    def _run(self) -> None:
        try:
            with self._subscription:
                for notification in self._subscription:
                    self.digest.update(notification.id, str(notification.originator_id),
                                       notification.originator_version, notification.topic, notification.state)
                    if self.digest.count % self.every == 0:
                        self._write()
        except Exception:  # noqa: BLE001  the ledger is away; the next start resumes from the last checkpoint
            log.exception("the checkpoint writer stopped")

    def _write(self) -> None:
        last = self._last()
        if last is not None and last.count >= self.digest.count:
            if last.count == self.digest.count and last.sha256 != self.digest.sha256:
                log.error("checkpoint %d disagrees with this replica's digest: history differs", last.count)
            self.written = last.count
            return
        context = Context(actor=WRITER, now=self.clock(), command_id=f"checkpoint:{self.digest.count}")
        checkpoint = Stamp(CHECKPOINTS_ID, last.version if last else 0, context)(
            LedgerCheckpoint, count=self.digest.count, position=self.digest.position, sha256=self.digest.sha256
        )
        try:
            self.app.save(checkpoint)
        except IntegrityError:
            return  # another replica wrote this version first; the next write looks again
        self.written = self.digest.count

    def _last(self) -> Checkpoints | None:
        try:
            return self.app.repository.get(CHECKPOINTS_ID, projector_func=project)
        except AggregateNotFoundError:
            return None
