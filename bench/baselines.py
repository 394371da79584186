"""The physical baseline every benchmark here compares against, measured in the same run."""

from __future__ import annotations

import time

import nats


async def raw_publish_rate(url: str, subject_prefix: str, count: int) -> float:
    """Sequential JetStream publish-with-ack per second onto an existing stream's subjects."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    started = time.perf_counter()
    for n in range(count):
        await js.publish(f"{subject_prefix}.{n}", b'{"by":1}')
    elapsed = time.perf_counter() - started
    await nc.close()
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
