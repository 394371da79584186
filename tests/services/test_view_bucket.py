"""The KV mirror of the views catches up after a crash left it behind (real NATS, real SQLite)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats

from athenaeum.projectors.views import Change
from athenaeum.services.nats_server import NatsServer
from athenaeum.services.read_models import ReadModelStore
from athenaeum.services.view_bucket import MIRRORED, ViewBucket


def test_a_bucket_left_behind_is_copied_whole_and_one_mirroring_the_views_is_left_alone(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    store = ReadModelStore(str(tmp_path / "views.sqlite"))
    store.apply("views", 7, [Change("pending", "alice", {"items": [1]}), Change("fleet/quorum", "0000BEEF", {"s": 2})])

    async def scenario() -> dict[str, bytes]:
        nc = await nats.connect(nats_server.url)
        try:
            bucket = await ViewBucket.open(nc)
            # What a crash leaves: a change the views committed and the bucket never got, a
            # document the views removed, and no record of a clean stop.
            await bucket.kv.put("pending.alice", b'{"items":[]}')
            await bucket.kv.put("pending.gone", b"{}")
            await bucket.catch_up(store, 7)
            await bucket.mirrored(7)
            await bucket.kv.put("pending.alice", b"tampered after the clean stop")
            await bucket.catch_up(store, 7)  # mirrors 7 already: nothing copied
            await bucket.catch_up(store, 5)  # views behind the bucket: they must not roll it back
            return {key: (await bucket.kv.get(key)).value for key in sorted(await bucket.kv.keys())}
        finally:
            await nc.close()

    try:
        assert asyncio.run(scenario()) == {
            MIRRORED: b"7", "fleet/quorum/0000BEEF": b'{"s":2}', "pending.alice": b"tampered after the clean stop"}
    finally:
        store.close()
