"""An exclusive lock on a file, held by one process: the way a program claims a directory."""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO


def try_lock(path: Path) -> IO[str] | None:
    """Lock ``path`` (created if missing) for this process alone, or None while another process
    holds it. Closing the returned file releases it, and so does the process's death, however
    abrupt: a program killed outright leaves nothing locked behind."""
    handle = open(path, "a+")  # noqa: SIM115  held open for as long as the lock is
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle
