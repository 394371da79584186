"""End-to-end command throughput and read-your-writes latency, through ``athenaeum serve``.

    python -m bench.commands            # full sizes
    python -m bench.commands --quick    # a smoke run

Figures, each against raw JetStream publish-with-ack measured in the same run on the same
server: accepted votes per second through NATS, sequentially and from 32 concurrent clients
on distinct topics; and the p50/p99 time from a vote's reply until ``check`` reflects it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import nats
from athenaeum.aggregates.ratification import sha256_of
from athenaeum.events.ratification import Decision
from athenaeum.events.ratification_commands import CastVote, InitRatification
from athenaeum.services.client import AthenaeumClient
from athenaeum.services.runtime.serve import SERVICES, ServeOptions, serving_here

from bench.baselines import raw_publish_rate

ARTIFACT = "# Bench\nEvery vote counts.\n"
SHA = sha256_of(ARTIFACT)


async def raw_rate(url: str, count: int) -> float:
    nc = await nats.connect(url)
    await nc.jetstream().add_stream(name="BENCHRAW", subjects=["benchraw.>"])
    await nc.close()
    return await raw_publish_rate(url, "benchraw", count)


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


async def run(count: int, clients: int) -> None:
    # No HTTP: a benchmark must not take the port a real serve may be using.
    with tempfile.TemporaryDirectory(prefix="athenaeum-bench-") as home:
        async with serving_here(ServeOptions(Path(home), services=SERVICES - {"http"})) as url:
            raw = await raw_rate(url, count)
            client = await AthenaeumClient.connect(url, "agent-0")
            started = time.perf_counter()
            sequential = await votes(client, "bench-sequential", count) / (time.perf_counter() - started)
            fleet = [await AthenaeumClient.connect(url, "agent-0") for _ in range(clients)]
            started = time.perf_counter()
            per_client = max(count // clients, 2)
            accepted = await asyncio.gather(*(votes(c, f"bench-{n}", per_client) for n, c in enumerate(fleet)))
            concurrent = sum(accepted) / (time.perf_counter() - started)
            latencies: list[float] = []
            await votes(client, "bench-latency", min(count, 500), latencies)
            for c in [client, *fleet]:
                await c.close()
    print(f"{'accepted votes/s, sequential':<42} {sequential:>10,.0f}   raw publish-with-ack {raw:>8,.0f}   ratio {sequential / raw:.2f}x")
    print(f"{f'accepted votes/s, {clients} clients':<42} {concurrent:>10,.0f}   raw publish-with-ack {raw:>8,.0f}   ratio {concurrent / raw:.2f}x")
    quantiles = statistics.quantiles(latencies, n=100)
    print(f"{'vote reply -> check updated':<42} p50 {quantiles[49] * 1000:.2f} ms   p99 {quantiles[98] * 1000:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    asyncio.run(run(count=200 if args.quick else 2000, clients=32))


if __name__ == "__main__":
    main()
