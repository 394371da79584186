"""The process that reads ahead for ``read_ahead``.

``python -m athenaeum.services.jetstream.read_ahead_worker ORDER`` (a JSON ``read_ahead.Order``)
writes to stdout frames of msgpack lists of entries, in order, to the stream's end as it stands;
then exits. A failure is one last frame holding its message, and exit status 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
import uvloop

from athenaeum.services.jetstream.client import JetStreamClient
from athenaeum.services.jetstream.entries import Entry
from athenaeum.services.jetstream.read_ahead import BATCH, Order
from athenaeum.services.runtime.frames import write_frame


async def _read(order: Order) -> None:
    client = await JetStreamClient.connect(order.urls, order.timeout, order.name,
                                           Path(order.key) if order.key else None)
    try:
        start = order.start
        while True:
            messages, more = await client.read(order.stream, order.subject, start, BATCH)
            if messages:
                write_frame(sys.stdout.buffer, msgspec.msgpack.encode([Entry.of(message) for message in messages]))
                start = messages[-1].seq + 1
            if not messages or not more:
                return
    finally:
        await client.close()


def main() -> None:
    order = msgspec.json.decode(sys.argv[1], type=Order)
    try:
        uvloop.run(_read(order))
    except Exception as error:  # noqa: BLE001  the reader's failure, told its starter as its last frame
        write_frame(sys.stdout.buffer, msgspec.msgpack.encode(f"reading {order.stream} ahead failed: {error}"))
        sys.exit(1)


if __name__ == "__main__":
    main()
