"""End-to-end command throughput and read-your-writes latency, through ``athenaeum serve``.

    python -m bench.commands            # full sizes
    python -m bench.commands --quick    # a smoke run

Figures, each against raw JetStream publish-with-ack measured in the same run on the same
server: accepted votes per second through NATS, each signed by its agent's registered key on
its agent's own connection, sequentially and from 32 concurrent clients on distinct topics
(ratifications of nine agents, opened beforehand); what signing and verifying cost: the same
sequential votes, on a serve whose server authenticates nobody, signed by agents its roster binds
to keys against unsigned ones from agents the roster names but binds to no key; what identity as deployed costs: the
signed votes through the accounts of the default serve against those unsigned ones (three ways
in alternating rounds, both serves up throughout, so that whatever else the machine does weighs
on all alike); a
command of two events (a task's completion after a clean review: one atomic batch); the p50/p99 time from a vote's reply until ``check`` reflects it; and the p50/p99
latency of a read, consistent by default (it waits until the views reach the ledger's head as it
stood when the read came) against one that waits for nothing (``after=0``), on an idle system
and while the 32 clients vote; and a vote's latency while 32 reads at a time flood the query
service (from a process of its own) against the same votes idle. The floor
lines are what any command over NATS costs before deciding anything: a request to a service that
makes one publish-with-ack and answers, and one that first makes a direct get, as a signed
command's fresh read of the roster does (a vote's least cost under identity). Serve, the floor's service and the clients each run in
a process of their own, as a deployment and its agents do. The CPU lines say what each process
(nats-server, serve, the clients) spent per raw publish and per sequential vote: on a machine of
N cores, no command rate passes N / (the CPU all spend on one).
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
from typing import NamedTuple
from pathlib import Path

import msgspec
import nats
import psutil

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
from athenaeum.services.identity.accounts import SERVICE_KEY
from athenaeum.services.identity.keys import key_pair, key_path, new_seed, public_key
from athenaeum.services.runtime.nats_server import PID_FILE, NatsServer

from bench.baselines import raw_publish_rate

ARTIFACT = "# Bench\nEvery vote counts.\n"
SHA = sha256_of(ARTIFACT)


async def raw_rate(url: str, count: int, key: str) -> float:
    nc = await nats.connect(url, nkeys_seed=key)
    await nc.jetstream().add_stream(name="BENCHRAW", subjects=["benchraw.>"])
    await nc.close()
    return await raw_publish_rate(url, "benchraw", count, key)


class Floor(NamedTuple):
    sequential: float  # requests/s, one after another
    concurrent: float  # requests/s, from ``clients`` side by side


async def floor_rates(url: str, count: int, clients: int, key: str) -> dict[str, Floor]:
    """Requests per second to a service (a process of its own, as serve is) whose every answer
    is one publish-with-ack ("publish"), or a direct get and then one publish-with-ack ("read"):
    what a signed command's fresh read of the roster adds. Each one request after another, and
    from ``clients`` side by side."""
    nc = await nats.connect(url, nkeys_seed=key)
    await nc.jetstream().add_stream(name="BENCHFLOOR", subjects=["benchfloor.>"], allow_direct=True)

    async def requests(subject: str, numbers: range) -> None:
        for n in numbers:
            answer = await nc.request(subject, msgspec.json.encode({"n": n}), timeout=5)
            assert not answer.headers, f"{subject} failed: {answer.headers}"  # a micro service's error

    floors = {}
    async with running(sys.executable, "-m", "bench.floor", url, key) as floor:
        assert floor.ready.startswith("floor ready"), floor.ready
        for name, subject in (("publish", "bench.floor"), ("read", "bench.floor.read")):
            offset = len(floors) * 2 * count  # each request publishes on a subject of its own
            started = time.perf_counter()
            await requests(subject, range(offset, offset + count))
            sequential = count / (time.perf_counter() - started)
            share = count // clients
            started = time.perf_counter()
            await asyncio.gather(*(requests(subject, range(offset + count + k * share, offset + count + (k + 1) * share))
                                   for k in range(clients)))
            floors[name] = Floor(sequential, share * clients / (time.perf_counter() - started))
    await nc.close()
    return floors


class Started(NamedTuple):
    ready: str  # the process's first line
    pid: int


@contextlib.asynccontextmanager
async def running(*command: str, log: Path | None = None) -> AsyncIterator[Started]:
    """A process, from its ready line (its first) until it is stopped on leaving. ``log``: the
    file its standard error goes to (a serve's line per command, thousands here), not the terminal."""
    with open(log, "wb") if log is not None else contextlib.nullcontext() as errors:
        process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE, stderr=errors)
        try:
            assert process.stdout is not None
            ready = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
            if not ready:
                said = log.read_text(errors="replace")[-2000:] if log is not None else ""
                raise RuntimeError(f"{' '.join(command[:5])} ended before it was ready{': ' + said if said else ''}")
            yield Started(ready, process.pid)
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 60)


ROUNDS = 8  # of sequential votes each way, in turns: the finer, the less a slower spell of the machine weighs on one way
ROSTER = [f"agent-{n}" for n in range(9)]  # a fleet's ratification: nine agents, as quorum's presets count
HUMAN = "bench-human"
Clients = dict[str, AthenaeumClient]  # each agent's own connection


async def ballots(clients: Clients, name: str, topics: int, roster: list[str] = ROSTER) -> list[str]:
    """Open ``topics`` ratifications of ``roster``, each by its first agent."""
    opened = [f"{name}-{n}" for n in range(topics)]
    for topic in opened:
        opener = clients[roster[0]]
        opener.actor = roster[0]
        assert (await opener.send(InitRatification(topic=topic, roster=roster, artifact=ARTIFACT))).ok
    return opened


def everyone(topics: list[str], count: int, roster: list[str] = ROSTER) -> list[tuple[str, str]]:
    """The (topic, agent) of ``count`` votes, each topic's whole roster in turn."""
    return [(topic, agent) for topic in topics for agent in roster][:count]


async def registered(url: str, home: str, keys: dict[str, str | None]) -> None:
    """Each of ``keys`` registered, bound to its public key (or to none), by the human serve
    made a key for."""
    human = await AthenaeumClient.connect(url, HUMAN, seed=key_path(Path(home), HUMAN))
    for name, key in keys.items():
        assert (await human.send(RegisterAgent(name=name, public_key=key))).ok
    await human.close()


async def enrolled(url: str, home: str, names: list[str]) -> Clients:
    """``names`` registered with keys of their own, each connected with its key, as the
    server requires."""
    keys = {name: key_pair(new_seed()) for name in names}
    await registered(url, home, {name: public_key(key) for name, key in keys.items()})
    return {name: await AthenaeumClient.connect(url, name, seed=key) for name, key in keys.items()}


async def votes(clients: Clients, cast: list[tuple[str, str]], latencies: list[float] | None = None) -> tuple[int, int]:
    """The votes, one after another, each by its agent's client: how many were accepted, and the
    last one's position. With ``latencies``, the time from each vote's reply until ``check``
    reflects it."""
    accepted = position = 0
    for topic, agent in cast:
        client = clients[agent]
        client.actor = agent
        reply = await client.send(CastVote(topic=topic, sha256=SHA, decision=Decision.SIGN))
        accepted += reply.ok
        position = max(position, reply.position or 0)
        if latencies is not None and reply.position is not None:
            replied = time.perf_counter()
            await client.query("check", agent=agent, after=reply.position)
            latencies.append(time.perf_counter() - replied)
    return accepted, position


async def vote_latencies(clients: Clients, cast: list[tuple[str, str]]) -> list[float]:
    """Each vote's time from send to reply, one after another."""
    latencies = []
    for topic, agent in cast:
        client = clients[agent]
        client.actor = agent
        started = time.perf_counter()
        assert (await client.send(CastVote(topic=topic, sha256=SHA, decision=Decision.SIGN))).ok
        latencies.append(time.perf_counter() - started)
    return latencies


async def flooded(clients: Clients, count: int, url: str, key: str, readers: int) -> tuple[list[float], list[float]]:
    """Sequential votes' latencies, idle and while ``readers`` reads at a time flood the query
    service from another process."""
    cast = everyone(await ballots(clients, "flood", -(-2 * count // len(ROSTER))), 2 * count)
    await caught_up(clients[ROSTER[0]], 0)
    idle = await vote_latencies(clients, cast[:count])
    async with running(sys.executable, "-m", "bench.flood", url, key, str(readers)) as flood:
        assert flood.ready.startswith("flood ready"), flood.ready
        loaded = await vote_latencies(clients, cast[count:])
    return idle, loaded


async def caught_up(client: AthenaeumClient, position: int, agent: str = ROSTER[0]) -> None:
    """Wait for the views to reach ``position`` (0: the ledger as it is), so that one figure's
    projection does not run into the next one's time."""
    await client.query("check", agent=agent, **({"after": position} if position else {}))


async def prepared(clients: Clients, count: int, name: str, roster: list[str] = ROSTER) -> list[tuple[str, str]]:
    """The (topic, agent) of ``count`` votes on ballots opened for them, the views caught up."""
    cast = everyone(await ballots(clients, name, -(-count // len(roster)), roster), count, roster)
    await caught_up(clients[roster[0]], 0, roster[0])
    return cast


class Way(NamedTuple):
    clients: Clients
    meter: CpuMeter  # of its serve, its nats-server and the clients
    roster: list[str] = ROSTER  # who votes


# Agents the roster names, bound to no key: what they send is taken on their word. Registered
# all the same, so that the views do for their votes what they do for signed ones (a member's
# activity is kept), and the two ways differ by signing and verifying alone.
UNBOUND = [f"free-{n}" for n in range(len(ROSTER))]


class Plain(NamedTuple):
    """Two ways to vote on one serve whose server authenticates nobody."""

    signed: Way  # by agents the roster binds to keys, each on its own connection
    unsigned: Way  # by agents no key binds, each on its own connection too


@contextlib.asynccontextmanager
async def unauthenticated(directory: str) -> AsyncIterator[Plain]:
    """A serve on a server that authenticates nobody: the same votes signed and verified, and
    unsigned, with nothing else between them."""
    with NatsServer(store_dir=Path(directory) / "nats") as plain:
        home = str(Path(directory) / "home")
        serve = (sys.executable, "-m", "athenaeum.services.cli", "serve", "--data-dir", home, "--no-http",
                 "--nats", plain.url, "--humans", HUMAN)
        async with running(*serve, log=Path(directory) / "serve.log") as served:
            meter = CpuMeter(served.pid, int((plain.store_dir / PID_FILE).read_text()))
            signed = await enrolled(plain.url, home, ROSTER)
            await registered(plain.url, home, dict.fromkeys(UNBOUND))
            unsigned = {name: await AthenaeumClient.connect(plain.url, name) for name in UNBOUND}
            yield Plain(Way(signed, meter), Way(unsigned, meter, UNBOUND))
            for each in [*signed.values(), *unsigned.values()]:
                await each.close()


class Sequential(NamedTuple):
    rates: dict[str, float]  # votes/s, each way
    cpu: dict[str, dict[str, float]]  # each way's CPU milliseconds per vote, by process


async def sequential_rates(ways: dict[str, Way], count: int) -> Sequential:
    """``count`` votes one after another each way, in alternating rounds, so that whatever else
    the machine does weighs on all alike; each way's CPU counted over its own votes."""
    accepted = dict.fromkeys(ways, 0)
    seconds = dict.fromkeys(ways, 0.0)
    cpu = {way: dict.fromkeys(each.meter.read(), 0.0) for way, each in ways.items()}
    for round_ in range(ROUNDS):
        for way, (clients, meter, roster) in ways.items():
            cast = await prepared(clients, count // ROUNDS, f"{way}-{round_}", roster)
            before, started = meter.read(), time.perf_counter()
            done, position = await votes(clients, cast)
            seconds[way] += time.perf_counter() - started
            accepted[way] += done
            cpu[way] = {name: spent + meter.read()[name] - before[name] for name, spent in cpu[way].items()}
            await caught_up(clients[roster[0]], position, roster[0])
    return Sequential({way: accepted[way] / seconds[way] for way in ways},
                      {way: {name: spent * 1000 / max(accepted[way], 1) for name, spent in cpu[way].items()}
                       for way in ways})


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
                                       payload=TransitionPayload(build_status=BuildStatus.CLEAN, commit_sha="abc123")),
                        TransitionTask(project_id=project, task_id=task, to=TaskStatus.REVIEWING),
                        PostReview(project_id=project, task_id=task, cycle=0, reviewer_role="r",
                                   verdict=Verdict.APPROVE)):
            assert (await client.send(command)).ok
        reviewed.append(task)
    started = time.perf_counter()
    for task in reviewed:
        reply = await client.send(TransitionTask(project_id=project, task_id=task, to=TaskStatus.COMPLETED))
        assert reply.ok and len(msgspec.json.decode(reply.events)) == 2
    return count / (time.perf_counter() - started)


Latencies = tuple[list[float], list[float]]


async def read_latencies(client: AthenaeumClient, count: int, until: asyncio.Future | None = None) -> Latencies:
    """``count`` reads of ``check`` each way, in turns (until ``until`` is done, if given): the
    consistent one by default, and one told to wait for nothing."""
    consistent: list[float] = []
    unsynchronised: list[float] = []
    for _ in range(count):
        if until is not None and until.done():
            break
        for latencies, waiting in ((consistent, {}), (unsynchronised, {"after": 0})):
            started = time.perf_counter()
            assert (await client.query("check", agent=ROSTER[0], **waiting))["ok"]
            latencies.append(time.perf_counter() - started)
    return consistent, unsynchronised


class CpuMeter:
    """The CPU time (user and system) serve, its nats-server and this process (the clients)
    spend: where a figure's time goes, and how far two cores can take it."""

    def __init__(self, serve_pid: int, server_pid: int | None = None) -> None:
        """Of serve and the nats-server it started (or the one ``server_pid`` names)."""
        serve = psutil.Process(serve_pid)
        server = psutil.Process(server_pid) if server_pid else next(
            child for child in serve.children() if "nats-server" in child.name())
        self.processes = {"nats-server": server, "serve": serve, "clients": psutil.Process()}

    def read(self) -> dict[str, float]:
        """Each process's CPU seconds so far."""
        return {name: sum(process.cpu_times()[:2]) for name, process in self.processes.items()}


def percentiles(latencies: list[float]) -> tuple[float, float]:
    """p50 and p99, in milliseconds."""
    quantiles = statistics.quantiles(latencies, n=100)
    return quantiles[49] * 1000, quantiles[98] * 1000


async def run(count: int, clients: int) -> None:
    """``athenaeum serve`` in a process of its own, as users run it (no HTTP: a benchmark must not
    take the port a real serve may be using); the clients, like agents, in another."""
    with tempfile.TemporaryDirectory(prefix="athenaeum-bench-") as home:
        serve = (sys.executable, "-m", "athenaeum.services.cli", "serve", "--data-dir", home, "--no-http",
                 "--humans", HUMAN)
        async with running(*serve, log=Path(home) / "serve.log") as served, \
                unauthenticated(str(Path(home) / "plain")) as plain:
            url = served.ready.split("nats=")[1].split()[0]
            service = str(Path(home) / "nats" / SERVICE_KEY)  # the baselines run as the services do
            meter = CpuMeter(served.pid)
            before = meter.read()
            raw = await raw_rate(url, count, service)
            raw_cpu = {name: (spent - before[name]) * 1000 / count for name, spent in meter.read().items()}
            floors = await floor_rates(url, count, clients, service)
            agents = await enrolled(url, home, [*ROSTER, "ops"])
            first = agents[ROSTER[0]]
            sequential = await sequential_rates({"deployed": Way(agents, meter), "signed": plain.signed,
                                                 "unsigned": plain.unsigned}, count)
            rates = sequential.rates
            # Then each client, nine agents of its own voting on its own ratifications, on a connection each
            # (registered after the sequential votes, which each way cast on a ledger of the same size).
            fleet = [[f"fleet-{n}-{k}" for k in range(len(ROSTER))] for n in range(clients)]
            agents |= await enrolled(url, home, [name for roster in fleet for name in roster])
            per_client = max(count // clients, 2)
            casts = []
            for n, roster in enumerate(fleet):
                topics = await ballots(agents, f"fleet-{n}", -(-per_client // len(roster)), roster)
                casts.append([(topic, agent) for topic in topics for agent in roster][:per_client])
            await caught_up(first, 0)
            idle_reads = await read_latencies(first, min(count, 1000))
            started = time.perf_counter()
            voting = asyncio.gather(*(votes(agents, cast) for cast in casts))
            loaded_reads = await read_latencies(first, count, voting)  # the first client reads, the fleets vote
            outcomes = await voting
            concurrent = sum(accepted for accepted, _ in outcomes) / (time.perf_counter() - started)
            await caught_up(first, max(position for _, position in outcomes))
            two_events = await completions(agents["ops"], max(count // 10, 20))
            await caught_up(first, 0)
            idle_votes, flooded_votes = await flooded(agents, min(count, 500), url, service, clients)
            latencies: list[float] = []
            cast = everyone(await ballots(agents, "latency", -(-min(count, 500) // len(ROSTER))), min(count, 500))
            await caught_up(first, 0)
            await votes(agents, cast, latencies)
            for client in agents.values():
                await client.close()
    line = "{:<44} {:>10,.0f}   raw publish-with-ack {:>8,.0f}   ratio {:.2f}x"
    for name, short, floor in (("floor: a request making one publish", "floor", floors["publish"]),
                               ("floor: a direct get, then one publish", "floor with a get", floors["read"])):
        print(line.format(name, floor.sequential, raw, floor.sequential / raw))
        print(line.format(f"{short}, {clients} clients", floor.concurrent, raw, floor.concurrent / raw))
    print(line.format("accepted votes/s, sequential", rates["deployed"], raw, rates["deployed"] / raw))
    print(line.format(f"accepted votes/s, {clients} clients", concurrent, raw, concurrent / raw))
    against = "{:<44} {:>10,.0f}   {:<18} {:>10,.0f}   ratio {:.2f}x"
    print(against.format("accepted votes/s, sequential, signed", rates["signed"], "unsigned, same serve",
                         rates["unsigned"], rates["signed"] / rates["unsigned"]))
    print(against.format("accepted votes/s, sequential, as deployed", rates["deployed"], "no identity at all",
                         rates["unsigned"], rates["deployed"] / rates["unsigned"]))
    print(line.format("task completions/s (two events), sequential", two_events, raw, two_events / raw))
    print("{:<44} p50 {:.2f} ms   p99 {:.2f} ms".format("vote reply -> check updated", *percentiles(latencies)))
    for name, spent in (("CPU ms per raw publish-with-ack", raw_cpu),
                        ("CPU ms per sequential vote, as deployed", sequential.cpu["deployed"]),
                        ("CPU ms per sequential vote, signed", sequential.cpu["signed"]),
                        ("CPU ms per sequential vote, unsigned", sequential.cpu["unsigned"])):
        print("{:<44} {}   all {:.2f}".format(name, "   ".join(f"{process} {ms:.2f}" for process, ms in spent.items()),
                                                sum(spent.values())))
    (idle50, idle99), (flood50, flood99) = percentiles(idle_votes), percentiles(flooded_votes)
    print("{:<44} p50 {:.2f} ms   p99 {:.2f} ms   idle p50 {:.2f} ms   p99 {:.2f} ms   p50 ratio {:.2f}x".format(
        f"vote latency, {clients} reads in flight", flood50, flood99, idle50, idle99, flood50 / idle50))
    reads = "{:<44} p50 {:.2f} ms   p99 {:.2f} ms   waiting for nothing p50 {:.2f} ms   p99 {:.2f} ms   p99 ratio {:.2f}x"
    for name, (consistent, unsynchronised) in (("consistent read, idle", idle_reads),
                                               (f"consistent read, {clients} clients voting", loaded_reads)):
        (p50, p99), (base50, base99) = percentiles(consistent), percentiles(unsynchronised)
        print(reads.format(name, p50, p99, base50, base99, p99 / base99))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    asyncio.run(run(count=200 if args.quick else 2000, clients=32))


if __name__ == "__main__":
    main()
