"""``athenaeum serve``: the embedded nats-server (or an existing one) and the services, in
one process tree, until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import nats
from nats.aio.client import Client

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.families import fold_of
from athenaeum.events.fleet import FLEET_ID
from athenaeum.services.audit.checkpoints import DEFAULT_EVERY, Anchors, CheckpointWriter
from athenaeum.services.commands.handler import CommandHandler, utc_now
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.service import start_command_service, stop_answering
from athenaeum.services.identity.accounts import SERVICE_KEY, ledger_accounts, service_keys
from athenaeum.services.views.activity import activity_from
from athenaeum.services.http.server import HttpServer
from athenaeum.services.runtime.embedded import ServerSupervisor, admitting
from athenaeum.services.runtime.health import Health, ProjectorLag, count_deadlines
from athenaeum.services.runtime.humans import NoHumans, record_humans
from athenaeum.services.runtime.metrics import serve_metrics
from athenaeum.services.runtime.nats_binary import NatsServerError
from athenaeum.services.runtime.nats_server import NatsServer
from athenaeum.services.runtime.file_lock import try_lock
from athenaeum.services.runtime.ledger_shape import LedgerDrift, LedgerGuard, configured_ledger
from athenaeum.services.views.projection import PROJECTION, ProjectionRunner
from athenaeum.services.queries.consistency import Ledger
from athenaeum.services.queries.service import Reads, add_query_endpoints
from athenaeum.services.views.read_models import ReadModelStore, scheme_of
from athenaeum.services.timers.service import TimerService
from athenaeum.services.views.bucket import ViewBucket
from athenaeum.services.runtime.where import DEFAULT_HTTP, SERVE_FILE, SERVICES, running_url

STOP_GRACE = 10.0  # seconds a stopping service gives the requests it took to be answered
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServeOptions:
    data_dir: Path
    nats_url: str | None = None  # an existing deployment instead of the embedded server
    port: int = 0
    humans: frozenset[str] = frozenset()
    human_keys: Mapping[str, str] = field(default_factory=dict)  # the humans' public keys, where given
    read_models: str | None = None  # default: SQLite under the data dir
    # Which services this process runs; a deployment scales each separately on one cluster.
    services: frozenset[str] = SERVICES
    http: str = DEFAULT_HTTP  # HOST:PORT of the HTTP gateway, when "http" is among the services
    metrics: str | None = None  # HOST:PORT of a /metrics of its own (the gateway has one too)
    checkpoint_every: int = int(os.environ.get("ATHENAEUM_CHECKPOINT_EVERY", DEFAULT_EVERY))
    # The services' clock, shifted from the real one: for trying time windows of days.
    clock_offset: timedelta = timedelta(0)
    # The seed file the services connect to ``nats_url`` with, where that server authenticates
    # (the embedded server's are made in ``<data-dir>/nats``).
    nats_key: Path | None = None
    # Addresses whose X-Agent-Name the gateway takes without a token (an authenticating proxy).
    trust_agent_header: frozenset[str] = frozenset()


async def serve(options: ServeOptions, ready: asyncio.Event | None = None, stop: asyncio.Event | None = None) -> None:
    """Run until SIGINT/SIGTERM (or ``stop``); print the ready line and write serve.json
    once ready (and set ``ready``)."""
    if options.data_dir.exists() and not options.data_dir.is_dir():
        raise ValueError(f"--data-dir: {options.data_dir} is not a directory")
    if options.read_models:
        scheme_of(options.read_models)  # refused before anything starts
    elif "projector" not in options.services and options.services & {"commands", "timer"}:
        # They decide on the views (the fleet's activity, what is due): views of their own
        # that no projector fills would be an empty fleet and nothing due, and no error.
        raise ValueError("--services without projector: commands and timer read the views a projector keeps, "
                         "so give them its --read-models")
    if options.nats_url is None and not options.humans and not (options.data_dir / "nats").exists():
        raise NoHumans()  # a ledger to be made here: refused before a server starts and leaves its files
    options.data_dir.mkdir(parents=True, exist_ok=True)
    # One serve per data directory, whatever path names it; the lock goes with the process.
    if (claim := try_lock(options.data_dir.resolve() / "serve.lock")) is None:
        raise ValueError(f"athenaeum serve already runs on {options.data_dir}: stop it first")
    # Serve as the whole program stops on SIGINT/SIGTERM; inside another (a demo, a benchmark),
    # on that program's ``stop``, its signals left to it.
    own_stop, stop = stop is None, stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        stack.callback(claim.close)
        for signum in (signal.SIGINT, signal.SIGTERM) if own_stop else ():
            loop.add_signal_handler(signum, stop.set)
        url, nats_key, server = options.nats_url, options.nats_key, None
        if url is None:
            server = embedded_server(options)
            nats_key = server.store_dir / SERVICE_KEY
            await asyncio.to_thread(server.start)
            stack.callback(server.stop)
            url = server.url
        # Every service reads the views: the commands for the fleet's activity, too.
        store = ReadModelStore(options.read_models or str(options.data_dir / "views.sqlite"))
        stack.callback(store.close)
        stream, replicas = configured_ledger()
        anchors = Anchors(stream, options.data_dir, store)
        guard = await LedgerGuard.open(url.split(","), nats_key, stream, replicas, anchors, store)
        stack.push_async_callback(guard.close)
        await guard.check()  # before anything could make an empty ledger where one was
        supervisor, restarted = None, [guard.check_soon]  # what a server started again calls for
        if server is not None:  # started again if it exits; stopped watching before it is stopped
            supervisor = ServerSupervisor(server, stop, on_restart=lambda: [then() for then in restarted]).watch()
            stack.callback(supervisor.close)
        env = {
            "PERSISTENCE_MODULE": "athenaeum.services.jetstream",
            "ATHENAEUM_NATS_URL": url,
            "AGGREGATE_CACHE_MAXSIZE": "10000",
            "IS_SNAPSHOTTING_ENABLED": "y",
        }
        app = AthenaeumApplication(env=env | ({"ATHENAEUM_NATS_KEY": str(nats_key)} if nats_key else {}))
        stack.callback(app.close)
        ledger = app.factory.events_config  # type: ignore[attr-defined]  # its stream and replicas, for the timers and the bucket
        app.recorder.max_notification_id()  # the stream exists, in this version's layout, before anything starts
        workers = stack.enter_context(ThreadPoolExecutor(max_workers=16, thread_name_prefix="athenaeum-worker"))
        # Nothing kept to send later (pending_size=0): an HTTP caller told 503 must not have the
        # command land once the connection is back.
        # Back within a quarter of a second of the server (an embedded one started again, say).
        nc = await nats.connect(servers=url.split(","), max_reconnect_attempts=-1, reconnect_time_wait=0.25,
                                pending_size=0, nkeys_seed=str(nats_key) if nats_key else None,
                                error_cb=_log_connection_error)
        stack.push_async_callback(_close, nc)
        offset = options.clock_offset
        clock, activity = (lambda: utc_now() + offset), activity_from(store)
        health = Health(nc, guard, supervisor)
        handler = None
        if options.services & {"commands", "timer"}:  # the timer sends its commands through a handler too
            commands = await JetStreamCommandStore.open(url.split(","), ledger, fold_of, key=nats_key)
            stack.push_async_callback(commands.close)
            await commands.watch(FLEET_ID)  # read afresh by every proven command, changed by few
            admit = None if server is None else admitting(server)
            handler = CommandHandler(commands, humans=options.humans, activity=activity, clock=clock, on_roster=admit)
            if admit is not None:
                await admit(await handler.load(FLEET_ID))  # whom the roster held when serve last stopped
            for line in await record_humans(handler, options.humans, options.data_dir, options.human_keys,
                                            admits_only_the_roster=server is not None):
                print(f"athenaeum: {line}", file=sys.stderr, flush=True)
        service = await start_command_service(nc, handler if "commands" in options.services else None)
        if "commands" in options.services and handler is not None:
            checkpoints = await CheckpointWriter.start(app, handler, options.checkpoint_every, anchors)
            # The last one, at shutdown; none of a ledger the guard found cut.
            stack.push_async_callback(lambda: checkpoints.stop(last=guard.drift is None))
        if "projector" in options.services:
            bucket = await ViewBucket.open(nc, store, ledger["name"], ledger["num_replicas"])
            stack.push_async_callback(bucket.close)  # once the projector below has stopped putting
            await bucket.catch_up(store.position(PROJECTION) or 0)
            restarted.append(bucket.repair_soon)
            runner = ProjectionRunner(app, store, on_change=bucket.put_from_thread).start()

            # Off the loop: the projector's thread may be waiting on this loop for a KV put.
            stack.push_async_callback(asyncio.to_thread, runner.stop)
            reads = Reads(runner, Ledger(nc, ledger["name"]), options.humans, clock, activity)
            health.lag = ProjectorLag(runner, reads.ledger)
            following = asyncio.create_task(health.lag.follow(stop))
            stack.callback(following.cancel)
            # Reads have threads of their own: a flood of them leaves the timers' alone.
            readers = stack.enter_context(ThreadPoolExecutor(max_workers=8, thread_name_prefix="athenaeum-read"))
            await add_query_endpoints(service, reads, readers)
        if "timer" in options.services and handler is not None:
            timers = await TimerService(nc, handler, app, store, workers, ledger["name"], ledger["num_replicas"]).start()
            stack.push_async_callback(timers.stop)
            stack.callback(count_deadlines(store, clock))
        # Stopped first after HTTP: requests already taken are answered while the projector
        # and the timers still run.
        stack.push_async_callback(stop_answering, service, STOP_GRACE)
        urls = {"nats": url}
        if "http" in options.services:
            http = await HttpServer(nc, options.http, health.checks, options.trust_agent_header).start()
            stack.push_async_callback(http.stop)
            urls["http"] = http.url
        if options.metrics is not None:
            metrics = serve_metrics(options.metrics)
            stack.callback(metrics.server_close)
            stack.callback(metrics.shutdown)
            urls["metrics"] = "http://{}:{}/metrics".format(*metrics.server_address[:2])
        watching = await guard.watch(stop)  # before it says it is ready: no change goes unannounced
        stack.callback(watching.cancel)
        serve_file = options.data_dir / SERVE_FILE
        serve_file.write_text(json.dumps(urls | {"pid": os.getpid()}) + "\n")
        stack.callback(serve_file.unlink, missing_ok=True)
        print("athenaeum ready " + " ".join(f"{name}={value}" for name, value in urls.items()), flush=True)
        if ready is not None:
            ready.set()
        await stop.wait()
        log.info("stopping: the requests taken are answered, then the services stop")
        if guard.drift is not None:
            raise LedgerDrift(guard.drift)
        if supervisor is not None and supervisor.failure is not None:
            raise NatsServerError(supervisor.failure)


def embedded_server(options: ServeOptions) -> NatsServer:
    """The embedded server, admitting the services' own keys (made on the first start) and,
    once the roster is read, every principal's (see ``identity.accounts``)."""
    directory = options.data_dir / "nats"
    accounts = ledger_accounts(*service_keys(directory), configured_ledger()[0], agents=frozenset())
    return NatsServer(store_dir=directory, port=options.port, accounts=accounts)


@asynccontextmanager
async def serving_here(options: ServeOptions) -> AsyncIterator[str]:
    """``serve`` inside this program (a demo, a benchmark), quietly: its NATS URL once ready,
    or why it could not start; stopped on leaving."""
    ready, stop = asyncio.Event(), asyncio.Event()
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):  # the ready line and notes are for a terminal
        server = asyncio.create_task(serve(options, ready, stop))
        started = asyncio.create_task(ready.wait())
        await asyncio.wait({server, started}, return_when=asyncio.FIRST_COMPLETED)
    if server.done():
        started.cancel()
        server.result()  # raises why
    url = running_url(options.data_dir)
    assert url is not None, "serve wrote no serve.json"
    try:
        yield url
    finally:
        stop.set()
        await server


async def _close(nc: Client) -> None:
    """Close ``nc``, which may be broken: serve also stops when its NATS server is gone."""
    try:
        await asyncio.wait_for(nc.close(), STOP_GRACE)
    except (asyncio.TimeoutError, OSError, RuntimeError) as error:  # uvloop: RuntimeError on a broken transport
        log.debug("closing a broken NATS connection: %r", error)


async def _log_connection_error(error: Exception) -> None:
    log.debug("NATS connection: %r", error)
