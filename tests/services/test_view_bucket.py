"""The KV mirror of the views: every entry says which ledger position it reflects, so puts
arriving out of order never roll a key back, and a bucket a crash left behind is reconciled
with the views at start (real NATS, real SQLite)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import nats
import pytest
from eventsourcing.persistence import OperationalError
from nats.js.kv import KeyValue

from athenaeum.projectors.views import Change
from athenaeum.services.runtime.nats_server import NatsServer
from athenaeum.services.views.read_models import ReadModelStore
from athenaeum.services.views.bucket import POSITION, ViewBucket, bucket_of

T = TypeVar("T")


def with_bucket(url: str, scenario: Callable[[ViewBucket, KeyValue], Awaitable[T]], store: ReadModelStore | None = None) -> T:
    """``scenario`` on a bucket of its own (the server is shared) mirroring ``store``."""
    async def run() -> T:
        nc = await nats.connect(url)
        ledger = f"T{uuid.uuid4().hex[:8].upper()}"
        try:
            bucket = await ViewBucket.open(nc, store or ReadModelStore(":memory:"), ledger)
            return await scenario(bucket, await nc.jetstream().key_value(bucket_of(ledger)))
        finally:
            await nc.close()

    return asyncio.run(run())


def mirroring(bucket: ViewBucket, store: ReadModelStore) -> ViewBucket:
    """Another projector's mirror of the same bucket, from views of its own."""
    return ViewBucket(bucket.js, bucket.stream.removeprefix("KV_"), store, bucket.loop)


async def contents(kv: KeyValue) -> dict[str, bytes]:
    try:
        keys = sorted(await kv.keys())
    except nats.js.errors.NoKeysError:
        return {}
    return {key: (await kv.get(key)).value for key in keys}


def test_puts_arriving_out_of_ledger_order_keep_the_newest(nats_server: NatsServer) -> None:
    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[dict[str, bytes], list[tuple[str, int]]]:
        async def stamp() -> tuple[str, int]:
            raw = await bucket.js.get_msg(bucket.stream, subject=bucket.prefix + "ratifications.adr-7")
            return raw.headers[POSITION], raw.seq

        # Two replicas applied positions 10 and 11; the put of 11 arrived first.
        await bucket.put(11, [Change("ratifications", "adr-7", {"status": "RATIFIED"}), Change("pending", "bob", None)])
        first = await stamp()
        await bucket.put(10, [Change("ratifications", "adr-7", {"status": "OPEN"}), Change("pending", "bob", {"items": [1]})])
        await bucket.put(11, [Change("ratifications", "adr-7", {"status": "RATIFIED"})])  # both replicas put 11
        return await contents(kv), [first, await stamp()]

    held, stamps = with_bucket(nats_server.url, scenario)
    assert held == {"ratifications.adr-7": b'{"status":"RATIFIED"}'}  # bob's deletion at 11 holds too
    assert stamps[0][0] == "11" and stamps[1] == stamps[0]  # the same position again is no new revision


def test_writes_racing_on_one_key_leave_the_latest_position_whatever_their_order(nats_server: NatsServer) -> None:
    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[bytes, str]:
        await asyncio.gather(*(bucket.write("race.k", str(position).encode(), position) for position in range(3, 13)))
        raw = await bucket.js.get_msg(bucket.stream, subject=bucket.prefix + "race.k")
        return (await kv.get("race.k")).value, raw.headers[POSITION]

    assert with_bucket(nats_server.url, scenario) == (b"12", "12")


def test_an_entry_from_before_entries_had_positions_is_stamped_at_start(nats_server: NatsServer, tmp_path: Path) -> None:
    store = ReadModelStore(str(tmp_path / "views.sqlite"))
    store.apply("views", 7, [Change("pending", "alice", {"items": [1]})])

    async def scenario(bucket: ViewBucket, kv: KeyValue) -> dict[str, bytes]:
        await kv.put("pending.alice", b'{"items":[1]}')  # as the views say, but with no position
        await kv.put("_mirror.position", b"7")  # the mark entries kept before
        await bucket.catch_up(7)
        await bucket.put(2, [Change("pending", "alice", {"items": []})])  # views rebuilding from the start
        return await contents(kv)

    try:
        assert with_bucket(nats_server.url, scenario, store) == {"pending.alice": b'{"items":[1]}'}
    finally:
        store.close()


def test_a_bucket_left_behind_is_reconciled_and_views_behind_it_leave_it_alone(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    store = ReadModelStore(str(tmp_path / "views.sqlite"))
    store.apply("views", 7, [Change("pending", "alice", {"items": [1]}), Change("fleet/quorum", "0000BEEF", {"s": 2})])

    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[dict[str, bytes], dict[str, bytes]]:
        # What a crash leaves: a change the views committed and the bucket never got, a
        # document the views removed, and an entry from before entries said their position.
        await bucket.put(5, [Change("pending", "alice", {"items": []}), Change("pending", "gone", {})])
        await kv.put("pending.legacy", b"{}")
        await bucket.catch_up(7)
        reconciled = await contents(kv)
        # A replica further on wrote alice at 9; views still at 5 (rebuilding) must not roll it back.
        await bucket.put(9, [Change("pending", "alice", {"items": [2]})])
        await mirroring(bucket, ReadModelStore(str(tmp_path / "empty.sqlite"))).catch_up(5)
        return reconciled, await contents(kv)

    try:
        reconciled, later = with_bucket(nats_server.url, scenario, store)
    finally:
        store.close()
    assert reconciled == {"fleet/quorum/0000BEEF": b'{"s":2}', "pending.alice": b'{"items":[1]}'}
    assert later == {"fleet/quorum/0000BEEF": b'{"s":2}', "pending.alice": b'{"items":[2]}'}


def test_a_put_that_failed_is_made_good_from_the_views_without_a_restart(
    nats_server: NatsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ReadModelStore(str(tmp_path / "views.sqlite"))
    store.apply("views", 4, [Change("ratifications", "adr-1", {"status": "ratified"})])
    monkeypatch.setattr("athenaeum.services.views.bucket.REPAIR_WAITS", (0, 0))

    async def scenario(bucket: ViewBucket, kv: KeyValue) -> dict[str, bytes]:
        async def unreachable(key: str, value: bytes | None, position: int) -> bool:
            raise OperationalError("the bucket's stream has no leader")

        working = bucket.write
        bucket.write = unreachable  # type: ignore[method-assign]
        await asyncio.to_thread(bucket.put_from_thread, 4, [Change("ratifications", "adr-1", {"status": "ratified"})])
        await bucket.flush()
        bucket.write = working  # type: ignore[method-assign]
        assert bucket.repair is not None  # scheduled once the put handed over by the projector's thread failed
        await asyncio.wait_for(bucket.repair, 10)
        return await contents(kv)

    try:
        assert with_bucket(nats_server.url, scenario, store) == {"ratifications.adr-1": b'{"status":"ratified"}'}
    finally:
        store.close()


def test_the_projector_hands_changes_over_without_waiting_and_the_latest_of_each_key_lands(
    nats_server: NatsServer,
) -> None:
    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[dict[str, bytes], str]:
        def project() -> None:  # the projector's thread, one event after another
            for position in range(1, 51):
                bucket.put_from_thread(position, [Change("pending", "bob", {"items": [position]}),
                                                  Change("pending", f"agent-{position % 3}", {"n": position})])

        await asyncio.to_thread(project)
        await bucket.flush()
        raw = await bucket.js.get_msg(bucket.stream, subject=bucket.prefix + "pending.bob")
        return await contents(kv), raw.headers[POSITION]

    held, position = with_bucket(nats_server.url, scenario)
    assert held == {"pending.bob": b'{"items":[50]}', "pending.agent-0": b'{"n":48}', "pending.agent-1": b'{"n":49}',
                    "pending.agent-2": b'{"n":50}'}
    assert position == "50"
