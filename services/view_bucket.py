"""Changed view documents, also put into a JetStream KV bucket so other tools can watch them.

Keys are ``<view>.<key>`` (``ratifications.adr-7``, ``pending.alice``), the key escaped with
``=XX`` for any byte a KV key cannot hold; a view named as a path (``fleet/quorum``) is a
namespace the fleet's tools already read, so its keys join with ``/``
(``fleet/quorum/0A1B2C3D``). A removed document is deleted from the bucket.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import msgspec
from nats.aio.client import Client
from nats.js.kv import KeyValue

from athenaeum.projectors.views import Change
from athenaeum.services.jetstream.subjects import escape

BUCKET = "athenaeum-views"


def kv_key(view: str, key: str) -> str:
    return f"{view}{'/' if '/' in view else '.'}{escape(key, marker='=')}"


class ViewBucket:
    def __init__(self, kv: KeyValue, loop: asyncio.AbstractEventLoop) -> None:
        self.kv = kv
        self.loop = loop

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
        asyncio.run_coroutine_threadsafe(self.put(changes), self.loop).result(timeout=30)
