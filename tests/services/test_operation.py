"""serve as an operator runs it: it starts its nats-server again when that dies (or stops, non-zero,
when it cannot), and it answers the probes and the metrics a deployment watches."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from athenaeum.services.runtime.nats_binary import find_binary
from athenaeum.services.runtime.nats_server import PID_FILE, process_running
from tests.services.conftest import ATHENAEUM, Served, until

TEXT = "# ADR\nThe fleet logs to the ledger.\n"
ALL_OK = {"nats": "ok", "ledger": "ok", "projector": "ok"}


def http_of(served: Served) -> httpx.Client:
    return httpx.Client(base_url=json.loads((served.data_dir / "serve.json").read_text())["http"], timeout=10)


def nats_server_of(served: Served) -> int:
    """The pid of serve's nats-server, as it wrote it (0 while it writes it again)."""
    try:
        return int((served.data_dir / "nats" / PID_FILE).read_text())
    except (OSError, ValueError):
        return 0


def metric(text: str, name: str, **labels: str) -> float | None:
    """The value of one sample of a scrape (Prometheus's text format), as Prometheus reads it."""
    samples = (sample for family in text_string_to_metric_families(text) for sample in family.samples)
    return next((sample.value for sample in samples if sample.name == name and sample.labels == labels), None)


def saying_to(log: Path, data_dir: Path) -> Served:
    """A serve whose stderr goes to ``log``: it inherits this process's, made that file meanwhile."""
    kept = os.dup(2)
    try:
        with log.open("wb") as file:
            os.dup2(file.fileno(), 2)
            return Served(data_dir)
    finally:
        os.dup2(kept, 2)
        os.close(kept)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    served = saying_to(tmp_path / "serve.log", tmp_path / "home")
    yield served
    if served.process.poll() is None:
        served.stop()


def test_its_nats_server_killed_outright_is_started_again_and_serve_carries_on(served: Served) -> None:
    expiring = served.run("ratify", "init", "adr-1", "--roster", "alice", "--text", TEXT, "--expires-in", "3s")
    assert expiring.returncode == 0, expiring.stderr
    killed = nats_server_of(served)
    os.kill(killed, signal.SIGKILL)

    def back(pid: int) -> bool:
        return pid not in (0, killed) and process_running(pid)

    assert back(until(lambda: nats_server_of(served), back, timeout=15))
    with http_of(served) as http:
        ready = until(lambda: http.get("/readyz"), lambda answer: answer.status_code == 200, timeout=30)
        assert ready.json() == {"ready": True, "checks": ALL_OK}
        sent = served.run("ratify", "init", "adr-2", "--roster", "alice", "--text", TEXT, "--json")
        assert sent.returncode == 0, sent.stderr
        shown = served.run("ratify", "show", "adr-2", "--after", str(json.loads(sent.stdout)["position"]), "--json")
        assert json.loads(shown.stdout)["status"] == "open"
        assert metric(http.get("/metrics").text, "athenaeum_nats_server_restarts_total") == 1

    def status() -> str:
        return json.loads(served.run("ratify", "show", "adr-1", "--json").stdout)["status"]

    # The timers carry on too: by its schedule, or by the sweep of what a schedule missed.
    assert until(status, lambda now: now != "open", timeout=60) != "open"
    # The data dir is still this serve's alone, and its guard let it run on.
    second = subprocess.run([*ATHENAEUM, "serve", "--data-dir", str(served.data_dir), "--no-http"],
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 2 and "already runs on" in second.stderr
    assert served.process.poll() is None
    said = (served.data_dir.parent / "serve.log").read_text()
    assert "the NATS server was killed by SIGKILL; starting it again on port" in said and "(try 1 of 5)" in said
    assert served.stop() == 0


def test_a_nats_server_that_cannot_start_again_stops_serve_non_zero_saying_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "nats-server"
    shutil.copy(find_binary(), binary)
    monkeypatch.setenv("ATHENAEUM_NATS_SERVER_BIN", str(binary))
    served = saying_to(tmp_path / "serve.log", tmp_path / "home")
    try:
        binary.unlink()  # the next start finds no binary
        os.kill(nats_server_of(served), signal.SIGKILL)
        with http_of(served) as http:
            # While it tries, serve is alive but not ready, and says why.
            assert http.get("/healthz").json() == {"ok": True}
            down = until(lambda: http.get("/readyz"), lambda answer: answer.status_code == 503, timeout=10)
            assert down.status_code == 503 and down.json()["checks"]["nats"] != "ok", down.text
        assert served.process.wait(timeout=90) == 3
    finally:
        if served.process.poll() is None:
            served.stop()
    said = (tmp_path / "serve.log").read_text()
    assert "try 5 of 5 to start the NATS server failed: [Errno 2] No such file or directory" in said
    assert said.strip().splitlines()[-1].startswith(
        "athenaeum: the embedded NATS server was killed by SIGKILL and could not be started again"), said[-2000:]


def test_the_probes_say_alive_and_ready_and_the_metrics_count_commands_by_family_verb_and_outcome(
        served: Served) -> None:
    assert served.run("ratify", "init", "adr-3", "--roster", "alice", "--text", TEXT).returncode == 0
    assert served.run("ratify", "cancel", "adr-404").returncode == 1
    assert served.run("ratify", "show", "adr-3").returncode == 0
    with http_of(served) as http:
        alive = http.get("/healthz")
        assert alive.status_code == 200 and alive.json() == {"ok": True}
        ready = http.get("/readyz")
        assert ready.status_code == 200 and ready.json() == {"ready": True, "checks": ALL_OK}
        answer = http.get("/metrics")
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
        assert not {"/healthz", "/readyz", "/metrics"} & http.get("/openapi.json").json()["paths"].keys()
    text = answer.text
    assert metric(text, "athenaeum_commands_total", family="ratification", verb="init", outcome="ok") == 1
    assert metric(text, "athenaeum_commands_total", family="ratification", verb="cancel", outcome="not_found") == 1
    assert metric(text, "athenaeum_command_seconds_count", family="ratification", verb="init") == 1
    assert metric(text, "athenaeum_query_seconds_count", query="ratification.show") == 1
    assert metric(text, "athenaeum_projector_lag_seconds") == 0
    assert metric(text, "athenaeum_timers_due", family="ratification") == 0
    assert metric(text, "athenaeum_timers_overdue", family="ratification") == 0
    assert metric(text, "athenaeum_nats_server_restarts_total") == 0
    assert metric(text, "athenaeum_kv_reconciliations_total") >= 1  # at start


def test_a_serve_without_http_serves_its_metrics_where_metrics_says(tmp_path: Path) -> None:
    process = subprocess.Popen([*ATHENAEUM, "serve", "--data-dir", str(tmp_path / "home"), "--no-http",
                                "--metrics", "127.0.0.1:0", "--humans", "ada"], stdout=subprocess.PIPE, text=True)
    try:
        ready = process.stdout.readline()
        url = json.loads((tmp_path / "home" / "serve.json").read_text())["metrics"]
        assert f"metrics={url}" in ready and "http=" not in ready
        answer = httpx.get(url, timeout=10)
        assert answer.status_code == 200 and metric(answer.text, "athenaeum_nats_server_restarts_total") == 0
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
