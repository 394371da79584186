"""What serve knows of its own health, for the gateway's ``/readyz`` and for ``/metrics``: whether
its NATS connection is up, whether the ledger's guard last verified the ledger's shape, and how
far the views lag behind the ledger. The gateway runs in serve's process and reads these as
they stand: a probe never asks NATS anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta

from nats.aio.client import Client

from athenaeum.services.queries.consistency import Ledger
from athenaeum.services.runtime.embedded import ServerSupervisor
from athenaeum.services.runtime.ledger_shape import LedgerGuard
from athenaeum.services.runtime.metrics import PROJECTOR_LAG_POSITIONS, PROJECTOR_LAG_SECONDS, TIMERS_DUE, TIMERS_OVERDUE
from athenaeum.services.timers.deadlines import Deadline
from athenaeum.services.timers.service import DEADLINES, SWEEP_GRACE
from athenaeum.services.views.projection import ProjectionRunner
from athenaeum.services.views.read_models import ReadModelStore

LAG_BOUND = 5.0  # seconds the views may lack an event of the ledger while serve says it is ready
LOOK_EVERY = 1.0  # seconds between looks at where the ledger's head stands
# Looks kept while the views are behind: past these (an hour of appends with the views stuck),
# later looks are not kept, so the lag may read short for a while once the views move again.
LOOKS_KEPT = 3600
log = logging.getLogger(__name__)


class ProjectorLag:
    """How far the views are behind the ledger, looked at every ``LOOK_EVERY`` seconds: one ask
    for the ledger's head (shared with the reads asking at the same moment), and while the views
    are behind it, one for the first event they lack. ``seconds`` is how long the ledger has
    held that event, as far as the looks tell (to within one look)."""

    def __init__(self, runner: ProjectionRunner, ledger: Ledger) -> None:
        self.runner = runner
        self.ledger = ledger
        self.positions = 0
        self.seconds = 0.0
        self._behind: deque[tuple[float, int]] = deque()  # (when, head) of looks that found the views behind

    async def follow(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.look()
            except Exception as error:  # noqa: BLE001  NATS away: the readiness says so; the next look tries again
                log.debug("could not look at the projector's lag: %r", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), LOOK_EVERY)  # a period, cut short by serve's stop

    async def look(self) -> None:
        head = await self.ledger.head()
        now, position = time.monotonic(), self.runner.position
        # Past the views' position there may be nothing but commands' markers, which no view reflects.
        lacking = await self.ledger.next_event(position) if head > position else None
        if lacking is None or lacking > head:
            self._behind.clear()
            self.positions, self.seconds = 0, 0.0
        else:
            while self._behind and self._behind[0][1] < lacking:  # looks from before the ledger held it
                self._behind.popleft()
            if not self._behind or (head > self._behind[-1][1] and len(self._behind) < LOOKS_KEPT):
                self._behind.append((now, head))
            self.positions, self.seconds = head - position, now - self._behind[0][0]
        PROJECTOR_LAG_POSITIONS.set(self.positions)
        PROJECTOR_LAG_SECONDS.set(self.seconds)


class Health:
    """serve's readiness: each check, and why it fails."""

    def __init__(self, nc: Client, guard: LedgerGuard, supervisor: ServerSupervisor | None = None,
                 lag: ProjectorLag | None = None) -> None:
        """``nc``: the services' connection; ``supervisor``: of the embedded server, if serve
        started one; ``lag``: of the projector, if this serve runs one."""
        self.nc = nc
        self.guard = guard
        self.supervisor = supervisor
        self.lag = lag

    def checks(self) -> dict[str, str | None]:
        """Each check by name: None when it passes, else why it does not."""
        checks = {"nats": self._nats(), "ledger": self._ledger()}
        if self.lag is not None:
            checks["projector"] = self._projector(self.lag)
        return checks

    def _nats(self) -> str | None:
        if self.supervisor is not None and self.supervisor.restarting:
            return "the embedded nats-server exited; serve is starting it again"
        return None if self.nc.is_connected else "not connected to NATS"

    def _ledger(self) -> str | None:
        if self.guard.drift is not None:
            return f"serve stops: {self.guard.drift}"
        return None if self.guard.verified else "the ledger's shape is not verified yet: its guard looks again"

    @staticmethod
    def _projector(lag: ProjectorLag) -> str | None:
        if lag.runner.error is not None:
            return f"the projector stopped: {lag.runner.error!r}"
        if lag.seconds > LAG_BOUND:
            return (f"the views lack an event the ledger has held for {lag.seconds:.0f}s "
                    f"({lag.positions} positions behind; the bound is {LAG_BOUND:g}s)")
        return None


def count_deadlines(store: ReadModelStore, clock: Callable[[], datetime]) -> Callable[[], None]:
    """Have the deadline gauges count, at each scrape, what the views say is due and overdue;
    what stops them counting (the views are going)."""
    def counter(deadline: Deadline, late_by: timedelta) -> Callable[[], int]:
        return lambda: sum(1 for _ in deadline.overdue(store, clock() - late_by))

    for family, deadline in DEADLINES.items():
        TIMERS_DUE.labels(family).set_function(counter(deadline, timedelta(0)))
        TIMERS_OVERDUE.labels(family).set_function(counter(deadline, SWEEP_GRACE))

    def stop_counting() -> None:
        TIMERS_DUE.clear()
        TIMERS_OVERDUE.clear()

    return stop_counting
