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

Anyone holding the services' key can put an entry too, and claim any position. Reconciling
compares by content: an entry that differs from the views is written again, stamped with
their position, unless it claims a later one, which a replica further on may have written:
it is compared again once the views get there. An entry claiming a position the ledger has
not reached was written by no replica: it is replaced at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import msgspec
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import StreamConfig
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from nats.js.errors import APIError, NotFoundError, ServiceUnavailableError
from nats.js.kv import KV_DEL, KV_OP

from athenaeum.services.jetstream.client import WRONG_LAST_SEQUENCE, patiently
from athenaeum.services.jetstream.log import EXPECT_LAST
from athenaeum.services.jetstream.positions import LRU
from athenaeum.services.jetstream.subjects import escape
from athenaeum.services.runtime.metrics import KV_RECONCILIATIONS, KV_REPAIRS
from athenaeum.services.views.bucket_entries import POSITION, Entry, entries_watched, entry_of
from athenaeum.services.views.projection import PROJECTION
from athenaeum.services.views.read_models import ReadModelStore, Written

BUCKET = "athenaeum-views"
# Each race lost is to a write from a later position than the entry held, so the races any
# write can lose are bounded by the positions in flight; this only bounds a runaway.
WRITE_ATTEMPTS = 100
REPAIR_WAITS = (1, 2, 5, 10, 30) + (60,) * 120  # seconds: for about two hours
WRITTEN_KEPT = 100_000  # keys whose last entry written here is remembered
log = logging.getLogger(__name__)
JETSTREAM_AWAY = (ServiceUnavailableError, NoRespondersError, NatsTimeout)


def bucket_of(stream: str) -> str:
    return BUCKET if stream == "ATHENAEUM" else f"{BUCKET}-{stream}"


def bucket_stream(stream: str, replicas: int) -> dict[str, object]:
    """The stream the views bucket of the ledger in ``stream`` lives in, as nats-py's
    ``create_key_value`` makes it for a history of 1 (a KV client binds to any such stream)."""
    bucket = bucket_of(stream)
    return {"name": f"KV_{bucket}", "subjects": [f"$KV.{bucket}.>"], "storage": "file", "retention": "limits",
            "num_replicas": replicas, "max_msgs_per_subject": 1, "deny_delete": True, "allow_rollup_hdrs": True,
            "allow_msg_ttl": True, "discard": "new"}


def kv_key(view: str, key: str) -> str:
    return f"{view}{'/' if '/' in view else '.'}{escape(key, marker='=')}"


class ViewBucket:
    def __init__(self, js: JetStreamContext, bucket: str, store: ReadModelStore, loop: asyncio.AbstractEventLoop,
                 ledger: str | None = None) -> None:
        """``ledger``: the stream of the ledger the views reflect, whose head no genuine entry passes."""
        self.js = js
        self.store = store  # the views it mirrors
        self.loop = loop
        self.ledger = ledger
        self.bucket = bucket
        self.stream = f"KV_{bucket}"  # the stream and subjects nats-py's KV keeps a bucket in
        self.prefix = f"$KV.{bucket}."
        self.repair: asyncio.Task[None] | None = None  # the reconciliation under way after a failed put
        self._failed_again = False  # a put failed after the reconciliation under way read the views
        self._written: LRU[str, Entry] = LRU(WRITTEN_KEPT)  # each key's entry as this process last wrote it
        self._waiting: dict[str, tuple[int, bytes | None]] = {}  # key: the position and value to write
        self._writer: asyncio.Task[None] | None = None
        # Entries claiming a position past the views' when reconciled: compared once the views reach them all.
        self._deferred: dict[str, Entry] = {}
        self._compare_at: int | None = None
        self._comparing: asyncio.Task[None] | None = None
        self._head: int | None = None  # the ledger's last position, as last read

    @classmethod
    async def open(cls, nc: Client, store: ReadModelStore, stream: str = "ATHENAEUM", replicas: int = 1) -> ViewBucket:
        """The bucket of the ledger in ``stream`` (another ledger on the same NATS has its own)."""
        js, config = nc.jetstream(), bucket_stream(stream, replicas)
        name = str(config["name"])
        try:
            await patiently(lambda: js.stream_info(name), NatsTimeout, f"the info of {name}")
        except NotFoundError:
            # The bucket is made again from the views (reconciled at every start), so on one
            # replica its writes need not wait for the disk as the ledger's do: without an
            # fsync each, the five or so puts a vote makes cost the server a quarter as much.
            # (An existing bucket keeps its mode: the server cannot change it.)
            persisted = {"persist_mode": "async"} if replicas == 1 else {}
            await patiently(lambda: js.add_stream(StreamConfig.from_response(config | persisted), allow_direct=True),
                            NatsTimeout, f"creating {name}")
        return cls(js, bucket_of(stream), store, asyncio.get_running_loop(), stream)

    async def put(self, position: int, changes: Sequence[Written]) -> None:
        """Write the changes the views recorded at ``position`` (each to a key of its own, so at once)."""
        await self._write_all({kv_key(change.view, change.key): (position, change.json) for change in changes})

    def put_from_thread(self, position: int, changes: Sequence[Written]) -> None:
        """For the projector's thread, which does not wait for the bucket: the changes join
        those waiting to be written, where a key's change from a later position replaces an
        earlier one (watchers of a key see its latest value, perhaps not every one between),
        and a writer on the loop writes them. A write that fails is made good by reconciling
        the bucket with the views, tried until it works: the record it missed may never change
        again."""
        entries = {kv_key(change.view, change.key): (position, change.json) for change in changes}
        self.loop.call_soon_threadsafe(self._wait_to_write, entries, position)

    def _wait_to_write(self, entries: dict[str, tuple[int, bytes | None]], position: int) -> None:
        for key, (at, value) in entries.items():
            if key not in self._waiting or self._waiting[key][0] < at:
                self._waiting[key] = (at, value)
        if self._writer is None or self._writer.done():
            self._writer = self.loop.create_task(self._write_waiting())
        if self._compare_at is not None and position >= self._compare_at:
            self._compare_at = None
            self._comparing = self.loop.create_task(self._compare_deferred())

    async def _write_waiting(self) -> None:
        while self._waiting:
            entries, self._waiting = self._waiting, {}
            try:
                await self._write_all(entries)
            except JETSTREAM_AWAY as error:
                # For a moment (the server reloading its accounts for a key just registered, say):
                # no fault to trace, and the reconciliation mends what it missed.
                log.warning("JetStream did not take view changes for %s (%r); reconciling soon", self.stream, error)
                self.repair_soon()
            except Exception:  # noqa: BLE001
                log.exception("could not mirror view changes into %s", self.stream)
                self.repair_soon()

    async def _write_all(self, entries: dict[str, tuple[int, bytes | None]]) -> None:
        failures = [outcome for outcome in await asyncio.gather(
            *(self.write(key, value, position) for key, (position, value) in entries.items()), return_exceptions=True)
            if isinstance(outcome, BaseException)]
        if failures:
            raise failures[0]

    async def flush(self) -> None:
        """Wait until what the projector handed over so far is written (or given up), and the
        entries its positions brought up for comparing are compared."""
        for task in (self._writer, self._comparing):
            while task is not None and not task.done():
                await asyncio.shield(task)

    def repair_soon(self) -> None:
        """Reconcile the bucket with the views shortly, and again until it works: after a put
        that failed, or a server started again (which may have lost the last puts it acknowledged
        before they reached its disk: see ``open``)."""
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
        for task in (self.repair, self._comparing):
            if task is not None:
                task.cancel()

    async def write(self, key: str, value: bytes | None, position: int, over: Entry | None = None) -> bool:
        """Set ``key`` to ``value`` (None: delete it) as of ``position``, unless its entry
        reflects that position or a later one already; whether it was written. The entry this
        process wrote last is presumed still the latest: a wrong guess costs one read.
        ``over``: an entry to replace whatever position it claims, if it is still the latest."""
        entry = over or self._written.get(key)
        for _ in range(WRITE_ATTEMPTS):
            if entry is None:
                entry = await self._entry(key)
            if entry is not None and entry.position >= position and entry is not over:
                if not await self._past_head(entry):
                    return False
                log.warning("the KV entry %s claims position %d, past the ledger's head: it is replaced", key,
                            entry.position)
                over = entry
            headers = {POSITION: str(position), EXPECT_LAST: str(entry.revision if entry else 0)}
            if value is None:
                headers[KV_OP] = KV_DEL
            try:
                ack = await self.js.publish(self.prefix + key, value or b"", headers=headers, stream=self.stream)
            except APIError as error:
                if error.err_code not in WRONG_LAST_SEQUENCE:
                    raise
                self._written.forget(key)
                if over is not None:
                    return False  # written since: the next reconciliation judges what is there now
                entry = None
                continue
            self._written.put(key, Entry(position, ack.seq, None))
            return True
        log.warning("gave up writing %s as of position %d after %d lost races", key, position, WRITE_ATTEMPTS)
        return False

    async def catch_up(self, position: int) -> None:
        """Reconcile the bucket with the views, which reflect ``position``: what differs is
        written as of ``position``. An entry from further on (a replica ahead of these views)
        stays as it is until the views reach it, and is compared then; one from beyond the
        ledger's head is forged, and replaced now."""
        KV_RECONCILIATIONS.inc()
        held = await entries_watched(self.js, self.bucket)
        head = self._head = await self._ledger_head()  # read after the entries: no genuine one is past it
        documents = await asyncio.to_thread(self._documents)
        deferred = {}
        for key in documents.keys() | held.keys():
            entry, value = held.get(key), documents.get(key)
            if entry is None:
                await self._repair(key, value, position)
            elif head is not None and entry.position > head:
                log.warning("the KV entry %s claims position %d, past the ledger's head %d: it is replaced with the "
                            "views' as of %d", key, entry.position, head, position)
                await self._repair(key, value, position, over=entry)
            elif entry.position > position:
                deferred[key] = entry
            # An entry from before entries said their position (0) is stamped, so that views
            # rebuilding from the start cannot roll it back. Those leave a tombstone for the
            # old ``_mirror.position`` key, which no view holds.
            elif entry.value != value or entry.position == 0:
                await self._repair(key, value, position, over=entry)
        self._deferred = deferred
        self._compare_at = max((entry.position for entry in deferred.values()), default=None)

    async def _compare_deferred(self) -> None:
        """The entries ``catch_up`` found past the views, compared now the views reach them:
        one still as it was and unlike the views is written again (a key changed since is
        newer than what is judged here)."""
        deferred, self._deferred = self._deferred, {}
        try:
            position = await asyncio.to_thread(lambda: self.store.position(PROJECTION) or 0)
            documents = await asyncio.to_thread(self._documents)
            for key, seen in deferred.items():
                entry = await self._entry(key)
                if entry == seen and entry.position <= position and entry.value != documents.get(key):
                    log.warning("the KV entry %s is not what the views held at position %d, which it claims: it is "
                                "replaced with theirs", key, entry.position)
                    await self._repair(key, documents.get(key), position, over=entry)
        except Exception:  # noqa: BLE001  the bucket away: a reconciliation compares everything later
            log.exception("comparing KV entries with the views")
            self.repair_soon()

    async def _repair(self, key: str, value: bytes | None, position: int, over: Entry | None = None) -> None:
        """A reconciliation's write, counted for the operators' metrics."""
        if await self.write(key, value, position, over=over):
            KV_REPAIRS.inc()

    def _documents(self) -> dict[str, bytes]:
        """Every view document, encoded, by its key in the bucket."""
        return {kv_key(view, key): msgspec.json.encode(document)
                for view in self.store.views() for key, document in self.store.documents(view).items()}

    async def _past_head(self, entry: Entry) -> bool:
        """Whether ``entry`` claims a position the ledger has not reached: no replica wrote it.
        The head is read again only for a position past the one last read."""
        if self._head is None or entry.position > self._head:
            self._head = await self._ledger_head()
        return self._head is not None and entry.position > self._head

    async def _ledger_head(self) -> int | None:
        """The ledger's last position; None when there is no ledger stream to ask (a bucket alone)."""
        if self.ledger is None:
            return None
        try:
            return (await self.js.stream_info(self.ledger)).state.last_seq
        except NotFoundError:
            return None

    async def _entry(self, key: str) -> Entry | None:
        try:
            msg = await self.js.get_msg(self.stream, subject=self.prefix + key)
        except NotFoundError:
            return None
        return entry_of(msg.headers, msg.seq, msg.data)

