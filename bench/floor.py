"""The floor of a command over NATS, as a service of its own: ``python -m bench.floor URL``
(and the seed file to connect with, where the server authenticates) answers each request on
``bench.floor`` with one publish-with-ack onto ``benchfloor.<n>``, and each on
``bench.floor.read`` with a direct get of the last message on ``benchfloor.roster`` first (what a
signed command's fresh read of the roster costs), until SIGTERM. ``bench.commands`` measures
requests against it."""

from __future__ import annotations

import asyncio
import signal
import sys

import msgspec
import nats
import uvloop
from nats import micro

from bench.baselines import last_sequence

STREAM = "BENCHFLOOR"
ROSTER = "benchfloor.roster"  # one message, read at every request on bench.floor.read


async def serve(url: str, key: str | None) -> None:
    nc = await nats.connect(url, nkeys_seed=key)

    async def publish(request: micro.Request) -> None:
        ack = await nc.request(f"benchfloor.{msgspec.json.decode(request.data)['n']}", request.data, timeout=5)
        await request.respond(ack.data)

    async def read_then_publish(request: micro.Request) -> None:
        assert await last_sequence(nc, STREAM, ROSTER) != "0"
        await publish(request)

    await nc.jetstream().publish(ROSTER, b'{"roster":1}')
    service = await micro.add_service(nc, name="floor", version="0.0.1", queue_group="floor")
    await service.add_endpoint(name="one", subject="bench.floor", handler=publish)
    await service.add_endpoint(name="read", subject="bench.floor.read", handler=read_then_publish)
    await nc.flush()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("floor ready", flush=True)
    await stop.wait()
    await service.stop()
    await nc.close()


if __name__ == "__main__":
    uvloop.run(serve(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))  # serve's loop, as serve runs on
