"""The views bucket's entries: each says the ledger position its value reflects.

The bucket is read whole two ways: by an ordered consumer, the quick way serve's reconciliation
takes, and by message gets alone, the way an auditor may (a consumer could deliver onto any
subject, so an auditor makes none).
"""

from __future__ import annotations

import asyncio
from typing import NamedTuple

import nats.errors
from eventsourcing.persistence import OperationalError
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.kv import KV_DEL, KV_OP, KV_PURGE

from athenaeum.services.jetstream.client import STREAM_NOT_FOUND, JetStreamClient
from athenaeum.services.jetstream.messages import Stored

POSITION = "Athenaeum-Position"
READ_TIMEOUT = 10.0
GET_WALKERS = 16  # stretches of the bucket's stream read at once with message gets
GET_PASSES = 3  # reads of what was put meanwhile, after the first


class Entry(NamedTuple):
    """A key's latest entry: the position it reflects (0 when it does not say), its revision,
    and its value (None once deleted)."""

    position: int
    revision: int
    value: bytes | None


def entry_of(headers: dict[str, str] | None, revision: int, data: bytes | None) -> Entry:
    """A key's entry as stored; one whose position is no position says none (0)."""
    headers = headers or {}
    deleted = headers.get(KV_OP) in (KV_DEL, KV_PURGE)
    said = headers.get(POSITION, "")
    return Entry(int(said) if said.isdigit() and said.isascii() else 0, revision, None if deleted else (data or b""))


async def entries_watched(js: JetStreamContext, bucket: str) -> dict[str, Entry]:
    """Every key's latest entry, deleted ones included, in one pass of an ordered consumer."""
    stream, prefix = f"KV_{bucket}", f"$KV.{bucket}."
    info = await js.stream_info(stream)
    if not info.state.messages:
        return {}
    subscription = await js.subscribe(prefix + ">", ordered_consumer=True, deliver_policy=DeliverPolicy.LAST_PER_SUBJECT)
    entries = {}
    try:
        while True:
            try:
                msg = await subscription.next_msg(timeout=READ_TIMEOUT)
            except nats.errors.TimeoutError as error:
                raise OperationalError(f"reading the KV bucket {stream} timed out") from error
            entries[msg.subject.removeprefix(prefix)] = entry_of(msg.headers, msg.metadata.sequence.stream, msg.data)
            if msg.metadata.num_pending == 0:
                return entries
    finally:
        await subscription.unsubscribe()


async def entries_got(client: JetStreamClient, bucket: str) -> dict[str, Entry] | None:
    """Every key's latest entry, read with message gets alone; None when there is no bucket.
    Its stream is cut into stretches read at once, each one message after another; then what
    was put meanwhile, a few times, so that a key put again during the read is read again."""
    stream, prefix = f"KV_{bucket}", f"$KV.{bucket}."
    messages: list[Stored] = []
    after = 0
    for _ in range(1 + GET_PASSES):
        info = await client.stream_info(stream)
        if info.get("error", {}).get("err_code") == STREAM_NOT_FOUND:
            return None
        if "error" in info:
            raise OperationalError(f"reading the KV bucket {stream}: {info['error'].get('description')}")
        last = int((info.get("state") or {}).get("last_seq") or 0)
        if last <= after:
            break
        span = -(-(last - after) // GET_WALKERS)
        stretches = [(start, min(start + span, last + 1)) for start in range(after + 1, last + 1, span)]
        for read in await asyncio.gather(*(_stretch(client, stream, prefix, *bounds) for bounds in stretches)):
            messages += read
        after = last
    return {message.subject.removeprefix(prefix): entry_of(message.headers, message.seq, message.payload)
            for message in messages}  # in stream order: a key's latest last


async def _stretch(client: JetStreamClient, stream: str, prefix: str, start: int, end: int) -> list[Stored]:
    """The bucket's messages from sequence ``start`` up to ``end``."""
    found: list[Stored] = []
    while start < end:
        message = await client.leader_get(stream, {"seq": start, "next_by_subj": prefix + ">"})
        if message is None or message.seq >= end:
            break
        found.append(message)
        start = message.seq + 1
    return found
