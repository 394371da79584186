"""compose.yaml describes the production topology: valid against the Compose schema, and
every Athenaeum service runs a real ``athenaeum`` verb."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from athenaeum.services.runtime.nats_binary import find_binary
from athenaeum.services.runtime.nats_server import free_port

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "tests" / "data" / "compose-spec.json"
ATHENAEUM = [sys.executable, "-m", "athenaeum.services.cli"]

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_yaml_is_valid_against_the_compose_schema(compose: dict) -> None:
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    validator.validate(compose)
    broken = compose | {"services": {"x": {"image": "a", "no_such_key": 1}}}
    assert not validator.is_valid(broken)  # the check can fail


def test_every_athenaeum_service_runs_a_real_verb_with_real_options(compose: dict) -> None:
    from athenaeum.services.cli.main import build_parser

    athenaeum = {name: service for name, service in compose["services"].items() if service.get("image") == "athenaeum:latest"}
    assert set(athenaeum) == {"commands", "projector", "timer", "http"}
    for name, service in athenaeum.items():
        args = build_parser().parse_args(service["command"])  # exits (fails the test) on a bad verb or option
        assert args.family == "serve" and args.services == name


def test_the_cluster_has_three_nodes_that_fsync_every_write(compose: dict) -> None:
    nodes = [name for name in compose["services"] if name.startswith("nats-")]
    assert len(nodes) == 3
    assert "sync_interval: always" in (ROOT / "deploy" / "nats.conf").read_text()


def test_the_nodes_run_no_unauthenticated_monitoring_endpoint_and_publish_no_port(compose: dict) -> None:
    conf = (ROOT / "deploy" / "nats.conf").read_text()
    settings = [line.split("#")[0].strip() for line in conf.splitlines()]
    assert not [s for s in settings if s.split(":")[0].strip() in ("http", "https", "http_port", "https_port",
                                                                    "monitor_port")], settings
    for name, service in compose["services"].items():
        if name.startswith("nats-"):
            assert not {"-m", "--http_port", "-ms", "--https_port"} & set(service["command"]), service["command"]
            assert "ports" not in service, service  # reached by the services on compose's network only


def test_nats_nodes_include_the_accounts_and_the_services_connect_with_their_key_as_secrets(compose: dict) -> None:
    secrets = compose["secrets"]
    assert secrets["nats_accounts"]["file"] == "./deploy/secrets/accounts.conf"
    assert secrets["nats_cluster"]["file"] == "./deploy/secrets/cluster.conf"
    for name, service in compose["services"].items():
        if name.startswith("nats-"):
            assert {"source": "nats_accounts", "target": "/etc/nats/accounts.conf"} in service["secrets"]
            assert {"source": "nats_cluster", "target": "/etc/nats/cluster.conf"} in service["secrets"]
        elif service.get("image") == "athenaeum:latest":
            assert "athenaeum_service_key" in service["secrets"]
            assert service["environment"]["ATHENAEUM_NATS_KEY"] == "/run/secrets/athenaeum_service_key"
    conf = (ROOT / "deploy" / "nats.conf").read_text()
    assert 'include "accounts.conf"' in conf and 'include "cluster.conf"' in conf[conf.index("cluster {"):]


def test_the_accounts_key_accounts_writes_make_deploy_nats_conf_valid(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    done = subprocess.run([*ATHENAEUM, "key", "accounts", "--out", str(secrets)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    for secret in ("service.nk", "cluster.conf", "route.secret"):
        assert stat.S_IMODE((secrets / secret).stat().st_mode) == 0o600, secret
    (secrets / "nats.conf").write_text((ROOT / "deploy" / "nats.conf").read_text())
    checked = subprocess.run([str(find_binary()), "-t", "-c", str(secrets / "nats.conf")], capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stderr
    (secrets / "accounts.conf").write_text("accounts: {")
    broken = subprocess.run([str(find_binary()), "-t", "-c", str(secrets / "nats.conf")], capture_output=True, timeout=60)
    assert broken.returncode != 0  # the check can fail


def test_a_deployments_own_server_admits_the_humans_then_the_roster_once_its_accounts_are_rewritten(
        tmp_path: Path) -> None:
    """As compose runs it: serve on a server of its own whose accounts ``key accounts`` wrote,
    the human given by public key only; a principal registered later is admitted once the
    accounts are written again from the roster and the server reloads them."""
    home, secrets = tmp_path / "home", tmp_path / "secrets"

    def athenaeum(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*ATHENAEUM, *args], capture_output=True, text=True, timeout=60, env=env)

    env = {key: value for key, value in os.environ.items() if not key.startswith("ATHENAEUM_")}
    ada = athenaeum("key", "new", "ada", "--data-dir", str(home)).stdout.split()[0]  # its public key
    assert athenaeum("key", "accounts", "--out", str(secrets), "--admit", ada).returncode == 0
    store, ports = str(tmp_path / "js"), tmp_path / "ports"
    # A port the server chooses (-1), which it writes to the ports file once it listens: one
    # chosen here and bound later could be taken in between by a test running beside this one.
    (secrets / "nats.conf").write_text(f'listen: 127.0.0.1:-1\nports_file_dir: "{ports}"\n'
                                       f'jetstream {{ store_dir: "{store}" }}\ninclude "accounts.conf"\n')
    ports.mkdir()
    server = subprocess.Popen([str(find_binary()), "-c", str(secrets / "nats.conf")], stderr=subprocess.DEVNULL)
    url = _listening(server, ports)
    serve = subprocess.Popen([*ATHENAEUM, "serve", "--data-dir", str(tmp_path / "serve"), "--no-http", "--nats", url,
                              "--nats-key", str(secrets / "service.nk"), "--humans", f"ada={ada}"],
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert serve.stdout is not None and serve.stdout.readline().startswith("athenaeum ready")
        as_ = ("--data-dir", str(home), "--nats", url, "--as")
        assert athenaeum("agent", "register", "bob", *as_, "ada").returncode == 0
        assert athenaeum("check", *as_, "bob").returncode == 3  # not admitted yet
        assert athenaeum("key", "accounts", "--out", str(secrets), "--nats", url).returncode == 0
        server.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 20
        while (done := athenaeum("check", *as_, "bob")).returncode != 0 and time.monotonic() < deadline:
            time.sleep(0.1)  # poll interval of a bounded wait for the reload
        assert done.returncode == 0, done.stderr
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
        server.terminate()
        server.wait(timeout=30)


def _listening(server: subprocess.Popen[bytes], ports: Path) -> str:
    """The client URL of ``server``, from the ports file it writes into ``ports`` once listening."""
    listening = _ports(server, ports)
    assert listening is not None, "nats-server ended before it listened"
    return listening["nats"][0]


def _ports(server: subprocess.Popen[bytes], ports: Path) -> dict[str, list[str]] | None:
    """What ``server`` listens on, from the ports file it writes into ``ports`` once it listens on
    all of its ports; None if it ended before (a port it was given was taken)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for written in ports.glob(f"*_{server.pid}.ports"):
            with contextlib.suppress(ValueError):  # still being written
                return json.loads(written.read_text())
        if server.poll() is not None:
            return None
        time.sleep(0.05)  # poll interval of a bounded wait for the server to listen
    raise AssertionError("nats-server did not listen within 20 s")


def test_the_cluster_admits_its_own_routes_and_refuses_a_server_without_their_credential(tmp_path: Path) -> None:
    """Two nodes with the cluster.conf ``key accounts`` writes route to each other; a third
    server reaching their cluster port without the routes' password is refused, so it cannot
    publish into the ledger's account as a route could."""
    secrets = tmp_path / "secrets"
    bad = subprocess.run([*ATHENAEUM, "key", "accounts", "--out", str(secrets), "--routes", "nats-1"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--routes" in bad.stderr
    servers: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(3):  # the ports are chosen before the servers bind them: one may be taken meanwhile
            ports = {name: (free_port(), free_port(), free_port()) for name in ("n1", "n2", "rogue")}  # client, route, monitor
            servers = _cluster(ports, secrets)
            if all(_ports(server, secrets) is not None for server in servers):
                break
            _stop(servers)
        else:
            raise AssertionError("a port chosen for the cluster was taken before its server bound it, three times")

        def routed(name: str) -> list[str]:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ports[name][2]}/routez", timeout=5) as answer:
                    return sorted({route["remote_name"] for route in json.load(answer)["routes"]})
            except OSError:
                return []

        deadline = time.monotonic() + 20
        while routed("n1") != ["n2"] and time.monotonic() < deadline:
            time.sleep(0.1)  # poll interval of a bounded wait for the routes
        assert routed("n1") == ["n2"] and routed("n2") == ["n1"]
        deadline = time.monotonic() + 3  # the rogue retries its route every second: it is given a few tries
        while time.monotonic() < deadline:
            assert routed("n1") == ["n2"] and routed("rogue") == []
            time.sleep(0.2)  # poll interval: the refusal must hold, not merely happen once
    finally:
        _stop(servers)


def _cluster(ports: dict[str, tuple[int, int, int]], secrets: Path) -> list[subprocess.Popen[bytes]]:
    """Nodes n1 and n2 with the cluster.conf ``key accounts`` writes for their routes, and a rogue
    that routes to n1 without it, each on its (client, route, monitor) ports."""
    routes = ",".join(f"127.0.0.1:{ports[name][1]}" for name in ("n1", "n2"))
    done = subprocess.run([*ATHENAEUM, "key", "accounts", "--out", str(secrets), "--routes", routes],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    servers = []
    for name, (client, route, monitor) in ports.items():
        cluster = ('include "cluster.conf"' if name != "rogue"  # beside it, as compose mounts it
                   else f"routes: [nats-route://127.0.0.1:{ports['n1'][1]}]")
        conf = secrets / f"{name}.conf"
        conf.write_text(f"listen: 127.0.0.1:{client}\nhttp: 127.0.0.1:{monitor}\nserver_name: {name}\n"
                        f'ports_file_dir: "{secrets}"\n'
                        f"cluster {{\n  name: athenaeum\n  listen: 127.0.0.1:{route}\n  {cluster}\n}}\n")
        servers.append(subprocess.Popen([str(find_binary()), "-c", str(conf)], stderr=subprocess.DEVNULL))
    return servers


def _stop(servers: list[subprocess.Popen[bytes]]) -> None:
    for server in servers:
        server.terminate()
        server.wait(timeout=10)
