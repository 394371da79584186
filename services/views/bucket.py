"""Changed view documents, also put into a JetStream KV bucket so other tools can watch them.

Keys are ``<view>.<key>`` (``ratifications.adr-7``, ``pending.alice``), the key escaped with
``=XX`` for any byte a KV key cannot hold; a view named as a path (``fleet/quorum``) is a
namespace the fleet's tools already read, so its keys join with ``/``
(``fleet/quorum/0A1B2C3D``). A removed document is deleted from the bucket.

Every entry carries the ledger position its value reflects (``Athenaeum-Position``), and a
write lands only over an entry from an earlier position (checked and set in one step, with
the entry's revision): replicas putting the changes of neighbouring positions, a replica
lagging behind, or one rebuilding its views from the start never roll a key back, whatever
order their puts arrive in. The views commit first and the bucket follows, so a crash between
the two would leave the bucket behind: a projector starting reconciles the bucket with its
views.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import NamedTuple

import msgspec
import nats.errors
from eventsourcing.persistence import OperationalError
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.errors import APIError, NotFoundError
from nats.js.kv import KV_DEL, KV_OP, KV_PURGE

from athenaeum.projectors.views import Change
from athenaeum.services.jetstream.client import WRONG_LAST_SEQUENCE
from athenaeum.services.jetstream.log import EXPECT_LAST
from athenaeum.services.jetstream.positions import LRU
from athenaeum.services.jetstream.subjects import escape
from athenaeum.services.runtime.metrics import KV_RECONCILIATIONS, KV_REPAIRS
from athenaeum.services.views.projection import PROJECTION
from athenaeum.services.views.read_models import ReadModelStore

BUCKET = "athenaeum-views"
POSITION = "Athenaeum-Position"
# Each race lost is to a write from a later position than the entry held, so the races any
# write can lose are bounded by the positions in flight; this only bounds a runaway.
WRITE_ATTEMPTS = 100
READ_TIMEOUT = 10.0
REPAIR_WAITS = (1, 2, 5, 10, 30) + (60,) * 120  # seconds: for about two hours
WRITTEN_KEPT = 100_000  # keys whose last entry written here is remembered
log = logging.getLogger(__name__)


def bucket_of(stream: str) -> str:
    return BUCKET if stream == "ATHENAEUM" else f"{BUCKET}-{stream}"


def kv_key(view: str, key: str) -> str:
    return f"{view}{'/' if '/' in view else '.'}{escape(key, marker='=')}"


class Entry(NamedTuple):
    """A key's latest entry: the position it reflects (0 when it does not say), its revision,
    and its value (None once deleted)."""

    position: int
    revision: int
    value: bytes | None


class ViewBucket:
    def __init__(self, js: JetStreamContext, bucket: str, store: ReadModelStore, loop: asyncio.AbstractEventLoop) -> None:
        self.js = js
        self.store = store  # the views it mirrors
        self.loop = loop
        self.stream = f"KV_{bucket}"  # the stream and subjects nats-py's KV keeps a bucket in
        self.prefix = f"$KV.{bucket}."
        self.repair: asyncio.Task[None] | None = None  # the reconciliation under way after a failed put
        self._failed_again = False  # a put failed after the reconciliation under way read the views
        self._written: LRU[str, Entry] = LRU(WRITTEN_KEPT)  # each key's entry as this process last wrote it
        self._waiting: dict[str, tuple[int, bytes | None]] = {}  # key: the position and value to write
        self._writer: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, nc: Client, store: ReadModelStore, stream: str = "ATHENAEUM", replicas: int = 1) -> ViewBucket:
        """The bucket of the ledger in ``stream`` (another ledger on the same NATS has its own)."""
        js, bucket = nc.jetstream(), bucket_of(stream)
        await js.create_key_value(bucket=bucket, history=1, replicas=replicas)
        return cls(js, bucket, store, asyncio.get_running_loop())

    async def put(self, position: int, changes: Sequence[Change]) -> None:
        """Write the changes the event at ``position`` made (each to a key of its own, so at once)."""
        await self._write_all({kv_key(change.view, change.key): (position, _encoded(change.document))
                               for change in changes})

    def put_from_thread(self, position: int, changes: Sequence[Change]) -> None:
        """For the projector's thread, which does not wait for the bucket: the changes join
        those waiting to be written, where a key's change from a later position replaces an
        earlier one (watchers of a key see its latest value, perhaps not every one between),
        and a writer on the loop writes them. A write that fails is made good by reconciling
        the bucket with the views, tried until it works: the record it missed may never change
        again."""
        entries = {kv_key(change.view, change.key): (position, _encoded(change.document)) for change in changes}
        self.loop.call_soon_threadsafe(self._wait_to_write, entries)

    def _wait_to_write(self, entries: dict[str, tuple[int, bytes | None]]) -> None:
        for key, (position, value) in entries.items():
            if key not in self._waiting or self._waiting[key][0] < position:
                self._waiting[key] = (position, value)
        if self._writer is None or self._writer.done():
            self._writer = self.loop.create_task(self._write_waiting())

    async def _write_waiting(self) -> None:
        while self._waiting:
            entries, self._waiting = self._waiting, {}
            try:
                await self._write_all(entries)
            except Exception:  # noqa: BLE001
                log.exception("could not mirror view changes into %s", self.stream)
                self._repair_soon()

    async def _write_all(self, entries: dict[str, tuple[int, bytes | None]]) -> None:
        failures = [outcome for outcome in await asyncio.gather(
            *(self.write(key, value, position) for key, (position, value) in entries.items()), return_exceptions=True)
            if isinstance(outcome, BaseException)]
        if failures:
            raise failures[0]

    async def flush(self) -> None:
        """Wait until what the projector handed over so far is written (or given up)."""
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)

    def _repair_soon(self) -> None:
        self._failed_again = True
        if self.repair is None or self.repair.done():
            self.repair = self.loop.create_task(self._reconcile())

    async def _reconcile(self) -> None:
        for wait in REPAIR_WAITS:
            await asyncio.sleep(wait)
            self._failed_again = False  # from here on the views read include every failed put
            try:
                await self.catch_up(await asyncio.to_thread(lambda: self.store.position(PROJECTION) or 0))
            except Exception as error:  # noqa: BLE001  NATS still away: the next try
                log.warning("reconciling the KV bucket %s with the views: %r", self.stream, error)
                continue
            if not self._failed_again:
                return
        log.error("the KV bucket %s stays behind the views until the projector restarts", self.stream)

    async def close(self, grace: float = 10.0) -> None:
        """Write what the stopped projector handed over (for up to ``grace`` seconds), then stop
        reconciling: the views and the connection are going."""
        try:
            await asyncio.wait_for(self.flush(), grace)
        except TimeoutError:
            log.warning("the KV bucket %s missed the last view changes; the next start reconciles it", self.stream)
        if self.repair is not None:
            self.repair.cancel()

    async def write(self, key: str, value: bytes | None, position: int) -> bool:
        """Set ``key`` to ``value`` (None: delete it) as of ``position``, unless its entry
        reflects that position or a later one already; whether it was written. The entry this
        process wrote last is presumed still the latest: a wrong guess costs one read."""
        entry = self._written.get(key)
        for _ in range(WRITE_ATTEMPTS):
            if entry is None:
                entry = await self._entry(key)
            if entry is not None and entry.position >= position:
                return False
            headers = {POSITION: str(position), EXPECT_LAST: str(entry.revision if entry else 0)}
            if value is None:
                headers[KV_OP] = KV_DEL
            try:
                ack = await self.js.publish(self.prefix + key, value or b"", headers=headers, stream=self.stream)
            except APIError as error:
                if error.err_code not in WRONG_LAST_SEQUENCE:
                    raise
                self._written.forget(key)
                entry = None
                continue
            self._written.put(key, Entry(position, ack.seq, None))
            return True
        log.warning("gave up writing %s as of position %d after %d lost races", key, position, WRITE_ATTEMPTS)
        return False

    async def catch_up(self, position: int) -> None:
        """Reconcile the bucket with the views, which reflect ``position``: what differs is
        written as of ``position``, so entries from further on (replicas ahead of these views)
        stay as they are."""
        KV_RECONCILIATIONS.inc()
        held = await self._entries()
        documents = await asyncio.to_thread(
            lambda: {kv_key(view, key): msgspec.json.encode(document)
                     for view in self.store.views() for key, document in self.store.documents(view).items()})
        for key in documents.keys() | held.keys():
            entry, value = held.get(key), documents.get(key)
            # An entry from before entries said their position (0) is stamped, so that views
            # rebuilding from the start cannot roll it back. Those leave a tombstone for the
            # old ``_mirror.position`` key, which no view holds.
            if entry is None or (entry.position < position and (entry.value != value or entry.position == 0)):
                if await self.write(key, value, position):
                    KV_REPAIRS.inc()

    async def _entry(self, key: str) -> Entry | None:
        try:
            msg = await self.js.get_msg(self.stream, subject=self.prefix + key)
        except NotFoundError:
            return None
        return _entry(msg.headers, msg.seq, msg.data)

    async def _entries(self) -> dict[str, Entry]:
        """Every key's latest entry, deleted ones included, in one pass over the bucket."""
        info = await self.js.stream_info(self.stream)
        if not info.state.messages:
            return {}
        subscription = await self.js.subscribe(
            self.prefix + ">", ordered_consumer=True, deliver_policy=DeliverPolicy.LAST_PER_SUBJECT)
        entries = {}
        try:
            while True:
                try:
                    msg = await subscription.next_msg(timeout=READ_TIMEOUT)
                except nats.errors.TimeoutError as error:
                    raise OperationalError(f"reading the KV bucket {self.stream} timed out") from error
                entries[msg.subject.removeprefix(self.prefix)] = _entry(msg.headers, msg.metadata.sequence.stream, msg.data)
                if msg.metadata.num_pending == 0:
                    return entries
        finally:
            await subscription.unsubscribe()


def _encoded(document: object | None) -> bytes | None:
    return None if document is None else msgspec.json.encode(document)


def _entry(headers: dict[str, str] | None, revision: int, data: bytes | None) -> Entry:
    headers = headers or {}
    deleted = headers.get(KV_OP) in (KV_DEL, KV_PURGE)
    return Entry(int(headers.get(POSITION, 0)), revision, None if deleted else (data or b""))
