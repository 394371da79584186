"""The ``athenaeum`` command's entry point, which imports next to nothing itself: Ctrl-C while
the CLI is still loading (half a second, before ``main`` can catch it) ends the program as it
does later, with one line and exit 130, not a traceback."""

from __future__ import annotations

import sys

INTERRUPTED = 130  # as a shell reports a program Ctrl-C ended


def main() -> int:
    try:
        from athenaeum.services.cli.main import main as run
    except KeyboardInterrupt:
        print("athenaeum: interrupted before it began: nothing was sent", file=sys.stderr)
        return INTERRUPTED
    return run()
