"""Changed view documents, also put into a JetStream KV bucket so other tools can watch them.

Keys are ``<view>.<key>`` (``ratifications.adr-7``, ``pending.alice``), the key escaped with
``=XX`` for any byte a KV key cannot hold; a view named as a path (``fleet/quorum``) is a
namespace the fleet's tools already read, so its keys join with ``/``
(``fleet/quorum/0A1B2C3D``). A removed document is deleted from the bucket.

The views commit first and the bucket follows, so a crash between the two would leave the
bucket behind for good: a projector starting reconciles the bucket with its views. Replicas may
be putting meanwhile; what they put is newer, so the reconciliation writes a key only if it has
not changed since it was read. Views behind what the bucket already mirrors (a projector with a
store of its own, or rebuilding one) must not roll it back: a clean stop raises the highest
position mirrored (``_mirror.position``), and views short of it leave the bucket as it is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence

import msgspec
from nats.aio.client import Client
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from athenaeum.projectors.views import Change
from athenaeum.services.jetstream.subjects import escape
from athenaeum.services.read_models import ReadModelStore

BUCKET = "athenaeum-views"
MIRRORED = "_mirror.position"  # no view is named "_mirror"
log = logging.getLogger(__name__)


def bucket_of(stream: str) -> str:
    return BUCKET if stream == "ATHENAEUM" else f"{BUCKET}-{stream}"


def kv_key(view: str, key: str) -> str:
    return f"{view}{'/' if '/' in view else '.'}{escape(key, marker='=')}"


class ViewBucket:
    def __init__(self, kv: KeyValue, loop: asyncio.AbstractEventLoop) -> None:
        self.kv = kv
        self.loop = loop

    @classmethod
    async def open(cls, nc: Client, stream: str = "ATHENAEUM", replicas: int = 1) -> ViewBucket:
        """The bucket of the ledger in ``stream`` (another ledger on the same NATS has its own)."""
        kv = await nc.jetstream().create_key_value(bucket=bucket_of(stream), history=1, replicas=replicas)
        return cls(kv, asyncio.get_running_loop())

    async def put(self, changes: Sequence[Change]) -> None:
        for change in changes:
            key = kv_key(change.view, change.key)
            if change.document is None:
                await self.kv.delete(key)
            else:
                await self.kv.put(key, msgspec.json.encode(change.document))

    def put_from_thread(self, changes: Sequence[Change]) -> None:
        """For the projector's thread: waits, so the bucket sees changes in ledger order."""
        asyncio.run_coroutine_threadsafe(self.put(changes), self.loop).result(timeout=30)

    async def catch_up(self, store: ReadModelStore, position: int) -> None:
        """Reconcile the bucket with the views, which reflect ``position``."""
        mirrored, _ = await self._mirrored()
        if mirrored > position:
            log.warning("the bucket %s mirrors position %d, these views only %d: left as it is", BUCKET, mirrored, position)
            return
        # The bucket first, the views second: a replica's put in between changes the revision
        # read, so the write below is refused rather than roll its newer value back.
        held = await self._entries()
        documents = await asyncio.to_thread(
            lambda: {kv_key(view, key): msgspec.json.encode(document)
                     for view in store.views() for key, document in store.documents(view).items()})
        for key, value in documents.items():
            if key not in held:
                await self._unless_changed(self.kv.create(key, value))
            elif held[key][0] != value:
                await self._unless_changed(self.kv.update(key, value, last=held[key][1]))
        for key in held.keys() - documents.keys() - {MIRRORED}:
            await self._unless_changed(self.kv.delete(key, last=held[key][1]))

    async def mirrored(self, position: int) -> None:
        """At a clean stop: the bucket holds every change up to ``position``."""
        for _ in range(3):  # replicas stopping at once: the highest position stays
            highest, revision = await self._mirrored()
            if highest >= position:
                return
            written = self.kv.update(MIRRORED, str(position).encode(), last=revision) if revision else (
                self.kv.create(MIRRORED, str(position).encode()))
            if await self._unless_changed(written):
                return

    async def _mirrored(self) -> tuple[int, int]:
        """The highest position mirrored, and the revision of the key that says so (0: none)."""
        try:
            entry = await self.kv.get(MIRRORED)
        except KeyNotFoundError:
            return 0, 0
        return int(entry.value or b"0"), entry.revision or 0

    async def _entries(self) -> dict[str, tuple[bytes, int]]:
        """Every key's value and revision, in one pass over the bucket."""
        watcher = await self.kv.watchall(ignore_deletes=True)
        entries = {}
        try:
            async for entry in watcher:
                if entry is None:  # nats-py's mark: the current values are all in
                    break
                entries[entry.key] = (entry.value or b"", entry.revision or 0)
        finally:
            await watcher.stop()
        return entries

    @staticmethod
    async def _unless_changed(write: Awaitable[object]) -> bool:
        """Whether ``write`` went through; a key changed since it was read is left as it is."""
        try:
            await write
        except KeyWrongLastSequenceError:
            return False
        return True
