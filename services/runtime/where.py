"""Where a ``serve`` keeps its data and says it runs, and what it may run: what the command
line needs to find a deployment without loading the services themselves."""

from __future__ import annotations

import json
import os
from pathlib import Path

SERVE_FILE = "serve.json"
SERVICES = frozenset({"commands", "timer", "projector", "http"})
DEFAULT_HTTP = "127.0.0.1:8765"


def default_data_dir() -> Path:
    home = os.environ.get("ATHENAEUM_HOME")
    return Path(home) if home else Path.home() / ".local" / "share" / "athenaeum"


def running_url(data_dir: Path) -> str | None:
    """The NATS URL of the ``athenaeum serve`` running on ``data_dir``, if any."""
    try:
        return json.loads((data_dir / SERVE_FILE).read_text())["nats"]
    except (OSError, ValueError, KeyError):
        return None
