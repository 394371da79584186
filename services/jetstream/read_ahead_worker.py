"""The process that reads ahead for ``read_ahead``.

``python -m athenaeum.services.jetstream.read_ahead_worker ORDER`` (a JSON ``read_ahead.Order``)
writes to stdout frames of msgpack lists of entries, in order, to the stream's end as it stands;
then exits. A failure is one last frame holding its message, and exit status 1.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import msgspec
import uvloop

from athenaeum.services.jetstream.client import JetStreamClient
from athenaeum.services.jetstream.entries import Entry
from athenaeum.services.jetstream.read_ahead import BATCH, Order
from athenaeum.services.runtime.frames import FrameWriter, write_frame

AHEAD = 2  # batches queued behind the one being written, at most, before reading waits


async def _read(order: Order, frames: FrameWriter) -> None:
    """Each batch is asked for before the last is sent, and written by a thread: while the audit
    works through one batch, the next is fetched and parsed (a write that blocked the loop until
    the audit took it would leave the reading idle)."""
    client = await JetStreamClient.connect(order.urls, order.timeout, order.name,
                                           Path(order.key) if order.key else None)
    reading = asyncio.ensure_future(client.read(order.stream, order.subject, order.start, BATCH))
    try:
        while True:
            messages, more = await reading
            if messages and more:
                reading = asyncio.ensure_future(client.read(order.stream, order.subject, messages[-1].seq + 1, BATCH))
            if messages:
                frames.send(msgspec.msgpack.encode([Entry.of(message) for message in messages]))
            if not messages or not more:
                return
    finally:
        reading.cancel()  # (done already, unless sending failed: the pipe's reader left)
        await client.close()


def main() -> None:
    order = msgspec.json.decode(sys.argv[1], type=Order)
    frames = FrameWriter(sys.stdout.buffer, AHEAD, "athenaeum-read-ahead-writer")
    try:
        uvloop.run(_read(order, frames))
        frames.finish()
        return
    except Exception as error:  # noqa: BLE001  the reader's failure, told its starter as its last frame
        frames.abandon()  # (the frame being written ends whole first)
        write_frame(sys.stdout.buffer, msgspec.msgpack.encode(f"reading {order.stream} ahead failed: {error}"))
        sys.exit(1)


if __name__ == "__main__":
    main()
