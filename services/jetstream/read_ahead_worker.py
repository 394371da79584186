"""The process that reads ahead for ``read_ahead``.

``python -m athenaeum.services.jetstream.read_ahead_worker ORDER`` (a JSON ``read_ahead.Order``)
writes to stdout frames of msgpack lists of entries, in order, to the stream's end as it stands;
then exits. A failure is one last frame holding its message, and exit status 1.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import uvloop

from athenaeum.services.jetstream.client import JetStreamClient
from athenaeum.services.jetstream.entries import Entry
from athenaeum.services.jetstream.read_ahead import BATCH, Order
from athenaeum.services.runtime.frames import write_frame

AHEAD = 2  # batches read and not yet taken from the pipe, at most, before reading waits


async def _read(order: Order, writer: ThreadPoolExecutor) -> None:
    """Each batch is asked for before the last is written, and written by a thread: while the
    audit works through one batch, the next is fetched and parsed (a write that blocked the
    loop until the audit took it would leave the reading idle)."""
    loop = asyncio.get_running_loop()
    client = await JetStreamClient.connect(order.urls, order.timeout, order.name,
                                           Path(order.key) if order.key else None)
    reading = asyncio.ensure_future(client.read(order.stream, order.subject, order.start, BATCH))
    writes: deque[asyncio.Future[None]] = deque()
    try:
        while True:
            messages, more = await reading
            if messages and more:
                reading = asyncio.ensure_future(client.read(order.stream, order.subject, messages[-1].seq + 1, BATCH))
            if messages:
                body = msgspec.msgpack.encode([Entry.of(message) for message in messages])
                writes.append(loop.run_in_executor(writer, write_frame, sys.stdout.buffer, body))
                while len(writes) > AHEAD:
                    await writes.popleft()
            if not messages or not more:
                break
        while writes:
            await writes.popleft()
    finally:
        reading.cancel()  # (done already, unless writing failed: the pipe's reader left)
        await client.close()


def main() -> None:
    order = msgspec.json.decode(sys.argv[1], type=Order)
    with ThreadPoolExecutor(1, thread_name_prefix="athenaeum-read-ahead-writer") as writer:
        try:
            uvloop.run(_read(order, writer))
            return
        except Exception as error:  # noqa: BLE001  the reader's failure, told its starter as its last frame
            failure = f"reading {order.stream} ahead failed: {error}"
    # After the writer's last frame, whole: the thread is done once the pool is shut.
    write_frame(sys.stdout.buffer, msgspec.msgpack.encode(failure))
    sys.exit(1)


if __name__ == "__main__":
    main()
