"""The asynchronous JetStream operations the recorders need, with every wait bounded.

Facts this rests on (measured on nats-server 2.15.1, see DESIGN.md section 5):
- an atomic batch is: first message with ``Nats-Batch-Id`` and ``Nats-Batch-Sequence: 1``,
  plain publishes in the middle, and a request carrying ``Nats-Batch-Commit: 1`` whose reply
  holds the last sequence and the count; a failed check anywhere stores nothing;
- ``Nats-Expected-Last-Subject-Sequence`` gives per-subject optimistic concurrency, and may
  only sit on the first message of each subject in a batch;
- a direct get with ``batch`` and ``next_by_subj`` streams stored messages to an inbox and
  ends with a status 204 (end of batch) or 404 (nothing found).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec
import nats.errors
from eventsourcing.persistence import OperationalError, ProgrammingError
from nats.aio.client import Client
from nats.aio.msg import Msg

from athenaeum.services.nats_server import NatsServerError, require_version

# The server rejects atomic batches of more messages than this (err_code 10199).
MAX_BATCH = 1000
# 10071 on a single server, 10164 from a clustered stream's leader.
WRONG_LAST_SEQUENCE = frozenset({10071, 10164})

log = logging.getLogger(__name__)
# What a broken connection raises: uvloop reports a write on a closed transport as RuntimeError.
_CONNECTION_ERRORS = (nats.errors.Error, OSError, RuntimeError)


class WrongLastSequence(Exception):
    """Another writer appended to a subject since its last sequence was read."""


class ApiError(msgspec.Struct):
    code: int = 0
    err_code: int = 0
    description: str = ""


class PubAck(msgspec.Struct):
    seq: int = 0
    count: int = 1
    error: ApiError | None = None


_decode_ack = msgspec.json.Decoder(PubAck).decode


@dataclass
class Outgoing:
    """One message to append: its subject, body and headers."""

    subject: str
    payload: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stored:
    """One message read back from the stream."""

    seq: int
    subject: str
    payload: bytes
    headers: dict[str, str]


class JetStreamClient:
    """One NATS connection and the stream operations on it. Coroutines run on one loop."""

    def __init__(self, nc: Client, timeout: float) -> None:
        self.nc = nc
        self.timeout = timeout
        self._reads: _ReadReplies | None = None

    @classmethod
    async def connect(cls, urls: Sequence[str], timeout: float, name: str) -> JetStreamClient:
        nc = Client()
        try:
            # Reconnect forever once connected (each operation bounds its own wait), but give
            # the first connection only ``timeout``: nats-py would retry it forever too.
            await asyncio.wait_for(
                nc.connect(
                    servers=list(urls),
                    name=name,
                    connect_timeout=timeout,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.25,
                    error_cb=_log_connection_error,
                ),
                timeout,
            )
        except (asyncio.TimeoutError, nats.errors.Error, OSError) as error:
            await JetStreamClient(nc, timeout).close()
            raise OperationalError(f"cannot reach NATS at {', '.join(urls)}: {error!r}") from error
        try:
            # Checked on connect: an old server would fail later, on an unknown stream option.
            version = nc.connected_server_version
            require_version((version.major, version.minor, version.patch), f"the server at {nc.connected_url.netloc}")
        except NatsServerError as error:
            await nc.close()
            raise ProgrammingError(str(error)) from error
        return cls(nc, timeout)

    async def close(self) -> None:
        if self.nc.is_closed:
            return
        try:
            await self.nc.close()
        except _CONNECTION_ERRORS as error:
            log.debug("closing a broken NATS connection: %r", error)

    async def ensure_stream(self, config: dict[str, object]) -> None:
        """Create the stream unless it exists; an existing one must allow what we rely on."""
        name = config["name"]
        info = await self._api(f"STREAM.INFO.{name}", b"")
        if info.get("error", {}).get("err_code") == 10059:  # stream not found
            info = await self._api(f"STREAM.CREATE.{name}", msgspec.json.encode(config))
            if info.get("error", {}).get("err_code") == 10058:  # created meanwhile by another
                info = await self._api(f"STREAM.INFO.{name}", b"")
        if "error" in info:
            raise ProgrammingError(f"stream {name}: {info['error'].get('description')}")
        existing = info["config"]
        for option in ("allow_atomic", "allow_direct"):
            if config.get(option) and not existing.get(option):
                raise ProgrammingError(f"stream {name} exists without {option}: Athenaeum needs it")

    async def append(self, messages: Sequence[Outgoing]) -> int:
        """Store ``messages`` atomically; return the stream sequence of the last one."""
        if not messages:
            raise ProgrammingError("nothing to append")
        if len(messages) > MAX_BATCH:
            raise ProgrammingError(
                f"{len(messages)} messages in one atomic append; the server allows at most {MAX_BATCH}"
            )
        if len(messages) == 1:
            only = messages[0]
            reply = await self._request(only.subject, only.payload, only.headers)
        else:
            batch_id = uuid.uuid4().hex
            first, *middle, last = messages
            try:
                # The first message's reply only says the batch began: send it nowhere.
                await self.nc.publish(
                    first.subject,
                    first.payload,
                    reply=self.nc.new_inbox(),
                    headers=first.headers | {"Nats-Batch-Id": batch_id, "Nats-Batch-Sequence": "1"},
                )
                for number, message in enumerate(middle, start=2):
                    await self.nc.publish(
                        message.subject,
                        message.payload,
                        headers=message.headers
                        | {"Nats-Batch-Id": batch_id, "Nats-Batch-Sequence": str(number)},
                    )
            except _CONNECTION_ERRORS as error:
                raise OperationalError(f"append failed before commit: {error!r}") from error
            reply = await self._request(
                last.subject,
                last.payload,
                last.headers
                | {
                    "Nats-Batch-Id": batch_id,
                    "Nats-Batch-Sequence": str(len(messages)),
                    "Nats-Batch-Commit": "1",
                },
            )
        ack = _decode_ack(reply.data)
        if ack.error is not None:
            if ack.error.err_code in WRONG_LAST_SEQUENCE:
                raise WrongLastSequence(ack.error.description)
            raise OperationalError(f"append rejected by JetStream: {ack.error.description} ({ack.error.err_code})")
        return ack.seq

    async def read(
        self,
        stream: str,
        subject: str,
        start: int,
        limit: int,
    ) -> tuple[list[Stored], bool]:
        """Up to ``limit`` messages on ``subject`` from sequence ``start``.

        Returns the messages and whether more may follow.
        """
        if self._reads is None:
            self._reads = await _ReadReplies.open(self.nc)
        request = msgspec.json.encode({"seq": max(start, 1), "batch": limit, "next_by_subj": subject})
        reply, pending = self._reads.expect()
        try:
            await self.nc.publish(f"$JS.API.DIRECT.GET.{stream}", request, reply=reply)
            status, more = await asyncio.wait_for(pending.finished, self.timeout)
        except asyncio.TimeoutError as error:
            raise OperationalError(f"reading {subject} from {stream} timed out after {self.timeout}s") from error
        except _CONNECTION_ERRORS as error:
            raise OperationalError(f"reading {subject} from {stream} failed: {error!r}") from error
        finally:
            self._reads.forget(reply)
        if status not in ("204", "404"):
            raise OperationalError(f"direct get on {stream} failed with status {status}")
        return pending.messages, more

    async def last(self, stream: str, subject: str) -> Stored | None:
        """The last message on ``subject`` (wildcards allowed), or None."""
        request = msgspec.json.encode({"last_by_subj": subject})
        msg = await self._request(f"$JS.API.DIRECT.GET.{stream}", request, {})
        status = msg.headers.get("Status") if msg.headers else None
        if status == "404":
            return None
        if status is not None:
            raise OperationalError(f"direct get on {stream} failed: {msg.headers}")
        return _stored(msg)

    async def _api(self, endpoint: str, payload: bytes) -> dict:
        reply = await self._request(f"$JS.API.{endpoint}", payload, {})
        return msgspec.json.decode(reply.data)

    async def _request(self, subject: str, payload: bytes, headers: dict[str, str]) -> Msg:
        try:
            # request() bounds its own wait; publish_async, whose future an error reply can
            # leave unresolved (nats.py issue 985), is never used here.
            return await self.nc.request(subject, payload, timeout=self.timeout, headers=headers or None)
        except nats.errors.NoRespondersError as error:
            raise OperationalError(
                f"nothing answers on {subject}: is JetStream enabled and the stream there?"
            ) from error
        except nats.errors.TimeoutError as error:
            raise OperationalError(f"NATS request on {subject} timed out after {self.timeout}s") from error
        except _CONNECTION_ERRORS as error:
            raise OperationalError(f"NATS request on {subject} failed: {error!r}") from error


class _PendingRead:
    def __init__(self) -> None:
        self.messages: list[Stored] = []
        # (status, more may follow) once the server ends the batch
        self.finished: asyncio.Future[tuple[str, bool]] = asyncio.get_running_loop().create_future()


class _ReadReplies:
    """One wildcard inbox for all batched direct gets, instead of a subscription per read."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.pending: dict[str, _PendingRead] = {}
        self._next = 0

    @classmethod
    async def open(cls, nc: Client) -> _ReadReplies:
        replies = cls(nc.new_inbox())
        await nc.subscribe(f"{replies.prefix}.*", cb=replies.route)
        return replies

    def expect(self) -> tuple[str, _PendingRead]:
        self._next += 1
        reply = f"{self.prefix}.{self._next}"
        pending = self.pending[reply] = _PendingRead()
        return reply, pending

    def forget(self, reply: str) -> None:
        self.pending.pop(reply, None)

    async def route(self, msg: Msg) -> None:
        pending = self.pending.get(msg.subject)
        if pending is None or pending.finished.done():
            return  # the reader timed out and left
        status = msg.headers.get("Status") if msg.headers else None
        if status is None:
            pending.messages.append(_stored(msg))
        else:
            # 204 ends a batch (with how many remain), 404 means nothing matched.
            more = status == "204" and msg.headers.get("Nats-Num-Pending", "0") != "0"
            pending.finished.set_result((status, more))


async def _log_connection_error(error: Exception) -> None:
    # Operations report their own failures; connection trouble is only worth a debug line.
    log.debug("NATS connection: %r", error)


def _stored(msg: Msg) -> Stored:
    headers = msg.headers or {}
    return Stored(
        seq=int(headers["Nats-Sequence"]),
        subject=headers["Nats-Subject"],
        payload=msg.data,
        headers=headers,
    )
