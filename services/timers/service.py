"""The timer service: deadlines as JetStream message schedules, turned into expiry commands.

Schedules live in their own stream (``<stream>_TIMERS``): a schedule on
``<T>.schedule.<family>.<key>`` fires once, at its time, into ``<T>.fire.<family>.<key>``, even
if the server was down when it came due; publishing it again replaces it. The service schedules
a deadline when it sees the event that sets it (a ratification's freeze, a proposal's opening,
a page's revision, an agent's activity), consumes fired timers with a durable consumer, and
sends the deadline's idempotent command. At start it also sweeps for anything already due, so
a lost timer can never leave a vote open.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from datetime import datetime, timedelta, timezone

from eventsourcing.persistence import Notification
from nats.aio.client import Client
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig
from nats.errors import TimeoutError as NatsTimeout
from nats.js.errors import BadRequestError, NotFoundError

from athenaeum.aggregates.application import AthenaeumApplication, MapperDeserialisationError
from athenaeum.aggregates.rules import ceil_second
from athenaeum.events import UnknownEventTag, family_id
from athenaeum.services.commands.handler import CommandHandler, utc_now
from athenaeum.services.commands.credentials import SERVICE, TIMER_ACTOR
from athenaeum.services.timers.aging import DORMANCY, PAGE_AGING, approvals_offered, reassessment
from athenaeum.services.timers.deadlines import PROPOSAL, RATIFICATION, Deadline
from athenaeum.services.views.projection import PROJECTION as VIEWS_PROJECTION
from athenaeum.services.jetstream.client import STREAM_NAME_IN_USE, patiently
from athenaeum.services.jetstream.subscription import JetStreamSubscription
from athenaeum.services.jetstream.subjects import escape, unescape
from athenaeum.services.views.read_models import ReadModelStore

# A message schedule counts nanoseconds since 1970 in 64 bits: one set past April 2262 fires at
# once, and would be set again and fire again without end. The rules refuse such deadlines;
# history from before they did is left to the start-up sweep.
SCHEDULES_END = datetime(2262, 1, 1, tzinfo=timezone.utc)
# Readiness windows run in days; a page made ready by the clock is offered within this.
READINESS_SWEEP_EVERY = timedelta(minutes=15)
# What a lost schedule missed (its publish failed while the timers stream had no leader) is
# met by a sweep of what the views say is overdue, twice a minute; one late by less than
# SWEEP_GRACE is still its schedule's to meet.
OVERDUE_SWEEP_EVERY = timedelta(seconds=30)
SWEEP_GRACE = timedelta(seconds=10)
SCHEDULE_RETRY_WAITS = (0.5, 1.0, 2.0, 4.0)  # seconds between tries to set one schedule
VIEWS_CATCH_UP = 60.0  # seconds a sweep waits for the views before it skips its turn
PROJECTION = "timers"
FOLLOW_PACE = 0.2  # seconds between reads of the ledger for the deadlines it sets
KEEP_POSITION_EVERY = 1.0  # seconds between records of where those reads reached
DEADLINES: dict[str, Deadline] = {deadline.family: deadline for deadline in (RATIFICATION, PROPOSAL, PAGE_AGING, DORMANCY)}
log = logging.getLogger(__name__)


class TimerService:
    def __init__(
        self, nc: Client, handler: CommandHandler, app: AthenaeumApplication, store: ReadModelStore, workers: Executor,
        stream: str = "ATHENAEUM", replicas: int = 1,
    ) -> None:
        """``handler``: on this loop, where it sends the deadlines' commands; ``app``: the ledger
        followed for the events that set deadlines; ``stream`` and ``replicas``: the ledger's,
        whose timers these are."""
        self.nc = nc
        self.js = nc.jetstream()
        self.handler = handler
        self.app = app
        self.store = store
        self.workers = workers
        self.stream = f"{stream}_TIMERS"
        self.replicas = replicas
        self._stop = threading.Event()
        self._scheduled: dict[tuple[str, str], datetime] = {}  # (family, key) -> due, this process's
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> TimerService:
        config = StreamConfig(name=self.stream, subjects=[f"{self.stream}.>"], allow_msg_schedules=True,
                              num_replicas=self.replicas)
        try:
            await patiently(lambda: self.js.add_stream(config), NatsTimeout, f"creating {self.stream}")
        except BadRequestError as error:
            if error.err_code != STREAM_NAME_IN_USE:
                raise
            await self.js.update_stream(config)  # made by an older version, with other replicas
        loop = asyncio.get_running_loop()
        await self.sweep()
        self._tasks = [asyncio.create_task(self._fire()), asyncio.create_task(self._schedule(loop)),
                       asyncio.create_task(self._every(READINESS_SWEEP_EVERY, self._sweep_readiness_once,
                                                       "sweeping pages' readiness for approval")),
                       asyncio.create_task(self._every(OVERDUE_SWEEP_EVERY, self._sweep_late,
                                                       "sweeping deadlines a lost schedule missed"))]
        return self

    async def stop(self) -> None:
        self._stop.set()
        for task in self._tasks:
            task.cancel()
        # Bounded: a cancellation that lands inside nats-py's fetch can be swallowed there;
        # the loop then sees the stop flag within one fetch timeout.
        await asyncio.wait(self._tasks, timeout=5)

    async def sweep(self, late_by: timedelta = timedelta(0)) -> None:
        """Meet every deadline due ``late_by`` ago or earlier."""
        now = self.handler.clock() - late_by
        for deadline in DEADLINES.values():
            for key in await asyncio.to_thread(list, deadline.overdue(self.store, now)):
                if self._stop.is_set():
                    return
                try:
                    await self.expire(deadline, key)
                except Exception:  # noqa: BLE001  one that cannot be met must not hold up the rest
                    log.exception("expiring %s %s", deadline.family, key)

    async def expire(self, deadline: Deadline, key: str) -> datetime | None:
        """Send the deadline's command; None once it is met, else when it is still due."""
        aggregate = deadline.aggregate(key)
        command = await asyncio.to_thread(deadline.command, key, await self.handler.load(aggregate), self.store)
        reply = await self.handler.send(command, TIMER_ACTOR, SERVICE)
        if not reply.ok:
            log.warning("expiring %s %s: %s", deadline.family, key, reply.error)
            if reply.error is not None and reply.error.code == "not_found":
                return None
        return await asyncio.to_thread(deadline.next_due, key, await self.handler.load(aggregate), self.store)

    async def schedule(self, family: str, aggregate_id: str, at: datetime) -> None:
        token = escape(aggregate_id)
        # Schedules fire by the server's clock; an injected clock (tests, demos) is offset from it.
        real = at.astimezone(timezone.utc) - (self.handler.clock() - utc_now())
        if real >= SCHEDULES_END:
            log.error("cannot schedule %s %s at %s: the start-up sweep is its only timer", family, aggregate_id, at)
            return
        when = ceil_second(real).strftime("%Y-%m-%dT%H:%M:%SZ")  # idempotent on a rounded time
        await self.js.publish(
            f"{self.stream}.schedule.{family}.{token}",
            b"",
            headers={"Nats-Schedule": f"@at {when}", "Nats-Schedule-Target": f"{self.stream}.fire.{family}.{token}"},
        )

    async def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        """Follow the ledger and schedule every deadline an event sets. Deadlines are days or
        hours away: the ledger is read a batch at a time (``FOLLOW_PACE``), and where it was read
        to is kept every so often (``KEEP_POSITION_EVERY``; setting a schedule again only
        replaces it, so a restart may read a little again)."""
        recorder = self.app.recorder
        subscription = JetStreamSubscription(recorder, recorder.connection, recorder.log,  # type: ignore[attr-defined]
                                             gt=self.store.position(PROJECTION), pace=FOLLOW_PACE)

        def follow() -> None:
            kept, position = time.monotonic(), None
            with subscription:
                for notification in subscription:
                    self._deadlines_of(loop, notification)
                    position = notification.id
                    if time.monotonic() - kept > KEEP_POSITION_EVERY:
                        self.store.apply(PROJECTION, position, [])
                        kept, position = time.monotonic(), None
                    if self._stop.is_set():
                        break
            if position is not None:
                self.store.apply(PROJECTION, position, [])

        try:
            await loop.run_in_executor(self.workers, follow)
        finally:
            subscription.stop()

    def _deadlines_of(self, loop: asyncio.AbstractEventLoop, notification: Notification) -> None:
        try:
            event = self.app.mapper.to_domain_event(notification)
        except (UnknownEventTag, MapperDeserialisationError):
            log.exception("position %d does not decode: no deadline read from it", notification.id)
            return
        for deadline in DEADLINES.values():
            if (due := deadline.due(event, self.store.get)) is not None:
                try:
                    self._schedule_one(loop, deadline, *due)
                except Exception:  # noqa: BLE001  the start-up sweep still meets it
                    log.exception("scheduling %s %s", deadline.family, due[0])

    def _schedule_one(self, loop: asyncio.AbstractEventLoop, deadline: Deadline, key: str, due: datetime) -> None:
        previous = self._scheduled.get((deadline.family, key))
        if previous is not None and previous <= due < previous + deadline.slack:
            return  # close enough to the schedule already set
        try:
            when = ceil_second(due.astimezone(timezone.utc))
        except (OverflowError, ValueError):
            # History the rules would refuse today; one bad deadline must not stop every timer.
            log.error("cannot schedule %s %s at %s: the start-up sweep is its only timer", deadline.family, key, due)
            return
        for pause in (*SCHEDULE_RETRY_WAITS, None):  # setting it again only replaces it
            try:
                asyncio.run_coroutine_threadsafe(self.schedule(deadline.family, key, when), loop).result(timeout=30)
                break
            except Exception:  # noqa: BLE001  the timers stream between leaders, say
                if pause is None or self._stop.wait(pause):
                    raise
        self._scheduled[(deadline.family, key)] = due

    async def _every(self, period: timedelta, sweep: Callable[[], Awaitable[None]], what: str) -> None:
        while not self._stop.is_set():
            try:
                await sweep()
            except Exception:  # noqa: BLE001  the next sweep tries again
                log.exception(what)
            await asyncio.sleep(period.total_seconds())  # a period, not a wait on a condition

    async def _sweep_late(self) -> None:
        if await asyncio.to_thread(self._views_caught_up):
            await self.sweep(SWEEP_GRACE)

    async def _sweep_readiness_once(self) -> None:
        """Reassess every page whose readiness for approval the clock changed."""
        if not await asyncio.to_thread(self._views_caught_up):
            return
        pages, offered = await asyncio.to_thread(approvals_offered, self.store)
        activity, now = await asyncio.to_thread(self.handler.activity), self.handler.clock()
        for key in pages:
            state = await self.handler.load(family_id("page", key))
            command = reassessment(key, state, activity.members, offered, now)
            if command is not None and not (reply := await self.handler.send(command, TIMER_ACTOR, SERVICE)).ok:
                log.warning("reassessing %s: %s", key, reply.error)

    def _views_caught_up(self) -> bool:
        """Whether the views reached the ledger's head as it was when asked (waited for, within
        a bound). A sweep compares the rules with the views: on views still replaying (at
        start-up, or a projector of its own lagging) it would act on what is on its way, or
        take active agents for idle ones."""
        head = self.app.recorder.max_notification_id() or 0
        deadline = time.monotonic() + VIEWS_CATCH_UP
        while (self.store.position(VIEWS_PROJECTION) or 0) < head:
            if self._stop.wait(0.5) or time.monotonic() > deadline:  # poll interval of a bounded wait
                return False
        return True

    async def _fire(self) -> None:
        consumer = ConsumerConfig(durable_name="athenaeum-timer", ack_policy=AckPolicy.EXPLICIT)
        pull = await self.js.pull_subscribe(f"{self.stream}.fire.>", durable="athenaeum-timer", config=consumer)
        while not self._stop.is_set():
            try:
                fired = await pull.fetch(batch=10, timeout=1)
            except (asyncio.TimeoutError, NotFoundError):
                continue
            except Exception as error:  # noqa: BLE001  a reconnect; the durable consumer keeps our place
                log.debug("timer fetch: %r", error)
                await asyncio.sleep(0.5)
                continue
            for message in fired:
                family, token = message.subject.rsplit(".", 2)[1:]
                deadline = DEADLINES.get(family)
                if deadline is None:  # a family this version does not know; its own sweep repairs it
                    await message.term()
                    continue
                key = unescape(token)
                try:
                    still_due = await self.expire(deadline, key)
                except Exception:  # noqa: BLE001  the ledger is unreachable: the timer comes back
                    log.exception("expiring %s %s", family, key)
                    await message.nak(delay=1)
                    continue
                if still_due is not None and still_due > self.handler.clock() + timedelta(seconds=1):
                    # Due later than this timer said (an agent acted since): schedule it again.
                    await self.schedule(deadline.family, key, still_due)
                    still_due = None
                # Still due now: this clock is a little behind the server's, or the command was
                # refused for a while (a conflict): try again, backing off up to five minutes.
                attempts = message.metadata.num_delivered or 1
                await (message.ack() if still_due is None else message.nak(delay=min(300, 2 ** min(attempts, 9))))
