"""Our own guarantees of the JetStream store, beyond eventsourcing's suites."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from uuid import UUID

import msgspec
import nats
import psutil
import pytest
from eventsourcing.persistence import IntegrityError, OperationalError, ProgrammingError, StoredEvent, Tracking
from eventsourcing.utils import Environment

from athenaeum.services.jetstream import JetStreamFactory
from athenaeum.services.jetstream.client import JetStreamClient
from athenaeum.services.jetstream import applied as stored_commands
from athenaeum.services.jetstream.command_records import INLINE_RECORD, CommandAlreadyApplied, CommandAppend, record_of
from athenaeum.services.jetstream.connection import Settings
from athenaeum.services.jetstream.entries import Entry
from athenaeum.services.jetstream.read_ahead import entries_from
from athenaeum.services.runtime.nats_server import NatsCluster
from tests.conftest import new_stream_name


def stored(originator_id: UUID | str, version: int, state: bytes = b"{}") -> StoredEvent:
    return StoredEvent(originator_id=originator_id, originator_version=version, topic="Tested", state=state)


@pytest.fixture
def factory(store_env: dict[str, str]):
    factory = JetStreamFactory(Environment(env=store_env))
    yield factory
    factory.close()


def race(env: dict[str, str], writers: int) -> list[str]:
    """``writers`` processes-worth of factories each try to append version 2 of one aggregate."""
    aggregate = f"race/{uuid.uuid4()}"
    factories = [JetStreamFactory(Environment(env=env)) for _ in range(writers)]
    try:
        factories[0].application_recorder().insert_events([stored(aggregate, 1)])
        recorders = [f.application_recorder() for f in factories]
        start = threading.Barrier(writers)

        def write(number: int) -> str:
            start.wait(timeout=10)
            try:
                recorders[number].insert_events([stored(aggregate, 2, str(number).encode())])
                return "won"
            except IntegrityError:
                return "lost"

        with ThreadPoolExecutor(writers) as pool:
            outcomes = list(pool.map(write, range(writers)))
        assert len(recorders[0].select_events(aggregate)) == 2
        return outcomes
    finally:
        for f in factories:
            f.close()


def test_twenty_writers_racing_on_one_version_yield_exactly_one_success(store_env) -> None:
    outcomes = race(store_env, 20)
    assert outcomes.count("won") == 1 and outcomes.count("lost") == 19


def test_on_a_three_node_cluster_with_an_r3_stream_too(nats_cluster: NatsCluster) -> None:
    env = {
        "ATHENAEUM_NATS_URL": ",".join(nats_cluster.urls),
        "ATHENAEUM_STREAM": new_stream_name(),
        "ATHENAEUM_REPLICAS": "3",
    }
    outcomes = race(env, 20)
    assert outcomes.count("won") == 1 and outcomes.count("lost") == 19


def test_on_an_r3_stream_an_acknowledged_write_reads_back_at_once_from_any_node(nats_cluster: NatsCluster) -> None:
    # Any replica may answer a direct get, one still applying the latest writes too; other
    # writers' traffic keeps the followers a little behind.
    env = {
        "ATHENAEUM_NATS_URL": ",".join(nats_cluster.urls),
        "ATHENAEUM_STREAM": new_stream_name(),
        "ATHENAEUM_REPLICAS": "3",
    }
    writing = JetStreamFactory(Environment(env=env))
    traffic_stops = threading.Event()

    def traffic() -> None:
        recorder = writing.application_recorder()
        for _ in range(2000):  # bounded, though the readers stop it long before
            if traffic_stops.is_set():
                return
            recorder.insert_events([stored(uuid.uuid4(), 1, b"y" * 2000) for _ in range(50)])

    background = threading.Thread(target=traffic)
    background.start()
    missed = []
    try:
        for url in nats_cluster.urls:  # a reader on each node: its own replica answers it first
            factory = JetStreamFactory(Environment(env=env | {"ATHENAEUM_NATS_URL": url}))
            recorder = factory.application_recorder()
            for _ in range(60):
                aggregate = f"ryw/{uuid.uuid4()}"
                [position] = recorder.insert_events([stored(aggregate, 1)])
                if not recorder.select_events(aggregate):
                    missed.append(("select_events", url))
                if not recorder.select_notifications(position, 1):
                    missed.append(("select_notifications", url))
            factory.close()
    finally:
        traffic_stops.set()
        background.join(timeout=60)
        writing.close()
    assert missed == []


def test_an_insert_whose_second_aggregate_conflicts_stores_nothing(factory) -> None:
    recorder = factory.application_recorder()
    first, second = f"a/{uuid.uuid4()}", f"b/{uuid.uuid4()}"
    recorder.insert_events([stored(second, 1)])
    before = recorder.max_notification_id()
    with pytest.raises(IntegrityError):
        recorder.insert_events([stored(first, 1), stored(second, 1)])
    assert recorder.select_events(first) == []
    assert recorder.max_notification_id() == before


def test_an_insert_that_lost_a_race_to_another_process_stores_nothing(store_env) -> None:
    with JetStreamFactory(Environment(env=store_env)) as one, JetStreamFactory(Environment(env=store_env)) as other:
        aggregate, bystander = f"a/{uuid.uuid4()}", f"b/{uuid.uuid4()}"
        mine = one.application_recorder()
        mine.insert_events([stored(aggregate, 1)])  # caches the head of the aggregate
        other.application_recorder().insert_events([stored(aggregate, 2)])
        with pytest.raises(IntegrityError):
            mine.insert_events([stored(bystander, 1), stored(aggregate, 2)])
        assert mine.select_events(bystander) == []
        mine.insert_events([stored(aggregate, 3)])  # the stale head was refreshed
        assert [e.originator_version for e in mine.select_events(aggregate)] == [1, 2, 3]


def test_reading_after_the_known_head_finds_what_another_process_appended(store_env) -> None:
    # A cached aggregate's fast-forward: nothing new, one new event, then several.
    with JetStreamFactory(Environment(env=store_env)) as one, JetStreamFactory(Environment(env=store_env)) as other:
        aggregate = f"ff/{uuid.uuid4()}"
        mine, theirs = one.application_recorder(), other.application_recorder()
        mine.insert_events([stored(aggregate, 1)])
        assert mine.select_events(aggregate, gt=1) == []
        theirs.insert_events([stored(aggregate, 2)])
        assert [e.originator_version for e in mine.select_events(aggregate, gt=1)] == [2]
        theirs.insert_events([stored(aggregate, 3), stored(aggregate, 4)])
        assert [e.originator_version for e in mine.select_events(aggregate, gt=2)] == [3, 4]
        assert [e.originator_version for e in mine.select_events(aggregate, gt=4)] == []
        mine.insert_events([stored(aggregate, 5)])  # the head it read is the one it expects
        assert [e.originator_version for e in mine.select_events(aggregate, gt=4)] == [5]  # its own, cached at 4


def test_more_than_the_batch_limit_is_refused_whole(factory) -> None:
    recorder = factory.application_recorder()
    aggregate = f"big/{uuid.uuid4()}"
    with pytest.raises(ProgrammingError, match="at most 1000"):
        recorder.insert_events([stored(aggregate, version) for version in range(1, 1002)])
    assert recorder.select_events(aggregate) == []
    assert recorder.max_notification_id() is None


def test_a_thousand_events_is_one_atomic_batch(factory) -> None:
    recorder = factory.application_recorder()
    ids = recorder.insert_events([stored(f"agg/{n % 7}", n) for n in range(1, 1001)])
    assert ids == list(range(1, 1001))


AWKWARD_IDS = [
    "with spaces in it",
    "dots.in.the.id",
    "concepts/canon.md",
    "star*and>gt",
    "ünïcødé-页面",
    "~7E",
    "a~2Eb",
    "a.b",
    "",
    "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
    UUID("1b4e28ba-2fa1-11d2-883f-0016d3cca427"),
    "页" * 500,  # escaped, far longer than a subject may be
    "页" * 500 + "!",
]


def test_more_concurrent_batches_than_the_server_takes_in_flight_all_land(factory) -> None:
    # The server refuses a stream's 51st atomic batch in flight; one process's inserts never
    # reach that many, however many threads write at once.
    recorder = factory.application_recorder()
    inserts = 300

    def insert(number: int) -> None:
        recorder.insert_events([stored(f"busy/{number}", version, b"x" * 2000) for version in range(1, 200)])

    with ThreadPoolExecutor(150) as pool:
        list(pool.map(insert, range(inserts)))
    assert recorder.max_notification_id() == inserts * 199


def test_a_batch_the_server_turns_away_while_others_hold_every_slot_lands_once_one_frees(
    factory, store_env, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = factory.application_recorder()
    stream = store_env["ATHENAEUM_STREAM"]
    loop = asyncio.new_event_loop()
    other = loop.run_until_complete(nats.connect(store_env["ATHENAEUM_NATS_URL"]))
    held = [uuid.uuid4().hex for _ in range(50)]  # another writer's batches, begun, not committed
    for n, batch in enumerate(held):
        loop.run_until_complete(other.publish(f"{stream}.other.{n}", b"x", reply=other.new_inbox(),
                                              headers={"Nats-Batch-Id": batch, "Nats-Batch-Sequence": "1"}))
    loop.run_until_complete(other.flush())
    outcome: list[object] = []
    caplog.set_level(logging.INFO, logger="athenaeum.services.jetstream.client")
    writer = threading.Thread(target=lambda: outcome.append(recorder.insert_events([stored("held", 1), stored("held", 2)])))
    writer.start()
    deadline = time.monotonic() + 10
    while not any("turned away" in record.message for record in caplog.records):
        assert time.monotonic() < deadline, "the batch was never turned away"
        time.sleep(0.005)  # polling the log: the condition, bounded by the deadline
    commit = {"Nats-Batch-Sequence": "2", "Nats-Batch-Commit": "1"}
    for n, batch in enumerate(held):  # the other writer finishes: the slots free up
        loop.run_until_complete(other.request(f"{stream}.other.{n}", b"y", headers=commit | {"Nats-Batch-Id": batch}))
    writer.join(timeout=10)
    loop.run_until_complete(other.close())
    loop.close()
    assert outcome and [e.originator_version for e in recorder.select_events("held")] == [1, 2]


def test_awkward_ids_round_trip_without_colliding(factory) -> None:
    recorder = factory.application_recorder()
    recorder.insert_events([stored(i, 1, repr(i).encode()) for i in AWKWARD_IDS])
    for originator_id in AWKWARD_IDS:
        [event] = recorder.select_events(originator_id)
        assert event.originator_id == originator_id and type(event.originator_id) is type(originator_id)
        assert event.state == repr(originator_id).encode()
    notified = recorder.select_notifications(start=None, limit=100)
    assert [n.originator_id for n in notified] == AWKWARD_IDS


def test_an_id_too_long_to_carry_is_refused_clearly_and_nothing_is_written(factory) -> None:
    recorder = factory.application_recorder()
    with pytest.raises(ProgrammingError, match="at most 32,768"):
        recorder.insert_events([stored("a" * 70_000, 1)])
    assert recorder.max_notification_id() is None


def test_a_load_after_a_snapshot_reads_only_the_tail(store_env) -> None:
    aggregate = f"long/{uuid.uuid4()}"
    with JetStreamFactory(Environment(env=store_env)) as writer:
        events = writer.application_recorder()
        events.insert_events([stored(aggregate, v) for v in range(1, 501)])
        # Interleave other aggregates so the tail is not at the start of the stream.
        events.insert_events([stored(f"other/{n}", 1) for n in range(200)])
        writer.aggregate_recorder("snapshots").insert_events([stored(aggregate, 500)])
        events.insert_events([stored(aggregate, 501)])
    with JetStreamFactory(Environment(env=store_env)) as reader:  # a fresh process knows nothing
        snapshots, events = reader.aggregate_recorder("snapshots"), reader.application_recorder()
        [snapshot] = snapshots.select_events(aggregate, desc=True, limit=1)
        subject = events.log.subjects.aggregate(aggregate)
        assert events.log.positions.start_after(subject, snapshot.originator_version) == 501
        assert [e.originator_version for e in events.select_events(aggregate, gt=500)] == [501]


def test_a_message_another_publisher_put_on_an_aggregate_subject_is_passed_over(store_env) -> None:
    # Nothing stops a client publishing raw on the event subjects, and the stream denies deletes.
    first = JetStreamFactory(Environment(env=store_env))
    first.application_recorder().insert_events([stored("page", 1)])
    subject = first.events_log.subjects.aggregate("page")

    async def intrude() -> None:
        nc = await nats.connect(store_env["ATHENAEUM_NATS_URL"])
        await nc.jetstream().publish(subject, b"hello")
        await nc.close()

    asyncio.run(intrude())
    first.close()
    later = JetStreamFactory(Environment(env=store_env))  # knows nothing of the subject yet
    try:
        recorder = later.application_recorder()
        assert [e.originator_version for e in recorder.select_events("page", desc=True, limit=1)] == [1]
        with pytest.raises(IntegrityError):
            recorder.insert_events([stored("page", 1)])
        recorder.insert_events([stored("page", 2)])
        assert [e.originator_version for e in recorder.select_events("page")] == [1, 2]
        assert [e.originator_version for e in recorder.select_events("page", desc=True, limit=1)] == [2]
    finally:
        later.close()


def test_a_snapshot_older_than_the_latest_is_dropped_and_a_duplicate_refused(factory) -> None:
    # Two processes snapshotting one aggregate may finish out of order; a save must not fail
    # after its events were recorded because the other one's snapshot landed first.
    factory.application_recorder().insert_events([stored("snapped", version) for version in range(1, 7)])
    snapshots = factory.aggregate_recorder("snapshots")
    snapshots.insert_events([stored("snapped", 6)])
    snapshots.insert_events([stored("snapped", 3)])
    assert [s.originator_version for s in snapshots.select_events("snapped")] == [6]
    with pytest.raises(IntegrityError):
        snapshots.insert_events([stored("snapped", 6)])
    events = factory.application_recorder()
    events.insert_events([stored("told", 6)])
    with pytest.raises(IntegrityError):  # events, unlike snapshots, never go back
        events.insert_events([stored("told", 3)])


def test_the_stream_is_created_append_only_with_atomic_batches_and_direct_gets(factory) -> None:
    config = factory.connection.run(factory.connection.client.stream_info(factory.events_log.stream))["config"]
    assert config["allow_atomic"] and config["allow_direct"]
    assert config["deny_delete"] and config["deny_purge"]


def test_closing_the_factory_ends_its_connection_and_thread(store_env) -> None:
    before = {thread.ident for thread in threading.enumerate()}
    factory = JetStreamFactory(Environment(env=store_env))
    factory.application_recorder().insert_events([stored("x", 1)])
    factory.close()
    assert factory.connection.client.nc.is_closed
    assert {thread.ident for thread in threading.enumerate()} <= before


def test_a_recorder_nothing_refers_to_any_more_ends_its_connection_and_thread(store_env) -> None:
    # eventsourcing's ProjectionRunner makes a factory for its view and never closes it.
    before = {thread.ident for thread in threading.enumerate()}
    view = JetStreamFactory(Environment(env=store_env)).tracking_recorder()
    view.insert_tracking(Tracking(application_name="upstream", notification_id=1))
    client = view.connection.client
    started = [thread for thread in threading.enumerate() if thread.ident not in before]
    del view
    gc.collect()  # the connection closes on its own loop, unwaited: its thread ends after
    for thread in started:
        thread.join(timeout=10)
    assert client.nc.is_closed
    assert {thread.ident for thread in threading.enumerate()} <= before


def test_a_multi_event_insert_reaches_a_live_subscriber_within_milliseconds(factory) -> None:
    recorder = factory.application_recorder()
    with recorder.subscribe(gt=recorder.max_notification_id()) as subscription:
        latencies = []
        for round_ in range(5):
            started = time.monotonic()
            recorder.insert_events([stored(f"burst/{round_}", 1), stored(f"burst/{round_}", 2)])
            next(subscription), next(subscription)
            latencies.append(time.monotonic() - started)
    # The poll interval is 250 ms; a wake-up must do much better than that.
    assert sorted(latencies)[2] < 0.1, latencies


def test_a_batch_ending_in_a_commands_marker_or_a_tracking_record_wakes_a_live_subscriber_too(factory) -> None:
    recorder, log, run = factory.process_recorder(), factory.events_log, factory.connection.run
    appends = [lambda n: run(log.append([stored(f"marked/{n}", 1)], command=CommandAppend(f"{n:032d}", record(),
                                                                                            global_id=True))),
               lambda n: recorder.insert_events([stored(f"tracked/{n}", 1)], tracking=Tracking("upstream", n + 1))]
    with recorder.subscribe(gt=recorder.max_notification_id()) as subscription:
        latencies = []
        for n in range(6):  # a batch's last message, on a subject of no event, commits it
            started = time.monotonic()
            appends[n % 2](n)
            next(subscription)
            latencies.append(time.monotonic() - started)
    assert sorted(latencies)[3] < 0.1, latencies


def test_a_factory_closed_under_a_live_subscription_ends_it_at_once_with_a_clear_error(store_env) -> None:
    factory = JetStreamFactory(Environment(env=store_env))
    recorder = factory.application_recorder()
    subscription = recorder.subscribe(gt=recorder.max_notification_id())
    started = time.monotonic()
    factory.close()
    assert time.monotonic() - started < 2  # the follower is no operation to wait for
    with pytest.raises(ProgrammingError, match="closed"):
        next(subscription)


def test_a_subscription_to_rare_topics_reads_the_tail_it_passed_over_once(factory, monkeypatch) -> None:
    read = []
    original = JetStreamClient._read

    async def counted(self, stream, subject, start, limit):  # type: ignore[no-untyped-def]
        messages, more = await original(self, stream, subject, start, limit)
        read.append(len(messages))
        return messages, more

    monkeypatch.setattr(JetStreamClient, "_read", counted)
    recorder = factory.application_recorder()
    recorder.insert_events([stored(uuid.uuid4(), 1) for _ in range(1000)])
    recorder.insert_events([stored(uuid.uuid4(), 1) for _ in range(1000)])
    with recorder.subscribe(gt=0, topics=["Rare"]) as subscription:
        for _ in range(5):  # each wakes the subscription up, and matches nothing
            recorder.insert_events([stored(uuid.uuid4(), 1)])
        rare = StoredEvent(originator_id=uuid.uuid4(), originator_version=1, topic="Rare", state=b"{}")
        [position] = recorder.insert_events([rare])
        assert next(subscription).id == position
    # The 2,005 others once, give or take a wake-up: not again at every wake-up.
    assert sum(read) < 2 * 2005, sum(read)


def test_a_long_tracking_application_name_works(factory) -> None:
    recorder = factory.process_recorder()
    name = "upstream-" + "x" * 1000
    recorder.insert_events([stored("p", 1)], tracking=Tracking(name, 7))
    assert recorder.max_tracking_id(name) == 7


def record(events: int = 1, size: int = 0) -> bytes:
    return b'{"events": %d, "pad": "%s"}' % (events, b"x" * size)


def test_a_command_of_one_event_is_one_message_carrying_its_key_and_record(factory) -> None:
    log, run = factory.events_log, factory.connection.run
    [seq] = run(log.append([stored("voted", 1)], command=CommandAppend("t" * 32, record())))
    first = run(stored_commands.first_of_command(log, "voted", "t" * 32))
    assert first.seq == seq and first.subject == log.subjects.aggregate("voted") and record_of(first) == record()
    applied = run(stored_commands.applied(log, first))
    assert [message.seq for message in applied.events] == [seq] and applied.record == record()
    assert run(stored_commands.first_of_command(log, "voted", "u" * 32)) is None and run(stored_commands.first_of_command(log, "other", "t" * 32)) is None


def test_a_command_of_several_events_is_found_whole_from_its_own_aggregate(factory) -> None:
    log, run = factory.events_log, factory.connection.run
    events = [stored("counter", 1), stored("task:1", 1), stored("task:1", 2)]
    seqs = run(log.append(events, command=CommandAppend("c" * 32, record(3))))
    applied = run(stored_commands.applied(log, run(stored_commands.first_of_command(log, "counter", "c" * 32))))
    assert [message.seq for message in applied.events] == seqs
    assert [message.headers["Athenaeum-Version"] for message in applied.events] == ["1", "1", "2"]
    assert "Athenaeum-Command-Key" not in applied.events[1].headers  # only the first carries the command


def test_a_command_with_an_id_for_everyone_writes_a_marker_and_applies_once(factory) -> None:
    log, run = factory.events_log, factory.connection.run
    command = CommandAppend("g" * 32, record(), global_id=True)
    [seq] = run(log.append([stored("voted", 1)], command=command))
    with pytest.raises(CommandAlreadyApplied) as caught:
        run(log.append([stored("other", 1)], command=command))
    assert caught.value.marker.seq == seq + 1 and caught.value.marker.payload == record()
    assert recorder_events(factory, "other") == []
    assert [message.seq for message in run(stored_commands.applied_marker(log, "g" * 32)).events] == [seq]


def test_a_record_too_large_for_a_header_goes_in_a_marker(factory) -> None:
    log, run = factory.events_log, factory.connection.run
    big = record(size=INLINE_RECORD)
    [seq] = run(log.append([stored("page", 1)], command=CommandAppend("b" * 32, big)))
    first = run(stored_commands.first_of_command(log, "page", "b" * 32))
    applied = run(stored_commands.applied(log, first))
    assert applied.record == big and [message.seq for message in applied.events] == [seq]
    assert record_of(first) is None


def recorder_events(factory, originator_id: str) -> list[StoredEvent]:
    return list(factory.application_recorder().select_events(originator_id))


def test_a_stream_of_another_layout_is_refused_and_an_empty_one_adopted(store_env: dict[str, str]) -> None:
    async def make(name: str, publish: bool) -> None:
        nc = await nats.connect(store_env["ATHENAEUM_NATS_URL"])
        js = nc.jetstream()
        await js.add_stream(name=name, subjects=[f"{name}.>"], allow_direct=True, deny_delete=True, deny_purge=True)
        await nc.request(f"$JS.API.STREAM.UPDATE.{name}", msgspec.json.encode(
            {"name": name, "subjects": [f"{name}.>"], "allow_direct": True, "allow_atomic": True,
             "deny_delete": True, "deny_purge": True}))
        if publish:
            await js.publish(f"{name}.ev.s.old", b"{}")
        await nc.close()

    old, empty = new_stream_name(), new_stream_name()
    asyncio.run(make(old, True))
    asyncio.run(make(empty, False))
    with pytest.raises(ProgrammingError, match="layout 1 of Athenaeum"):
        JetStreamFactory(Environment(env=store_env | {"ATHENAEUM_STREAM": old})).events_log
    adopted = JetStreamFactory(Environment(env=store_env | {"ATHENAEUM_STREAM": empty}))
    try:
        adopted.application_recorder().insert_events([stored("a", 1)])
        info = adopted.connection.run(adopted.connection.client.stream_info(empty))
        assert info["config"]["metadata"]["athenaeum_layout"] == "2"
    finally:
        adopted.close()


def test_every_message_is_read_however_large_the_batch(factory) -> None:
    recorder = factory.application_recorder()
    for version in range(1, 11):  # 10 MiB: more than one direct get's reply holds
        recorder.insert_events([stored("large", version, b'"' + b"x" * (1024 * 1024) + b'"')])
    assert [message.seq for message in recorder.select_messages(1, 1000)] == list(range(1, 11))


def test_a_stream_read_ahead_by_a_process_of_its_own_gives_every_entry_as_a_read_here(factory) -> None:
    recorder = factory.application_recorder()
    for version in range(1, 2501):  # more than one of the worker's batches
        recorder.insert_events([stored("ahead", version, b'{"n": %d}' % version)])
    here = [Entry.of(message) for message in recorder.select_messages(7, 3000)]
    assert list(recorder.read_ahead(7)) == here and len(here) == 2494


def test_a_read_ahead_stopped_early_stops_its_process(factory) -> None:
    recorder = factory.application_recorder()
    for version in range(1, 1201):
        recorder.insert_events([stored("early", version)])
    reading = recorder.read_ahead(1)
    assert next(reading).position == 1
    reading.close()  # the reader's process is killed and reaped: nothing is left running
    assert not [child for child in psutil.Process().children() if "read_ahead_worker" in " ".join(child.cmdline())]


def test_a_read_ahead_that_cannot_read_says_why(store_env) -> None:
    settings = Settings([store_env["ATHENAEUM_NATS_URL"]], 2.0, "test")
    with pytest.raises(OperationalError, match="reading NOSUCHSTREAM ahead failed"):
        list(entries_from(settings, "NOSUCHSTREAM", "NOSUCHSTREAM.>", 1))


async def test_a_read_waits_out_a_stream_whose_direct_gets_no_server_answers_yet(store_env) -> None:
    """A stream just made on a cluster, or whose leader just moved, may have no server answering
    direct gets for a moment (status 503): a read asks again for a bounded while, then says so."""
    url, name = store_env["ATHENAEUM_NATS_URL"], new_stream_name()
    nc = await nats.connect(url)
    js = nc.jetstream()
    config = nats.js.api.StreamConfig(name=name, subjects=[f"{name}.>"], allow_direct=False)
    await js.add_stream(config)
    await js.publish(f"{name}.a", b"1")
    client = await JetStreamClient.connect([url], 5, "test")
    try:
        started = time.monotonic()
        with pytest.raises(OperationalError, match="503"):
            await client.read(name, f"{name}.a", 1, 10)
        assert time.monotonic() - started > 1  # asked again before it said so

        async def answering_soon() -> None:
            await asyncio.sleep(0.05)
            await js.update_stream(nats.js.api.StreamConfig(name=name, subjects=[f"{name}.>"], allow_direct=True))

        (messages, _), _ = await asyncio.gather(client.read(name, f"{name}.a", 1, 10), answering_soon())
        assert [message.payload for message in messages] == [b"1"]
    finally:
        await client.close()
        await nc.close()
