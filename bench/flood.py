"""A flood of reads, as a process of its own: ``python -m bench.flood URL KEY READERS`` keeps
``READERS`` reads of ``check`` in flight on ``athenaeum.query.check`` (connected with the seed
file KEY), each sent again the moment it is answered, until SIGTERM; then prints how many were
answered. ``bench.commands`` measures a command's latency while it runs."""

from __future__ import annotations

import asyncio
import signal
import sys

import nats


async def flood(url: str, key: str, readers: int) -> None:
    nc = await nats.connect(url, nkeys_seed=key)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    answered = 0

    async def reader() -> None:
        nonlocal answered
        while not stop.is_set():
            await nc.request("athenaeum.query.check", b'{"agent": "agent-0"}', timeout=30)
            answered += 1

    tasks = [asyncio.create_task(reader()) for _ in range(readers)]
    print("flood ready", flush=True)
    await stop.wait()
    await asyncio.gather(*tasks)
    print(f"flood answered {answered}", flush=True)
    await nc.close()


if __name__ == "__main__":
    asyncio.run(flood(sys.argv[1], sys.argv[2], int(sys.argv[3])))
