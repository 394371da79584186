"""Changed view documents, also put into a JetStream KV bucket so other tools can watch them.

Keys are ``<view>.<key>`` (``ratifications.adr-7``, ``pending.alice``), the key escaped with
``=XX`` for any byte a KV key cannot hold; a view named as a path (``fleet/quorum``) is a
namespace the fleet's tools already read, so its keys join with ``/``
(``fleet/quorum/0A1B2C3D``). A removed document is deleted from the bucket.

The views commit first and the bucket follows, so a crash between the two would leave the
bucket behind for good. A clean stop therefore records the position the bucket mirrors
(under ``_mirror.position``), and a start that finds another one copies the views whole.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import msgspec
from nats.aio.client import Client
from nats.js.errors import KeyNotFoundError, NoKeysError
from nats.js.kv import KeyValue

from athenaeum.projectors.views import Change
from athenaeum.services.jetstream.subjects import escape
from athenaeum.services.read_models import ReadModelStore

BUCKET = "athenaeum-views"
MIRRORED = "_mirror.position"  # no view is named "_mirror"
log = logging.getLogger(__name__)


def kv_key(view: str, key: str) -> str:
    return f"{view}{'/' if '/' in view else '.'}{escape(key, marker='=')}"


class ViewBucket:
    def __init__(self, kv: KeyValue, loop: asyncio.AbstractEventLoop) -> None:
        self.kv = kv
        self.loop = loop
        self.missed = False  # a change that did not reach the bucket: the next start copies all

    @classmethod
    async def open(cls, nc: Client) -> ViewBucket:
        kv = await nc.jetstream().create_key_value(bucket=BUCKET, history=1)
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
        try:
            asyncio.run_coroutine_threadsafe(self.put(changes), self.loop).result(timeout=30)
        except BaseException:
            self.missed = True
            raise

    async def catch_up(self, store: ReadModelStore, position: int) -> None:
        """Copy the views whole into the bucket unless it mirrors ``position`` already, or a
        later one (another projector's, further on: views this far behind must not roll it back)."""
        try:
            mirrored = int((await self.kv.get(MIRRORED)).value or b"0")
        except (KeyNotFoundError, ValueError):
            mirrored = None
        if mirrored is not None and mirrored >= position:
            if mirrored > position:
                log.warning("the bucket %s mirrors position %d, these views only %d: left as it is",
                            BUCKET, mirrored, position)
            return
        documents = await asyncio.to_thread(
            lambda: {kv_key(view, key): document for view in store.views() for key, document in store.documents(view).items()})
        log.info("copying %d view documents into the bucket %s", len(documents), BUCKET)
        for key, document in documents.items():
            await self.kv.put(key, msgspec.json.encode(document))
        try:
            stale = set(await self.kv.keys()) - set(documents) - {MIRRORED}
        except NoKeysError:
            stale = set()
        for key in stale:
            await self.kv.delete(key)

    async def mirrored(self, position: int) -> None:
        """At a clean stop: the bucket holds every change up to ``position``."""
        if not self.missed:
            await self.kv.put(MIRRORED, str(position).encode())
