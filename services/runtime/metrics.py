"""What serve counts and times, for Prometheus (the official ``prometheus-client``): commands by
family, verb and outcome, command and query latency, the projector's lag, deadlines due and
overdue, the KV bucket's reconciliations, and restarts of the embedded nats-server.

The metrics live in the process's default registry (with the client's own process metrics),
so the HTTP gateway's ``/metrics`` and ``serve --metrics HOST:PORT`` show the same figures.
A command costs one counter increment and one histogram observation: the children for a
route are looked up once, not per command.
"""

from __future__ import annotations

from collections.abc import Callable
from wsgiref.simple_server import WSGIServer

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from prometheus_client import start_http_server

# Commands take milliseconds (an fsync'd append); a retried race or a slow disk, up to seconds.
COMMAND_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

COMMANDS = Counter("athenaeum_commands", "Commands answered, by family, verb and outcome (ok or the error code)",
                   ["family", "verb", "outcome"])
COMMAND_SECONDS = Histogram("athenaeum_command_seconds", "Time from a command's arrival to its answer",
                            ["family", "verb"], buckets=COMMAND_BUCKETS)
QUERY_SECONDS = Histogram("athenaeum_query_seconds", "Time from a query's arrival to its answer, waiting for the "
                          "views included", ["query"], buckets=COMMAND_BUCKETS)
PROJECTOR_LAG_POSITIONS = Gauge("athenaeum_projector_lag_positions",
                                "Ledger positions past the last event the views reflect, when an event is among them")
PROJECTOR_LAG_SECONDS = Gauge("athenaeum_projector_lag_seconds",
                              "How long the oldest event the views lack has been in the ledger")
TIMERS_DUE = Gauge("athenaeum_timers_due", "Deadlines whose time has come and that are not met yet", ["family"])
TIMERS_OVERDUE = Gauge("athenaeum_timers_overdue", "Deadlines not met though due for longer than their "
                       "schedule's grace: a schedule missed them, the overdue sweep meets them", ["family"])
KV_RECONCILIATIONS = Counter("athenaeum_kv_reconciliations", "Reconciliations of the KV bucket with the views")
KV_REPAIRS = Counter("athenaeum_kv_repairs", "KV entries a reconciliation wrote because they differed from the views")
NATS_RESTARTS = Counter("athenaeum_nats_server_restarts", "Times serve started its embedded nats-server again "
                        "after it exited")


def command_observer(family: str, verb: str) -> Callable[[str, float], None]:
    """What one command endpoint calls with each answer's outcome and its seconds."""
    latency = COMMAND_SECONDS.labels(family, verb)
    outcomes: dict[str, Counter] = {}

    def observe(outcome: str, seconds: float) -> None:
        counted = outcomes.get(outcome)
        if counted is None:
            counted = outcomes[outcome] = COMMANDS.labels(family, verb, outcome)
        counted.inc()
        latency.observe(seconds)

    return observe


def query_observer(query: str) -> Callable[[float], None]:
    return QUERY_SECONDS.labels(query).observe


def exposition() -> tuple[bytes, str]:
    """Every metric of this process in Prometheus's text format, and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def serve_metrics(address: str) -> WSGIServer:
    """``/metrics`` on HOST:PORT (port 0: a free one), on a thread of its own: for a serve
    without the HTTP gateway. ``shutdown()`` stops it."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--metrics: {address!r} is not HOST:PORT")
    try:
        server, _ = start_http_server(int(port), host)
    except OSError as error:
        raise OSError(f"cannot serve metrics on {address}: {error.strerror or error}") from error
    return server
