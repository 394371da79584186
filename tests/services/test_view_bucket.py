"""The KV mirror of the views: every entry says which ledger position it reflects, so puts
arriving out of order never roll a key back, and a bucket a crash left behind, or an entry
forged, is reconciled with the views at start (real NATS, real SQLite)."""

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
from athenaeum.services.jetstream.client import JetStreamClient
from athenaeum.services.runtime.nats_server import NatsServer
from athenaeum.services.views.bucket import POSITION, ViewBucket, bucket_of
from athenaeum.services.views.bucket_entries import Entry, entries_got, entries_watched
from athenaeum.services.views.read_models import ReadModelStore, Written


def written(*changes: Change) -> list[Written]:
    return [Written.of(change) for change in changes]

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


async def contents(bucket: ViewBucket) -> dict[str, bytes]:
    """What the bucket holds. (Not nats-py's ``keys()``, which may answer none while its
    watcher's first messages are on their way: its consumer has none pending, it has seen none.)"""
    entries = await entries_watched(bucket.js, bucket.bucket)
    return {key: entry.value for key, entry in sorted(entries.items()) if entry.value is not None}


def test_puts_arriving_out_of_ledger_order_keep_the_newest(nats_server: NatsServer) -> None:
    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[dict[str, bytes], list[tuple[str, int]]]:
        async def stamp() -> tuple[str, int]:
            raw = await bucket.js.get_msg(bucket.stream, subject=bucket.prefix + "ratifications.adr-7")
            return raw.headers[POSITION], raw.seq

        # Two replicas applied positions 10 and 11; the put of 11 arrived first.
        await bucket.put(11, written(Change("ratifications", "adr-7", {"status": "RATIFIED"}), Change("pending", "bob", None)))
        first = await stamp()
        await bucket.put(10, written(Change("ratifications", "adr-7", {"status": "OPEN"}), Change("pending", "bob", {"items": [1]})))
        await bucket.put(11, written(Change("ratifications", "adr-7", {"status": "RATIFIED"})))  # both replicas put 11
        return await contents(bucket), [first, await stamp()]

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
    store.apply("views", 7, written(Change("pending", "alice", {"items": [1]})))

    async def scenario(bucket: ViewBucket, kv: KeyValue) -> dict[str, bytes]:
        await kv.put("pending.alice", b'{"items":[1]}')  # as the views say, but with no position
        await kv.put("_mirror.position", b"7")  # the mark entries kept before
        await bucket.catch_up(7)
        await bucket.put(2, written(Change("pending", "alice", {"items": []})))  # views rebuilding from the start
        return await contents(bucket)

    try:
        assert with_bucket(nats_server.url, scenario, store) == {"pending.alice": b'{"items":[1]}'}
    finally:
        store.close()


def test_a_bucket_left_behind_is_reconciled_and_views_behind_it_leave_it_alone(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    store = ReadModelStore(str(tmp_path / "views.sqlite"))
    store.apply("views", 7, written(Change("pending", "alice", {"items": [1]}), Change("fleet/quorum", "0000BEEF", {"s": 2})))

    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[dict[str, bytes], dict[str, bytes]]:
        # What a crash leaves: a change the views committed and the bucket never got, a
        # document the views removed, and an entry from before entries said their position.
        await bucket.put(5, written(Change("pending", "alice", {"items": []}), Change("pending", "gone", {})))
        await kv.put("pending.legacy", b"{}")
        await bucket.catch_up(7)
        reconciled = await contents(bucket)
        # A replica further on wrote alice at 9; views still at 5 (rebuilding) must not roll it back.
        await bucket.put(9, written(Change("pending", "alice", {"items": [2]})))
        await mirroring(bucket, ReadModelStore(str(tmp_path / "empty.sqlite"))).catch_up(5)
        return reconciled, await contents(bucket)

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
    store.apply("views", 4, written(Change("ratifications", "adr-1", {"status": "ratified"})))
    monkeypatch.setattr("athenaeum.services.views.bucket.REPAIR_WAITS", (0, 0))

    async def scenario(bucket: ViewBucket, kv: KeyValue) -> dict[str, bytes]:
        async def unreachable(key: str, value: bytes | None, position: int) -> bool:
            raise OperationalError("the bucket's stream has no leader")

        working = bucket.write
        bucket.write = unreachable  # type: ignore[method-assign]
        await asyncio.to_thread(bucket.put_from_thread, 4, written(Change("ratifications", "adr-1", {"status": "ratified"})))
        await bucket.flush()
        bucket.write = working  # type: ignore[method-assign]
        assert bucket.repair is not None  # scheduled once the put handed over by the projector's thread failed
        await asyncio.wait_for(bucket.repair, 10)
        return await contents(bucket)

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
                bucket.put_from_thread(position, written(Change("pending", "bob", {"items": [position]}),
                                                  Change("pending", f"agent-{position % 3}", {"n": position})))

        await asyncio.to_thread(project)
        await bucket.flush()
        raw = await bucket.js.get_msg(bucket.stream, subject=bucket.prefix + "pending.bob")
        return await contents(bucket), raw.headers[POSITION]

    held, position = with_bucket(nats_server.url, scenario)
    assert held == {"pending.bob": b'{"items":[50]}', "pending.agent-0": b'{"n":48}', "pending.agent-1": b'{"n":49}',
                    "pending.agent-2": b'{"n":50}'}
    assert position == "50"


async def forge(bucket: ViewBucket, entries: dict[str, tuple[int, bytes]], head: int) -> None:
    """Entries put as anyone holding the services' key could, claiming any position, beside a
    ledger whose last position is ``head``."""
    assert bucket.ledger is not None
    await bucket.js.add_stream(name=bucket.ledger, subjects=[f"{bucket.ledger}.>"])
    for _ in range(head):
        await bucket.js.publish(f"{bucket.ledger}.x", b"")
    for key, (position, value) in entries.items():
        await bucket.js.publish(bucket.prefix + key, value, headers={POSITION: str(position)}, stream=bucket.stream)


def test_forged_entries_are_replaced_and_a_replica_further_on_is_left_alone(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    store = ReadModelStore(str(tmp_path / "views.sqlite"))
    store.apply("views", 5, written(Change("fleet/quorum", "0000BEEF", {"status": "accepted"}),
                             Change("pending", "bob", {"items": [1]})))

    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[dict[str, bytes], dict[str, bytes]]:
        await forge(bucket, {
            "fleet/quorum/0000BEEF": (10**9, b'{"status":"rejected"}'),  # past the ledger's head: no replica's
            "pending.bob": (12, b'{"items":[]}'),  # further on than the views: judged when they get there
            "pending.carol": (15, b'{"items":[2]}'),  # as a replica further on wrote it
            "pending.dave": (3, b'{"items":[3]}'),  # a document the views do not have
        }, head=20)
        await bucket.catch_up(5)
        at_start = await contents(bucket)
        store.apply("views", 15, written(Change("pending", "carol", {"items": [2]})))  # the views reach them
        await asyncio.to_thread(bucket.put_from_thread, 15, written(Change("pending", "carol", {"items": [2]})))
        await bucket.flush()
        return at_start, await contents(bucket)

    try:
        at_start, later = with_bucket(nats_server.url, scenario, store)
    finally:
        store.close()
    assert at_start == {"fleet/quorum/0000BEEF": b'{"status":"accepted"}', "pending.bob": b'{"items":[]}',
                        "pending.carol": b'{"items":[2]}'}
    assert later == {"fleet/quorum/0000BEEF": b'{"status":"accepted"}', "pending.bob": b'{"items":[1]}',
                     "pending.carol": b'{"items":[2]}'}


def test_a_put_lands_over_an_entry_that_claims_a_position_past_the_ledger(nats_server: NatsServer) -> None:
    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[dict[str, bytes], str]:
        await forge(bucket, {"ratifications.adr-7": (10**9, b'{"status":"RATIFIED"}'),
                             "ratifications.adr-8": (9, b'{"status":"OPEN"}')}, head=20)
        await bucket.put(6, written(Change("ratifications", "adr-7", {"status": "OPEN"}),
                             Change("ratifications", "adr-8", {"status": "RATIFIED"})))
        raw = await bucket.js.get_msg(bucket.stream, subject=bucket.prefix + "ratifications.adr-7")
        return await contents(bucket), raw.headers[POSITION]

    held, position = with_bucket(nats_server.url, scenario)
    # A replica further on (at 9) is not rolled back; the forgery is.
    assert held == {"ratifications.adr-7": b'{"status":"OPEN"}', "ratifications.adr-8": b'{"status":"OPEN"}'}
    assert position == "6"


def test_an_auditor_reads_the_whole_bucket_with_message_gets_alone(nats_server: NatsServer) -> None:
    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[dict[str, Entry] | None, dict[str, Entry], None]:
        for position in range(1, 120):  # keys put again and again leave gaps in the stream
            await bucket.put(position, written(Change("pending", f"agent-{position % 7}", {"n": position}),
                                        Change("pending", "gone", None if position % 2 else {"n": position})))
        await kv.put("pending.unstamped", b"{}")
        await bucket.js.publish(bucket.prefix + "pending.odd", b"{}", headers={POSITION: "x1"}, stream=bucket.stream)
        client = await JetStreamClient.connect([nats_server.url], 5.0, name="auditor")
        try:
            got = await entries_got(client, bucket.bucket)
            missing = await entries_got(client, "no-such-bucket")
        finally:
            await client.close()
        return got, await entries_watched(bucket.js, bucket.bucket), missing

    got, watched, missing = with_bucket(nats_server.url, scenario)
    assert got == watched and len(got) == 10 and missing is None
    assert got["pending.gone"].value is None and got["pending.agent-0"].position == 119 - 119 % 7
    assert got["pending.unstamped"].position == got["pending.odd"].position == 0  # no position said, or none readable


def test_a_new_bucket_on_one_replica_does_not_wait_for_the_disk(nats_server: NatsServer) -> None:
    """Made again from the views at every start, the bucket is written without an fsync per put
    (the ledger keeps them); a KV client still binds to it, and reads and watches it."""
    async def scenario(bucket: ViewBucket, kv: KeyValue) -> tuple[str | None, bytes]:
        await bucket.put(3, written(Change("ratifications", "adr-7", {"status": "open"})))
        info = await bucket.js.stream_info(bucket.stream)
        return info.config.persist_mode, (await kv.get("ratifications.adr-7")).value

    mode, value = with_bucket(nats_server.url, scenario)
    assert mode == "async"
    assert value == b'{"status":"open"}'
