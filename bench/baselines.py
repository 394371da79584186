"""The physical baseline every benchmark here compares against, measured in the same run."""

from __future__ import annotations

import time

import msgspec
import nats

from athenaeum.services.jetstream.loop import LoopThread


async def raw_publish_rate(url: str, subject_prefix: str, count: int, key: str | None = None) -> float:
    """Sequential JetStream publish-with-ack per second onto an existing stream's subjects
    (connected with the seed file ``key``, where the server authenticates)."""
    nc = await nats.connect(url, nkeys_seed=key)
    js = nc.jetstream()
    started = time.perf_counter()
    for n in range(count):
        await js.publish(f"{subject_prefix}.{n}", b'{"by":1}')
    elapsed = time.perf_counter() - started
    await nc.close()
    return count / elapsed


async def last_sequence(nc: nats.NATS, stream: str, subject: str) -> str:
    """A direct get of ``subject``'s last message: its sequence ("0" for none)."""
    last = await nc.request(f"$JS.API.DIRECT.GET.{stream}", msgspec.json.encode({"last_by_subj": subject}))
    return last.headers["Nats-Sequence"] if last.headers and "Status" not in last.headers else "0"


async def _publish_after(nc: nats.NATS, subject: str, expected: str) -> None:
    """A publish-with-ack that expects ``subject``'s last message at ``expected``."""
    await nc.jetstream().publish(subject, b'{"by":1}', headers={"Nats-Expected-Last-Subject-Sequence": expected})


async def raw_get_publish_rate(url: str, stream: str, subject_prefix: str, count: int) -> float:
    """The least a get-decide-save on JetStream can cost: per operation one direct get of the
    aggregate's last message and one publish-with-ack that expects it, in raw nats-py."""
    nc = await nats.connect(url)
    started = time.perf_counter()
    for n in range(count):
        subject = f"{subject_prefix}.{n % 10}"
        await _publish_after(nc, subject, await last_sequence(nc, stream, subject))
    elapsed = time.perf_counter() - started
    await nc.close()
    return count / elapsed


def raw_get_publish_rate_from_a_thread(url: str, stream: str, subject_prefix: str, count: int) -> float:
    """The same operations asked for by a synchronous caller, as eventsourcing's recorders are:
    nats-py runs on an event loop of its own thread (as every synchronous wrapper of it does),
    and each of the two round trips crosses to that thread and back."""
    loop = LoopThread(name="bench-floor")
    try:
        nc = loop.run(nats.connect(url))
        started = time.perf_counter()
        for n in range(count):
            subject = f"{subject_prefix}.{n % 10}"
            loop.run(_publish_after(nc, subject, loop.run(last_sequence(nc, stream, subject))))
        elapsed = time.perf_counter() - started
        loop.run(nc.close())
    finally:
        loop.close()
    return count / elapsed


async def raw_replay_rate(url: str, subjects: str, count: int) -> float:
    """Messages per second a raw nats-py ordered consumer reads back from a stream's subjects."""
    nc = await nats.connect(url)
    subscription = await nc.jetstream().subscribe(subjects, ordered_consumer=True)
    started = time.perf_counter()
    for _ in range(count):
        await subscription.next_msg(timeout=10)
    elapsed = time.perf_counter() - started
    await nc.close()
    return count / elapsed
