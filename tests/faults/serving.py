"""``athenaeum serve`` as the fault tests run it: loaded by a few agents, and stopped within a bound."""

from __future__ import annotations

import signal
import subprocess

from tests.faults.load import Load
from tests.services.conftest import Served

AGENTS = ("a1", "a2", "a3", "a4")
STOP_WITHIN = 20.0  # seconds a stopping serve may take before it is killed


def loaded(served: Served, rounds: int) -> Load:
    """The load of ``AGENTS``, registered first (each with its key), started on ``served``."""
    return Load(served.url, {name: served.enrol(name) for name in AGENTS}, rounds).start()


def stop(served: Served) -> None:
    """SIGTERM, and SIGKILL if it does not stop within ``STOP_WITHIN``."""
    if served.process.poll() is not None:
        return
    served.process.send_signal(signal.SIGTERM)
    try:
        served.process.wait(timeout=STOP_WITHIN)
    except subprocess.TimeoutExpired:
        served.process.kill()
        served.process.wait(timeout=30)
