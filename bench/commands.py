"""End-to-end command throughput and read-your-writes latency, through ``athenaeum serve``.

    python -m bench.commands            # full sizes
    python -m bench.commands --quick    # a smoke run

Figures, each against raw JetStream publish-with-ack measured in the same run on the same
server: accepted votes per second through NATS, sequentially and from 32 concurrent clients
on distinct topics; a command of two events (a task's completion after a clean review: one
atomic batch); and the p50/p99 time from a vote's reply until ``check`` reflects it. The floor
line is what any command over NATS costs before deciding anything: a request to a service that
makes one publish-with-ack and answers.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import msgspec
import nats
from athenaeum.aggregates.ratification import sha256_of
from athenaeum.events.ratification import Decision
from athenaeum.events.ratification_commands import CastVote, InitRatification
from athenaeum.events.task import BuildStatus, TaskStatus, Verdict
from athenaeum.events.task_commands import (
    ClaimTask,
    CreateTask,
    PostReview,
    TransitionPayload,
    TransitionTask,
)
from athenaeum.services.client import AthenaeumClient
from athenaeum.services.runtime.serve import SERVICES, ServeOptions, serving_here
from nats import micro

from bench.baselines import raw_publish_rate

ARTIFACT = "# Bench\nEvery vote counts.\n"
SHA = sha256_of(ARTIFACT)


async def raw_rate(url: str, count: int) -> float:
    nc = await nats.connect(url)
    await nc.jetstream().add_stream(name="BENCHRAW", subjects=["benchraw.>"])
    await nc.close()
    return await raw_publish_rate(url, "benchraw", count)


async def floor_rate(url: str, count: int) -> float:
    """Requests per second to a service whose every answer is one publish-with-ack."""
    nc = await nats.connect(url)
    await nc.jetstream().add_stream(name="BENCHFLOOR", subjects=["benchfloor.>"])

    async def publish(request: micro.Request) -> None:
        ack = await nc.request(f"benchfloor.{msgspec.json.decode(request.data)['n']}", request.data, timeout=5)
        await request.respond(ack.data)

    service = await micro.add_service(nc, name="floor", version="0.0.1", queue_group="floor")
    await service.add_endpoint(name="one", subject="bench.floor", handler=publish)
    client = await nats.connect(url)
    started = time.perf_counter()
    for n in range(count):
        await client.request("bench.floor", msgspec.json.encode({"n": n}), timeout=5)
    elapsed = time.perf_counter() - started
    await client.close()
    await service.stop()
    await nc.close()
    return count / elapsed


async def votes(client: AthenaeumClient, topic: str, voters: int, latencies: list[float] | None = None) -> int:
    roster = [f"agent-{n}" for n in range(voters)]
    await client.send(InitRatification(topic=topic, roster=roster, artifact=ARTIFACT))
    accepted = 0
    for agent in roster:
        client.actor = agent
        reply = await client.send(CastVote(topic=topic, sha256=SHA, decision=Decision.SIGN))
        accepted += reply.ok
        if latencies is not None and reply.position is not None:
            replied = time.perf_counter()
            await client.query("check", agent=agent, after=reply.position)
            latencies.append(time.perf_counter() - replied)
    return accepted


async def completions(client: AthenaeumClient, count: int) -> float:
    """Tasks completed per second, each by one command of two events (ReviewConcluded and
    TaskCompleted, one atomic batch), after a clean review; the set-up is not timed."""
    project, reviewed = "bench", []
    for _ in range(count):
        created = await client.send(CreateTask(project_id=project, title="t", plan_path="p.md"))
        task = next(e["number"] for e in msgspec.json.decode(created.events) if e["type"] == "TaskIdIssued")
        for command in (ClaimTask(project_id=project, task_id=task),
                        TransitionTask(project_id=project, task_id=task, to=TaskStatus.ENGINEERING),
                        TransitionTask(project_id=project, task_id=task, to=TaskStatus.BUILT,
                                       payload=TransitionPayload(build_status=BuildStatus.CLEAN)),
                        TransitionTask(project_id=project, task_id=task, to=TaskStatus.REVIEWING),
                        PostReview(project_id=project, task_id=task, reviewer_role="r", verdict=Verdict.APPROVE)):
            assert (await client.send(command)).ok
        reviewed.append(task)
    started = time.perf_counter()
    for task in reviewed:
        reply = await client.send(TransitionTask(project_id=project, task_id=task, to=TaskStatus.COMPLETED))
        assert reply.ok and len(msgspec.json.decode(reply.events)) == 2
    return count / (time.perf_counter() - started)


async def run(count: int, clients: int) -> None:
    # No HTTP: a benchmark must not take the port a real serve may be using.
    with tempfile.TemporaryDirectory(prefix="athenaeum-bench-") as home:
        async with serving_here(ServeOptions(Path(home), services=SERVICES - {"http"})) as url:
            raw = await raw_rate(url, count)
            floor = await floor_rate(url, count)
            client = await AthenaeumClient.connect(url, "agent-0")
            started = time.perf_counter()
            sequential = await votes(client, "bench-sequential", count) / (time.perf_counter() - started)
            fleet = [await AthenaeumClient.connect(url, "agent-0") for _ in range(clients)]
            started = time.perf_counter()
            per_client = max(count // clients, 2)
            accepted = await asyncio.gather(*(votes(c, f"bench-{n}", per_client) for n, c in enumerate(fleet)))
            concurrent = sum(accepted) / (time.perf_counter() - started)
            client.actor = "ops"
            two_events = await completions(client, max(count // 10, 20))
            latencies: list[float] = []
            await votes(client, "bench-latency", min(count, 500), latencies)
            for c in [client, *fleet]:
                await c.close()
    line = "{:<44} {:>10,.0f}   raw publish-with-ack {:>8,.0f}   ratio {:.2f}x"
    print(line.format("floor: a request making one publish", floor, raw, floor / raw))
    print(line.format("accepted votes/s, sequential", sequential, raw, sequential / raw))
    print(line.format(f"accepted votes/s, {clients} clients", concurrent, raw, concurrent / raw))
    print(line.format("task completions/s (two events), sequential", two_events, raw, two_events / raw))
    quantiles = statistics.quantiles(latencies, n=100)
    print(f"{'vote reply -> check updated':<44} p50 {quantiles[49] * 1000:.2f} ms   p99 {quantiles[98] * 1000:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    asyncio.run(run(count=200 if args.quick else 2000, clients=32))


if __name__ == "__main__":
    main()
