"""End-to-end command throughput and read-your-writes latency, through ``athenaeum serve``.

    python -m bench.commands            # full sizes
    python -m bench.commands --quick    # a smoke run

Figures, each against raw JetStream publish-with-ack measured in the same run on the same
server: accepted votes per second through NATS, sequentially and from 32 concurrent clients
on distinct topics (ratifications of nine agents, opened beforehand); the same sequential votes,
each signed by its agent's registered key, against the unsigned ones; a command of two events (a task's completion after a clean review: one
atomic batch); and the p50/p99 time from a vote's reply until ``check`` reflects it. The floor
line is what any command over NATS costs before deciding anything: a request to a service that
makes one publish-with-ack and answers. Serve, the floor's service and the clients each run in
a process of their own, as a deployment and its agents do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import nats
from nkeys import KeyPair

from athenaeum.aggregates.ratification import sha256_of
from athenaeum.events.fleet_commands import RegisterAgent
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
from athenaeum.services.identity.keys import key_pair, key_path, new_seed, public_key

from bench.baselines import raw_publish_rate

ARTIFACT = "# Bench\nEvery vote counts.\n"
SHA = sha256_of(ARTIFACT)


async def raw_rate(url: str, count: int) -> float:
    nc = await nats.connect(url)
    await nc.jetstream().add_stream(name="BENCHRAW", subjects=["benchraw.>"])
    await nc.close()
    return await raw_publish_rate(url, "benchraw", count)


async def floor_rates(url: str, count: int, clients: int) -> tuple[float, float]:
    """Requests per second to a service (a process of its own, as serve is) whose every answer
    is one publish-with-ack: one request after another, and from ``clients`` side by side."""
    nc = await nats.connect(url)
    await nc.jetstream().add_stream(name="BENCHFLOOR", subjects=["benchfloor.>"])

    async def requests(numbers: range) -> None:
        for n in numbers:
            await nc.request("bench.floor", msgspec.json.encode({"n": n}), timeout=5)

    async with running(sys.executable, "-m", "bench.floor", url) as ready:
        assert ready.startswith("floor ready"), ready
        started = time.perf_counter()
        await requests(range(count))
        sequential = count / (time.perf_counter() - started)
        share = count // clients
        started = time.perf_counter()
        await asyncio.gather(*(requests(range(count + k * share, count + (k + 1) * share)) for k in range(clients)))
        concurrent = share * clients / (time.perf_counter() - started)
    await nc.close()
    return sequential, concurrent


@contextlib.asynccontextmanager
async def running(*command: str) -> AsyncIterator[str]:
    """A process, from its ready line (its first) until it is stopped on leaving."""
    process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
    try:
        assert process.stdout is not None
        yield (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)


ROSTER = [f"agent-{n}" for n in range(9)]  # a fleet's ratification: nine agents, as quorum's presets count
SIGNERS = [f"signer-{n}" for n in range(9)]  # the same, each registered with a key and signing
HUMAN = "bench-human"


async def ballots(client: AthenaeumClient, name: str, count: int, roster: list[str] = ROSTER,
                  keys: dict[str, KeyPair] | None = None) -> list[tuple[str, str]]:
    """Open enough ratifications of nine for ``count`` votes; the (topic, agent) of each vote."""
    topics = [f"{name}-{n}" for n in range(-(-count // len(roster)))]
    for topic in topics:
        client.actor, client.key = roster[0], (keys or {}).get(roster[0])
        assert (await client.send(InitRatification(topic=topic, roster=roster, artifact=ARTIFACT))).ok
    return [(topic, agent) for topic in topics for agent in roster][:count]


async def signers(url: str, home: str) -> dict[str, KeyPair]:
    """The signing roster, registered with its keys by the human serve made a key for."""
    human = await AthenaeumClient.connect(url, HUMAN, seed=key_path(Path(home), HUMAN))
    keys = {name: key_pair(new_seed()) for name in SIGNERS}
    for name, key in keys.items():
        assert (await human.send(RegisterAgent(name=name, public_key=public_key(key)))).ok
    await human.close()
    return keys


async def votes(client: AthenaeumClient, cast: list[tuple[str, str]], latencies: list[float] | None = None,
                keys: dict[str, KeyPair] | None = None) -> tuple[int, int]:
    """The votes, one after another: how many were accepted, and the last one's position. With
    ``latencies``, the time from each vote's reply until ``check`` reflects it; with ``keys``,
    each signed by its agent's key."""
    accepted = position = 0
    for topic, agent in cast:
        client.actor, client.key = agent, (keys or {}).get(agent)
        reply = await client.send(CastVote(topic=topic, sha256=SHA, decision=Decision.SIGN))
        accepted += reply.ok
        position = max(position, reply.position or 0)
        if latencies is not None and reply.position is not None:
            replied = time.perf_counter()
            await client.query("check", agent=agent, after=reply.position)
            latencies.append(time.perf_counter() - replied)
    return accepted, position


async def caught_up(client: AthenaeumClient, position: int) -> None:
    """Wait for the views to reach ``position`` (0: the ledger as it is), so that one figure's
    projection does not run into the next one's time."""
    await client.query("check", agent=ROSTER[0], **({"after": position} if position else {}))


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
    """``athenaeum serve`` in a process of its own, as users run it (no HTTP: a benchmark must not
    take the port a real serve may be using); the clients, like agents, in another."""
    with tempfile.TemporaryDirectory(prefix="athenaeum-bench-") as home:
        serve = (sys.executable, "-m", "athenaeum.services.cli", "serve", "--data-dir", home, "--no-http",
                 "--humans", HUMAN)
        async with running(*serve) as ready:
            url = ready.split("nats=")[1].split()[0]
            raw = await raw_rate(url, count)
            floor, floor_concurrent = await floor_rates(url, count, clients)
            client = await AthenaeumClient.connect(url, "agent-0")
            cast = await ballots(client, "sequential", count)
            await caught_up(client, 0)
            started = time.perf_counter()
            accepted, position = await votes(client, cast)
            sequential = accepted / (time.perf_counter() - started)
            await caught_up(client, position)
            keys = await signers(url, home)
            cast = await ballots(client, "signed", count, SIGNERS, keys)
            await caught_up(client, 0)
            started = time.perf_counter()
            accepted, position = await votes(client, cast, keys=keys)
            signed = accepted / (time.perf_counter() - started)
            await caught_up(client, position)
            client.key = None
            fleet = [await AthenaeumClient.connect(url, "agent-0") for _ in range(clients)]
            per_client = max(count // clients, 2)
            casts = await asyncio.gather(*(ballots(c, f"fleet-{n}", per_client) for n, c in enumerate(fleet)))
            await caught_up(client, 0)
            started = time.perf_counter()
            outcomes = await asyncio.gather(*(votes(c, cast) for c, cast in zip(fleet, casts)))
            concurrent = sum(accepted for accepted, _ in outcomes) / (time.perf_counter() - started)
            await caught_up(client, max(position for _, position in outcomes))
            client.actor = "ops"
            two_events = await completions(client, max(count // 10, 20))
            await caught_up(client, 0)
            latencies: list[float] = []
            cast = await ballots(client, "latency", min(count, 500))
            await caught_up(client, 0)
            await votes(client, cast, latencies)
            for c in [client, *fleet]:
                await c.close()
    line = "{:<44} {:>10,.0f}   raw publish-with-ack {:>8,.0f}   ratio {:.2f}x"
    print(line.format("floor: a request making one publish", floor, raw, floor / raw))
    print(line.format(f"floor, {clients} clients", floor_concurrent, raw, floor_concurrent / raw))
    print(line.format("accepted votes/s, sequential", sequential, raw, sequential / raw))
    print(line.format(f"accepted votes/s, {clients} clients", concurrent, raw, concurrent / raw))
    print("{:<44} {:>10,.0f}   unsigned, sequential {:>8,.0f}   ratio {:.2f}x".format(
        "accepted signed votes/s, sequential", signed, sequential, signed / sequential))
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
