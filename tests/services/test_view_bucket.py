"""The KV mirror of the views catches up after a crash left it behind, and views behind it
never roll it back (real NATS, real SQLite)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats

from athenaeum.projectors.views import Change
from athenaeum.services.nats_server import NatsServer
from athenaeum.services.read_models import ReadModelStore
from athenaeum.services.view_bucket import MIRRORED, ViewBucket


def test_a_bucket_left_behind_is_reconciled_and_views_behind_it_leave_it_alone(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    store = ReadModelStore(str(tmp_path / "views.sqlite"))
    store.apply("views", 7, [Change("pending", "alice", {"items": [1]}), Change("fleet/quorum", "0000BEEF", {"s": 2})])

    async def scenario() -> tuple[dict[str, bytes], dict[str, bytes]]:
        nc = await nats.connect(nats_server.url)
        try:
            bucket = await ViewBucket.open(nc)

            async def contents() -> dict[str, bytes]:
                return {key: (await bucket.kv.get(key)).value for key in sorted(await bucket.kv.keys())}

            # What a crash leaves: a change the views committed and the bucket never got, and a
            # document the views removed.
            await bucket.kv.put("pending.alice", b'{"items":[]}')
            await bucket.kv.put("pending.gone", b"{}")
            await bucket.catch_up(store, 7)
            reconciled = await contents()
            await bucket.mirrored(7)
            await bucket.mirrored(5)  # a replica further behind, stopping later: the highest stays
            await bucket.kv.put("pending.alice", b"written by a replica further on")
            await bucket.catch_up(store, 5)  # views behind the bucket must not roll it back
            return reconciled, await contents()
        finally:
            await nc.close()

    try:
        reconciled, later = asyncio.run(scenario())
    finally:
        store.close()
    assert reconciled == {"fleet/quorum/0000BEEF": b'{"s":2}', "pending.alice": b'{"items":[1]}'}
    assert later == {MIRRORED: b"7", "fleet/quorum/0000BEEF": b'{"s":2}', "pending.alice": b"written by a replica further on"}
