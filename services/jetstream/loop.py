"""A private asyncio loop on its own thread, so synchronous eventsourcing code can use nats-py."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """Runs coroutines on a dedicated event loop and waits for them from any thread."""

    def __init__(self, name: str = "athenaeum-jetstream") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and return its result; every coroutine bounds its waits."""
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("the JetStream loop cannot wait on itself")
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.run(_cancel_other_tasks())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()


async def _cancel_other_tasks() -> None:
    # Tasks left behind (a subscription's reader, say) must end before the loop closes.
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
