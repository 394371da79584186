"""The five steps every command takes: load, decide, append with the command's marker,
retry a lost race, reply. Synchronous: it runs on a worker thread, never on an event loop."""

from __future__ import annotations

import copy
import hashlib
import random
import threading
import time
import uuid
from weakref import WeakValueDictionary
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, NamedTuple

import msgspec
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError, OperationalError

from athenaeum.aggregates import fleet
from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.page_consensus import Member
from athenaeum.aggregates.rules import Context, NotFound, RuleViolation
from athenaeum.aggregates.state import fold
from athenaeum.events import Event
from athenaeum.events.fleet import FLEET_ID
from athenaeum.events.commands import Command
from athenaeum.services.jetstream.log import FINGERPRINT, CommandAlreadyApplied, CommandRecord
from athenaeum.services.jetstream.messages import Stored
from athenaeum.services.commands.replies import NO_EVENTS, Reply, encode_events

Decide = Callable[[Any, Context], list[Event]]
Project = Callable[[Any, Any], Any]
ATTEMPTS = 8
BACKOFF = 0.002  # seconds: the first lost race's longest pause
project_fleet = fold(fleet.evolve)


class Activity(NamedTuple):
    """The fleet's agents with their last activity, and the ledger position that reflects."""

    members: tuple[Member, ...]
    position: int | None

    def as_read(self) -> dict[str, Any]:
        """As the rules that decide on the fleet take it: the members, and where they were read
        (recorded, so an audit re-checks the decision against the fleet as it was there)."""
        return {"members": self.members, "as_of_position": self.position}


NO_ACTIVITY = Activity((), None)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class CommandHandler:
    def __init__(
        self,
        app: AthenaeumApplication,
        humans: frozenset[str] = frozenset(),
        clock: Callable[[], datetime] = utc_now,
        activity: Callable[[], Activity] = lambda: NO_ACTIVITY,
    ) -> None:
        self.app = app
        self.humans = humans  # the deployment's; the fleet roster may register more
        self.clock = clock
        self.activity = activity  # the fleet's members as the read models last saw them
        # Commands on one aggregate take turns within this process; optimistic concurrency
        # then only arbitrates between replicas, instead of threads here losing to each other.
        self._turns: WeakValueDictionary[str, threading.Lock] = WeakValueDictionary()
        self._turns_lock = threading.Lock()
        self.fingerprint = ""  # of the command being handled: see ``for_command``

    def for_command(self, command: Command) -> CommandHandler:
        """This handler, for one command: its marker remembers what the command said, so the
        same idempotency key sent with a different command is refused, not answered as the first."""
        handler = copy.copy(self)  # the same application, clock and turns
        content = msgspec.json.encode(msgspec.structs.replace(command, command_id=None))
        handler.fingerprint = hashlib.sha256(content).hexdigest()
        return handler

    def _turn(self, aggregate_id: str) -> threading.Lock:
        with self._turns_lock:
            turn = self._turns.get(aggregate_id)
            if turn is None:
                turn = self._turns[aggregate_id] = threading.Lock()
            return turn

    def load(self, aggregate_id: str, project: Project) -> Any:
        """The aggregate's current state, or None when it has no events yet."""
        try:
            return self.app.repository.get(aggregate_id, projector_func=project)
        except AggregateNotFoundError:
            return None

    def is_human(self, principal: str) -> bool:
        """Configured as human by the deployment, or registered as human in the fleet roster."""
        if principal in self.humans:
            return True
        roster = self.load(FLEET_ID, project_fleet)
        return roster is not None and principal in roster.humans

    def handle(
        self, aggregate_id: str, project: Project, decide: Decide, actor: str, command_id: str | None,
        *, scoped: bool = True,
    ) -> Reply:
        """``scoped=False`` makes ``command_id`` name one command across every actor and
        aggregate (an A2A task id names one ratification, whoever sends it)."""
        with self._turn(aggregate_id):
            return self._handle(aggregate_id, project, decide, actor, command_id, scoped)

    def _handle(
        self, aggregate_id: str, project: Project, decide: Decide, actor: str, command_id: str | None, scoped: bool
    ) -> Reply:
        command_id = command_id or uuid.uuid4().hex
        # Scoped by actor and aggregate, one caller's id can neither squat on nor read another's;
        # unscoped, it names one command for everyone. A JSON array keeps the parts apart: ids
        # and keys may contain any separator.
        marker = msgspec.json.encode([actor, aggregate_id, command_id] if scoped else [command_id]).decode()
        # A retry is not looked up first: the marker's append refuses it, so only a decision
        # that appends nothing needs to ask whether the command was applied before.
        for attempt in range(ATTEMPTS):
            # Timed at each attempt: a command that lost a race is not stamped before the winner.
            context = Context(actor=actor, now=self.clock(), command_id=command_id, is_human=self.is_human)
            state = self.load(aggregate_id, project)
            try:
                events = decide(state, context)
            except RuleViolation as violation:
                # A retry finds its own work done (or its original landing meanwhile): answer as first.
                earlier = self._applied(marker)
                return earlier or Reply.rejected(violation.code, violation.message, violation.field)
            if not events:
                # Nothing appended, nothing to wait for; unless it is a retry, finding its own work done.
                return self._applied(marker) or Reply.accepted(None, NO_EVENTS)
            payload = encode_events(events)
            try:
                recordings = self.app.save(*events, command=CommandRecord(marker, bytes(payload), self.fingerprint))
            except CommandAlreadyApplied as applied:
                return self._replay(applied.marker)
            except OperationalError as error:
                return self._outcome_unknown(marker, command_id, error)
            except IntegrityError:
                if (earlier := self._applied(marker)) is not None:
                    return earlier
                # Another writer got there first: decide again on the new state, after a random
                # pause that grows, so replicas racing on one aggregate (the task counter) spread out.
                if attempt + 1 < ATTEMPTS:
                    time.sleep(random.uniform(0, BACKOFF * 2**attempt))
                continue
            return Reply.accepted(recordings[-1].notification.id, payload)
        return Reply.rejected("conflict", f"{aggregate_id!r} kept changing: lost {ATTEMPTS} races in a row")

    def _outcome_unknown(self, marker: str, command_id: str, error: OperationalError) -> Reply:
        """The append's answer was lost (a timeout, a leader change): it may have landed, and
        may yet. Its marker says if it has; else the caller is told to send it again, which
        applies it at most once, rather than that it failed for good."""
        try:
            earlier = self._applied(marker)
        except OperationalError:
            earlier = None
        return earlier or Reply.rejected(
            "unavailable", f"the ledger did not confirm the command ({error}): send it again with command_id "
            f"{command_id!r}, which applies it at most once", "command_id")

    def _applied(self, marker: str) -> Reply | None:
        stored = self.app.recorder.applied_command(marker)  # type: ignore[attr-defined]
        return None if stored is None else self._replay(stored)

    def _replay(self, marker: Stored) -> Reply:
        """The first answer to a command, for its retry; a different command under the same
        key is refused (nothing is appended either way)."""
        first = marker.headers.get(FINGERPRINT)
        if first and self.fingerprint and first != self.fingerprint:
            return Reply.rejected("idempotency_key_reused", "this command id was already used for a different "
                                  "command; use a new one", "command_id")
        # The marker is the batch's last message, right after the command's last event.
        return Reply.accepted(marker.seq - 1, msgspec.Raw(marker.payload))


def existing(decide: Decide, what: str, field: str) -> Decide:
    """``decide`` for a command on an aggregate that must exist (``what``, named by ``field``)."""

    def checked(state: Any, context: Context) -> list[Event]:
        if state is None:
            raise NotFound(f"no {what}", field)
        return decide(state, context)

    return checked

