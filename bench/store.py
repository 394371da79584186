"""Benchmarks of the JetStream event store, each against a baseline measured in the same run.

    python -m bench.store            # full sizes (about a minute on 2 cores)
    python -m bench.store --quick    # smaller sizes, for a smoke run

Figures:
1. insert_events of single events vs raw JetStream publish-with-ack (same server, same fsync);
2. get-decide-save through the Application: JetStream vs eventsourcing's SQLite file recorder,
   and vs POPO (in memory), from 1, 8 and 16 threads at once (a command service serves many
   agents at a time; both stores fsync every write, SQLite serialises its writers); and the
   floor of any JetStream store from one thread (one raw direct get and one raw
   publish-with-ack per operation, nothing else) vs SQLite, which bounds what 1 thread can reach,
   and the same floor asked for by a synchronous caller (nats-py on an event loop of another
   thread, as any synchronous store on it runs): what crossing threads costs, and the store's
   own overhead apart from it;
3. replay through ``subscribe`` vs a raw nats-py ordered consumer over the same stream;
4. loading an aggregate of 10,000 events vs one of 10, in a stream of 200,000, with snapshots.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import msgspec
from athenaeum.aggregates.application import AthenaeumApplication, EventMapper
from athenaeum.aggregates.state import AggregateState, fold
from athenaeum.events import Event
from athenaeum.services.jetstream import JetStreamFactory
from athenaeum.services.runtime.nats_server import NatsServer
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import Environment

from bench.baselines import raw_get_publish_rate, raw_get_publish_rate_from_a_thread, raw_publish_rate, raw_replay_rate


class Bumped(Event, tag="BenchBumped"):
    by: int


class Counter(AggregateState, tag="BenchCounter"):
    total: int = 0


def evolve(state: Counter | None, event: Event) -> Counter:
    assert isinstance(event, Bumped)
    if state is None:
        return Counter(id=event.originator_id, version=event.originator_version, total=event.by)
    return msgspec.structs.replace(state, total=state.total + event.by)


project = fold(evolve)
NOW = datetime(2026, 11, 30, tzinfo=timezone.utc)


def bumped(aggregate: str, version: int) -> Bumped:
    return Bumped(originator_id=aggregate, originator_version=version, timestamp=NOW, actor="bench", command_id="", by=1)


def rate(count: int, action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return count / (time.perf_counter() - started)


def report(name: str, figure: float, unit: str, baseline_name: str, baseline: float, target: str = "") -> None:
    ratio = figure / baseline
    print(f"{name:<46} {figure:>12,.1f} {unit:<8} {baseline_name:<30} {baseline:>12,.1f}  ratio {ratio:5.2f}x {target}")


def stream_env(server: NatsServer) -> dict[str, str]:
    return {
        "PERSISTENCE_MODULE": "athenaeum.services.jetstream",
        "ATHENAEUM_NATS_URL": server.url,
        "ATHENAEUM_STREAM": f"BENCH{uuid.uuid4().hex[:8].upper()}",
    }


def publish_rates(server: NatsServer, count: int) -> None:
    env = stream_env(server)
    factory = JetStreamFactory(Environment(env=env))
    recorder = factory.application_recorder()

    raw_rate = asyncio.run(raw_publish_rate(server.url, f"{env['ATHENAEUM_STREAM']}.raw", count))
    mapper = EventMapper(transcoder=None)  # type: ignore[arg-type]
    singles = [mapper.to_stored_event(bumped(f"single/{n}", 1)) for n in range(count)]
    insert_rate = rate(count, lambda: [recorder.insert_events([event]) for event in singles])
    factory.close()
    report("insert_events, one event each", insert_rate, "ev/s", "raw publish-with-ack", raw_rate)


def get_decide_save(env: dict[str, str], count: int, workers: int) -> float:
    """Commands from ``workers`` threads at once, each on aggregates of its own, as a command
    service runs them; every command loads (cache + tail), decides and saves one event."""
    app = AthenaeumApplication(env=env | {"AGGREGATE_CACHE_MAXSIZE": "1000"})

    def worker(number: int) -> None:
        aggregates = [f"gds/{number}/{n}" for n in range(10)]
        for n in range(count // workers):
            aggregate = aggregates[n % len(aggregates)]
            try:
                version = app.repository.get(aggregate, projector_func=project).version + 1
            except AggregateNotFoundError:
                version = 1
            app.save(bumped(aggregate, version))

    def run() -> None:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(worker, range(workers)))

    result = rate(count // workers * workers, run)
    app.close()
    return result


def get_decide_save_rates(server: NatsServer, count: int, workdir: Path) -> None:
    for workers in (1, 8, 16):
        stores = {
            "JetStream": stream_env(server),
            "SQLite file": {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": str(workdir / f"bench-{workers}.sqlite"),
                "ORIGINATOR_ID_TYPE": "text",
            },
            "POPO (memory)": {"PERSISTENCE_MODULE": "eventsourcing.popo"},
        }
        rates = {name: get_decide_save(env, count, workers) for name, env in stores.items()}
        label = f"get-decide-save, {workers} thread{'s' if workers > 1 else ''}, JetStream"
        # One thread cannot beat SQLite's whole operation with a network round trip and an
        # fsync'd publish: its target is the floor of any JetStream store instead.
        target = "(target >= 1.0x)" if workers > 1 else ""
        report(label, rates["JetStream"], "ops/s", "same on SQLite file", rates["SQLite file"], target)
        report(label, rates["JetStream"], "ops/s", "same on POPO (memory)", rates["POPO (memory)"])
        if workers == 1:
            floor, synchronous = floor_rates(server, count)
            report(label, rates["JetStream"], "ops/s", "floor: raw direct get + publish", floor, "(target >= 0.85x)")
            report("floor: raw direct get + publish, 1 thread", floor, "ops/s", "same on SQLite file", rates["SQLite file"])
            # What no synchronous store on nats-py passes: the floor, each round trip asked
            # for from another thread than the event loop's; and ours against it.
            report("floor from a synchronous caller", synchronous, "ops/s", "floor: raw direct get + publish", floor)
            report(label, rates["JetStream"], "ops/s", "floor from a synchronous caller", synchronous)


def floor_rates(server: NatsServer, count: int) -> tuple[float, float]:
    """The floor of a get-decide-save on JetStream, in raw nats-py on its own event loop and
    asked for by a synchronous caller, on a stream configured as the store configures its own."""
    env = stream_env(server)
    factory = JetStreamFactory(Environment(env=env))
    try:
        factory.application_recorder()  # creates the stream as the store configures it
        stream = env["ATHENAEUM_STREAM"]
        floor = asyncio.run(raw_get_publish_rate(server.url, stream, f"{stream}.floor", count))
        return floor, raw_get_publish_rate_from_a_thread(server.url, stream, f"{stream}.floor", count)
    finally:
        factory.close()


def fill(recorder, events: list[StoredEvent]) -> None:
    for start in range(0, len(events), 1000):
        recorder.insert_events(events[start : start + 1000])


def replay_rates(server: NatsServer, count: int) -> None:
    env = stream_env(server)
    factory = JetStreamFactory(Environment(env=env))
    recorder = factory.application_recorder()
    mapper = EventMapper(transcoder=None)  # type: ignore[arg-type]
    fill(recorder, [mapper.to_stored_event(bumped(f"replay/{n % 1000}", n // 1000 + 1)) for n in range(count)])

    raw_rate = asyncio.run(raw_replay_rate(server.url, f"{env['ATHENAEUM_STREAM']}.ev.>", count))

    def through_subscribe() -> None:
        with recorder.subscribe(gt=0) as subscription:
            for seen, _ in enumerate(subscription, start=1):
                if seen == count:
                    break

    subscribe_rate = rate(count, through_subscribe)
    factory.close()
    report("replay through subscribe()", subscribe_rate, "ev/s", "raw ordered consumer", raw_rate, "(target >= 0.5x)")


def load_times(server: NatsServer, stream_size: int, big: int, small: int) -> None:
    env = stream_env(server) | {"IS_SNAPSHOTTING_ENABLED": "y"}
    writer = AthenaeumApplication(env=env)
    mapper = writer.mapper
    big_id, small_id = "load/big", "load/small"
    batches = stream_size // 1000
    big_per_batch, small_every = big // batches, max(1, batches // small)
    big_version = small_version = 0
    for batch in range(batches):
        events = [bumped(f"filler/{batch}/{n}", 1) for n in range(1000 - big_per_batch - 1)]
        for _ in range(big_per_batch):
            big_version += 1
            events.append(bumped(big_id, big_version))
        if batch % small_every == 0 and small_version < small:
            small_version += 1
            events.append(bumped(small_id, small_version))
        if batch == batches - 2:  # a snapshot shortly before the end, as snapshot intervals leave it
            writer.recorder.insert_events([mapper.to_stored_event(e) for e in events])
            writer.take_snapshot(big_id, projector_func=project)
            continue
        writer.recorder.insert_events([mapper.to_stored_event(e) for e in events])
    total = writer.recorder.max_notification_id()
    writer.close()

    def load(aggregate: str, rounds: int = 20) -> float:
        timings = []
        for _ in range(rounds):
            reader = AthenaeumApplication(env=env)  # nothing cached: a fresh process
            started = time.perf_counter()
            state = reader.repository.get(aggregate, projector_func=project)
            timings.append(time.perf_counter() - started)
            reader.close()
        assert state is not None
        return sorted(timings)[len(timings) // 2] * 1000

    big_ms, small_ms = load(big_id), load(small_id)
    print(f"(stream of {total:,} messages; aggregates of {big_version:,} and {small_version} events)")
    report(f"load {big_version:,}-event aggregate (median)", big_ms, "ms", f"load {small_version}-event aggregate", small_ms, "(target <= 2.0x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes for a smoke run")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    with tempfile.TemporaryDirectory() as workdir, NatsServer(store_dir=Path(workdir) / "nats") as server:
        print(f"nats-server with sync_interval: always at {server.url}\n")
        publish_rates(server, 2000 // scale)
        get_decide_save_rates(server, 2000 // scale, Path(workdir))
        replay_rates(server, 50_000 // scale)
        load_times(server, 200_000 // scale, 10_000 // scale, 10)


if __name__ == "__main__":
    main()
