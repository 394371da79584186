"""A private asyncio loop on its own thread, so synchronous eventsourcing code can use nats-py."""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import uvloop

T = TypeVar("T")


class LoopThread:
    """Runs coroutines on a dedicated event loop and waits for them from any thread."""

    def __init__(self, name: str = "athenaeum-jetstream") -> None:
        # uvloop: the recorders' round trips cost a fifth less CPU than on asyncio's own loop.
        self.loop = uvloop.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._operations: set[asyncio.Task[Any]] = set()

    def _run(self) -> None:
        self.loop.run_forever()
        self.loop.close()  # stopped, whether by ``close`` or by ``stop_soon``

    def run(self, coroutine: Coroutine[Any, Any, T], lasting: bool = False) -> T:
        """Run ``coroutine`` on the loop and return its result; every coroutine bounds its waits
        but a ``lasting`` one (a follower's, until it is stopped), which closing the loop does
        not wait for: it is cancelled with the loop."""
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("the JetStream loop cannot wait on itself")
        # A bare lock handed over by a done-callback: run_coroutine_threadsafe's chained
        # futures cost more CPU than the round trip to a local server.
        finished = _thread.allocate_lock()
        finished.acquire()
        outcome: list[asyncio.Task[T]] = []

        def start() -> None:
            task = self.loop.create_task(coroutine)
            if not lasting:
                self._operations.add(task)
                task.add_done_callback(self._operations.discard)
            task.add_done_callback(lambda done: (outcome.append(done), finished.release()))

        self.loop.call_soon_threadsafe(start)
        # Coroutines bound their own waits; this only notices a loop that stopped under us.
        while not finished.acquire(timeout=1.0):
            if not self._thread.is_alive():
                raise RuntimeError("the JetStream loop stopped before the operation finished")
        return outcome[0].result()

    def call_soon(self, callback: Callable[[], object]) -> None:
        """Have the loop call ``callback`` soon, from any thread, without waiting for it."""
        with contextlib.suppress(RuntimeError):  # the loop closed: nothing is left to call it for
            self.loop.call_soon_threadsafe(callback)

    @property
    def running(self) -> bool:
        """False once closed, and at interpreter exit, where daemon threads are already gone."""
        return not self.loop.is_closed() and self._thread.is_alive()

    def finish_operations(self, grace: float) -> None:
        """Let operations other threads are waiting on end (up to ``grace`` seconds)."""
        if self.running:
            self.run(_wait_for(self._operations, grace))

    def stop_soon(self, last: Coroutine[Any, Any, Any]) -> None:
        """Run ``last``, end the other tasks and stop the loop, without waiting for any of it:
        for a finaliser, which may run on any thread, this loop's own included."""

        async def finish() -> None:
            try:
                await last
            finally:
                await _cancel_other_tasks()
                self.loop.stop()

        self.loop.call_soon_threadsafe(lambda: self.loop.create_task(finish()))

    def close(self) -> None:
        if self.loop.is_closed():
            return
        if self.running:
            self.run(_cancel_other_tasks())
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
        # A loop whose thread died running it (daemon threads at interpreter exit) cannot close.
        if not self._thread.is_alive() and not self.loop.is_running():
            self.loop.close()


async def _cancel_other_tasks() -> None:
    # Tasks left behind (a subscription's reader, say) must end before the loop closes.
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


async def _wait_for(tasks: set[asyncio.Task[Any]], grace: float) -> None:
    others = [task for task in tasks if task is not asyncio.current_task()]
    if others:
        await asyncio.wait(others, timeout=grace)
