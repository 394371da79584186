"""The physical baseline every benchmark here compares against, measured in the same run."""

from __future__ import annotations

import time

import msgspec
import nats


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


async def raw_get_publish_rate(url: str, stream: str, subject_prefix: str, count: int) -> float:
    """The least a get-decide-save on JetStream can cost: per operation one direct get of the
    aggregate's last message and one publish-with-ack that expects it, in raw nats-py."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    started = time.perf_counter()
    for n in range(count):
        subject = f"{subject_prefix}.{n % 10}"
        last = await nc.request(f"$JS.API.DIRECT.GET.{stream}", msgspec.json.encode({"last_by_subj": subject}))
        found = last.headers and "Status" not in last.headers
        expected = last.headers["Nats-Sequence"] if found else "0"
        await js.publish(subject, b'{"by":1}', headers={"Nats-Expected-Last-Subject-Sequence": expected})
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
