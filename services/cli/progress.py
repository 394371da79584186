"""A progress bar on stderr while a verb reads a whole ledger, as ``rich`` draws it: only on a
terminal, gone when the verb ends, so piped and redirected runs print exactly what they did
before."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


@contextmanager
def progress(doing: str, total: int, shown: bool = True) -> Iterator[Callable[[int], None]]:
    """``doing`` (``auditing``, say) ``total`` entries, the ledger's last position when the verb
    began; yields what to call with how many are done. ``shown=False``: no bar at all."""
    console = Console(stderr=True)
    if not shown or not console.is_terminal:
        yield lambda done: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    # What the verb writes goes to its own streams, never through the bar.
    with Progress(*columns, console=console, transient=True, redirect_stdout=False, redirect_stderr=False) as bar:
        task = bar.add_task(doing, total=total)
        yield lambda done: bar.update(task, completed=done)
