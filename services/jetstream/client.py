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
import hashlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

import msgspec
import nats.errors
from eventsourcing.persistence import OperationalError, ProgrammingError
from nats.aio.client import DEFAULT_INBOX_PREFIX, Client
from nats.aio.msg import Msg

from athenaeum.services.identity.keys import KeyProblem, inbox_prefix, public_key, read_key
from athenaeum.services.jetstream.messages import Outgoing, Stored, stored, stored_from_api
from athenaeum.services.jetstream.reads import MAX_BATCH_BYTES, ReadReplies
from athenaeum.services.jetstream.shape import inspect, layout_drift
from athenaeum.services.runtime.nats_binary import NatsServerError, require_version

# The server rejects atomic batches of more messages than this (err_code 10199).
MAX_BATCH = 1000
# 10071 on a single server, 10164 from a clustered stream's leader.
WRONG_LAST_SEQUENCE = frozenset({10071, 10164})
# A server takes at most 50 atomic batches in flight per stream: over that, a batch's first
# message is refused (10210) and its commit then finds the batch incomplete (10176), with
# nothing stored. This process keeps well under the limit; other writers may still fill it.
MAX_BATCHES_IN_FLIGHT = 32
BATCH_REFUSED = frozenset({10176, 10210})
BATCH_RETRY_WAITS = (0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6)  # about 3 s in all
STREAM_NOT_FOUND = 10059
STREAM_NAME_IN_USE = 10058
NO_MESSAGE_FOUND = 10037
STREAM_API_ATTEMPTS = 3
# A replica behind the message a read must include catches up within milliseconds.
CATCH_UP_WAITS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)

log = logging.getLogger(__name__)
_CONNECTION_ERRORS = (nats.errors.Error, OSError)
NO_RESPONDERS_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)  # about 3 s in all


class StreamFacts(NamedTuple):
    """What a process learns of a stream it uses: its replicas, and (for the ledger) its
    id, which every signed command names, so a signature holds in this ledger only."""

    replicas: int
    ledger_id: str


def ledger_id(name: str, created: str) -> str:
    """A stream's id: its name and the moment the server created it. A stream deleted and
    made again under the same name is another ledger."""
    return f"{name}-{hashlib.sha256(f'{name} {created}'.encode()).hexdigest()[:16]}"


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


class JetStreamClient:
    """One NATS connection and the stream operations on it. Coroutines run on one loop."""

    def __init__(self, nc: Client, timeout: float) -> None:
        self.nc = nc
        self.timeout = timeout
        self._reads: ReadReplies | None = None
        self._online = asyncio.Event()
        self._batches = asyncio.Semaphore(MAX_BATCHES_IN_FLIGHT)
        self.disconnections = 0

    @classmethod
    async def connect(cls, urls: Sequence[str], timeout: float, name: str, key: Path | None = None) -> JetStreamClient:
        """``key``: the seed file of the nkey user to connect as, where the server authenticates."""
        try:
            pair = read_key(key) if key is not None else None
        except KeyProblem as problem:
            raise OperationalError(f"cannot connect to NATS: {problem}") from None
        client = cls(Client(), timeout)
        try:
            # Reconnect forever once connected (each operation bounds its own wait), but give
            # the first connection only ``timeout``: nats-py would retry it forever too.
            await asyncio.wait_for(
                client.nc.connect(
                    servers=list(urls),
                    name=name,
                    nkeys_seed_str=pair.seed.decode() if pair is not None else None,
                    # A user of an authenticating server receives only replies to inboxes its key names.
                    inbox_prefix=inbox_prefix(public_key(pair)) if pair is not None else DEFAULT_INBOX_PREFIX,
                    connect_timeout=timeout,
                    flush_timeout=timeout,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.25,
                    error_cb=_log_connection_error,
                    disconnected_cb=client._disconnected,
                    reconnected_cb=client._reconnected,
                    # Nothing is buffered while disconnected: a write that failed must not
                    # land later, when the server is back, after its caller was told it failed.
                    # (While connected, the flusher still writes out whatever is queued; at
                    # most MAX_BATCHES_IN_FLIGHT batches are.)
                    pending_size=0,
                ),
                timeout,
            )
            client._online.set()
            # Checked on connect: an old server would fail later, on an unknown stream option.
            version = client.nc.connected_server_version
            require_version((version.major, version.minor, version.patch), f"the server at {', '.join(urls)}")
        except (asyncio.TimeoutError, *_CONNECTION_ERRORS) as error:
            await client.close()
            raise OperationalError(f"cannot reach NATS at {', '.join(urls)}: {error!r}") from error
        except NatsServerError as error:
            await client.close()
            raise ProgrammingError(str(error)) from error
        return client

    async def close(self) -> None:
        if self.nc.is_closed:
            return
        try:
            await asyncio.wait_for(self.nc.close(), self.timeout)
        # uvloop reports a write on an already broken transport as RuntimeError.
        except (asyncio.TimeoutError, RuntimeError, *_CONNECTION_ERRORS) as error:
            log.debug("closing a broken NATS connection: %r", error)

    async def _disconnected(self) -> None:
        self.disconnections += 1  # what a subscription may have missed meanwhile (see ``JetStreamCommandStore.watch``)
        self._online.clear()
        # What nats-py queued but had not written when the connection dropped (behind a
        # stalled socket, say) it would send on the next connection, after its caller was told
        # the request timed out. Dropped instead, as nats.go and nats.js drop it: nothing was sent.
        self.nc._pending.clear()
        self.nc._pending_data_size = 0
        if self._reads is not None:
            self._reads.abandon_all("the NATS connection dropped during a read; read again")

    async def _reconnected(self) -> None:
        self._online.set()

    async def _wait_online(self, doing: str) -> None:
        """Wait (bounded) for a connection that is back, instead of failing at once."""
        if self.nc.is_closed:
            raise OperationalError(f"{doing}: the NATS connection is closed")
        if not self._online.is_set():
            try:
                await asyncio.wait_for(self._online.wait(), self.timeout)
            except asyncio.TimeoutError:
                raise OperationalError(f"{doing}: not connected to NATS for {self.timeout}s") from None

    async def ensure_stream(self, config: dict[str, object], create: bool = True, keeps_history: bool = True,
                            ) -> StreamFacts:
        """Create the stream unless it exists (or, with ``create=False``, refuse a missing one).
        A writer mends what is safe to mend in an existing one and refuses one it cannot rely on
        (see ``shape``); a reader refuses only a stream of another layout, which it cannot read.
        ``keeps_history``: a message gone from the stream is history lost (see ``shape.inspect``)."""
        name = config["name"]
        info = await self._api_patiently(f"STREAM.INFO.{name}", b"")
        if info.get("error", {}).get("err_code") == STREAM_NOT_FOUND and not create:
            raise ProgrammingError(f"there is no stream {name} to read: is ATHENAEUM_STREAM right?")
        if info.get("error", {}).get("err_code") == STREAM_NOT_FOUND:
            # Creating it again with the same configuration answers with the stream as it is.
            info = await self._api_patiently(f"STREAM.CREATE.{name}", msgspec.json.encode(config))
            if info.get("error", {}).get("err_code") == STREAM_NAME_IN_USE:  # created meanwhile
                info = await self._api_patiently(f"STREAM.INFO.{name}", b"")
        if "error" in info:
            raise ProgrammingError(f"stream {name}: {info['error'].get('description')}")
        if create:
            await self.mend_stream(config, info, keeps_history)
        elif layout := layout_drift(config, info):
            raise ProgrammingError(layout)
        existing = info["config"]
        return StreamFacts(int(existing.get("num_replicas") or 1), ledger_id(str(name), str(info.get("created"))))

    async def mend_stream(self, config: dict[str, object], info: dict, keeps_history: bool) -> list[str]:
        """Set back what is safe to set back in the stream ``info`` describes, and say what was;
        refuse (``StreamDrift``) one that departs from ``config`` in a way no repair may mend."""
        name = config["name"]
        found = inspect(config, info, keeps_history)
        if found.update is not None:
            reply = await self._api(f"STREAM.UPDATE.{name}", msgspec.json.encode(found.update))
            if "error" in reply:
                raise StreamDrift("; ".join([*found.drift, f"stream {name}: could not set back "
                                             f"{', '.join(found.repairs)}: {reply['error'].get('description')}"]))
            log.warning("stream %s: set back %s", name, ", ".join(found.repairs))
        if found.drift:
            raise StreamDrift("; ".join(found.drift))
        return found.repairs

    async def _api_patiently(self, operation: str, payload: bytes) -> dict:
        return await patiently(lambda: self._api(operation, payload), RequestTimedOut, operation)

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
            ack = _decode_ack((await self._request(only.subject, only.payload, only.headers)).data)
        else:
            ack = await self._append_batch(messages)
        if ack.error is not None:
            if ack.error.err_code in WRONG_LAST_SEQUENCE:
                raise WrongLastSequence(ack.error.description)
            raise AppendRefused(f"append rejected by JetStream: {ack.error.description} ({ack.error.err_code})")
        return ack.seq

    async def _append_batch(self, messages: Sequence[Outgoing]) -> PubAck:
        async with self._batches:
            for wait in BATCH_RETRY_WAITS:
                ack = _decode_ack((await self._send_batch(messages)).data)
                if ack.error is None or ack.error.err_code not in BATCH_REFUSED:
                    return ack
                log.info("an atomic batch was turned away whole (%s); sending it again", ack.error.description)
                await asyncio.sleep(wait)  # nothing of it was stored
            return _decode_ack((await self._send_batch(messages)).data)

    async def _send_batch(self, messages: Sequence[Outgoing]) -> Msg:
        await self._wait_online("append")
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
                    headers=message.headers | {"Nats-Batch-Id": batch_id, "Nats-Batch-Sequence": str(number)},
                )
        except _CONNECTION_ERRORS as error:
            raise OperationalError(f"append failed before commit, nothing stored: {error!r}") from error
        commit = {"Nats-Batch-Id": batch_id, "Nats-Batch-Sequence": str(len(messages)), "Nats-Batch-Commit": "1"}
        return await self._request(last.subject, last.payload, last.headers | commit)

    async def read(self, stream: str, subject: str, start: int, limit: int, through: int = 0) -> tuple[list[Stored], bool]:
        """Up to ``limit`` messages on ``subject`` from sequence ``start``, and whether more may
        follow. ``through``: a sequence on ``subject`` known to be stored; any replica may answer
        a direct get, and one that has yet to apply it is read again until it has."""
        messages, more = await self._read(stream, subject, start, limit)
        waits = iter(CATCH_UP_WAITS)
        while not more and len(messages) < limit and (messages[-1].seq if messages else start - 1) < through:
            wait = next(waits, None)
            if wait is None:
                raise OperationalError(f"the replicas answering reads of {stream} stayed behind sequence {through}")
            await asyncio.sleep(wait)
            after = messages[-1].seq + 1 if messages else start
            newer, more = await self._read(stream, subject, after, limit - len(messages))
            messages += newer
        return messages, more

    async def _read(self, stream: str, subject: str, start: int, limit: int) -> tuple[list[Stored], bool]:
        """One batch of a direct get. A stream made or moved just now may have no server
        answering direct gets yet (status 503, no responders): read again, as ``_request`` asks again."""
        for wait in NO_RESPONDERS_WAITS:
            try:
                return await self._read_once(stream, subject, start, limit)
            except NothingAnswers:
                await asyncio.sleep(wait)
        return await self._read_once(stream, subject, start, limit)

    async def _read_once(self, stream: str, subject: str, start: int, limit: int) -> tuple[list[Stored], bool]:
        start = max(start, 1)
        request = {"seq": start, "batch": limit, "max_bytes": MAX_BATCH_BYTES, "next_by_subj": subject}
        reply = None
        try:
            await self._wait_online(f"reading {subject}")
            if self._reads is None:
                self._reads = await ReadReplies.open(self.nc)
            reply, pending = self._reads.expect(start)
            await self.nc.publish(f"$JS.API.DIRECT.GET.{stream}", msgspec.json.encode(request), reply=reply)
            status, more = await asyncio.wait_for(pending.finished, self.timeout)
        except asyncio.TimeoutError as error:
            raise OperationalError(f"reading {subject} from {stream} timed out after {self.timeout}s") from error
        except _CONNECTION_ERRORS as error:
            raise OperationalError(f"reading {subject} from {stream} failed: {error!r}") from error
        finally:
            if reply is not None and self._reads is not None:
                self._reads.forget(reply)
        if status == "503":
            raise NothingAnswers(f"direct get on {stream} failed with status 503: nothing answers reads of it")
        if status not in ("204", "404"):
            raise OperationalError(f"direct get on {stream} failed with status {status}")
        return pending.messages, more

    async def last(self, stream: str, subject: str) -> Stored | None:
        """The last message on ``subject`` (wildcards allowed), or None."""
        return await self.get(stream, {"last_by_subj": subject})

    async def get(self, stream: str, request: dict[str, object]) -> Stored | None:
        """The one message a direct get ``request`` names (``last_by_subj``, or ``seq`` with
        ``next_by_subj``), or None."""
        msg = await self._request(f"$JS.API.DIRECT.GET.{stream}", msgspec.json.encode(request), {})
        status = msg.headers.get("Status") if msg.headers else None
        if status == "404":
            return None
        if status is not None:
            raise OperationalError(f"direct get on {stream} failed: {msg.headers}")
        return stored(msg)

    async def leader_get(self, stream: str, request: dict[str, object]) -> Stored | None:
        """As ``get``, answered by the stream's leader, which has every acknowledged message
        (a direct get may be answered by a replica still applying the latest ones)."""
        reply = await self._api(f"STREAM.MSG.GET.{stream}", msgspec.json.encode(request))
        error = reply.get("error")
        if error is not None:
            if error.get("err_code") == NO_MESSAGE_FOUND:
                return None
            raise OperationalError(f"reading {request} from {stream}: {error.get('description')}")
        return stored_from_api(reply["message"])

    async def stream_info(self, stream: str) -> dict:
        return await self._api(f"STREAM.INFO.{stream}", b"")

    async def _api(self, endpoint: str, payload: bytes) -> dict:
        reply = await self._request(f"$JS.API.{endpoint}", payload, {})
        return msgspec.json.decode(reply.data)

    async def _request(self, subject: str, payload: bytes, headers: dict[str, str]) -> Msg:
        # A stream just created, replicated above all, answers direct gets only once its
        # replicas are up, and publishes only once every node knows its subjects: a bounded
        # wait for them, not an error (nothing answered, so nothing was stored). The API
        # itself answers at once wherever JetStream runs, so there no answer is the answer.
        api = subject.startswith("$JS.API.") and not subject.startswith("$JS.API.DIRECT.GET.")
        for wait in () if api else NO_RESPONDERS_WAITS:
            try:
                return await self._ask(subject, payload, headers)
            except NothingAnswers:
                await asyncio.sleep(wait)
        return await self._ask(subject, payload, headers)

    async def _ask(self, subject: str, payload: bytes, headers: dict[str, str]) -> Msg:
        await self._wait_online(f"request on {subject}")
        try:
            # request() bounds its own wait; publish_async, whose future an error reply can
            # leave unresolved (nats.py issue 985), is never used here.
            return await self.nc.request(subject, payload, timeout=self.timeout, headers=headers or None)
        except nats.errors.NoRespondersError as error:
            raise NothingAnswers(f"nothing answers on {subject}: is JetStream enabled and the stream there?") from error
        except nats.errors.TimeoutError as error:
            raise RequestTimedOut(f"NATS request on {subject} timed out after {self.timeout}s") from error
        except nats.errors.OutboundBufferLimitError as error:
            if self.nc.is_connected:
                raise OperationalError(f"NATS request on {subject} failed: {error!r}") from error
            # Nothing was sent: nats-py is reconnecting before its callback told us it lost the
            # connection. Wait for it (bounded) as for any connection that is away.
            self._online.clear()
            if self.nc.is_connected:  # back meanwhile, its callback run before the clear
                self._online.set()
            return await self._ask(subject, payload, headers)
        except _CONNECTION_ERRORS as error:
            raise OperationalError(f"NATS request on {subject} failed: {error!r}") from error


Answer = TypeVar("Answer")


async def patiently(ask: Callable[[], Awaitable[Answer]], timed_out: type[Exception], asking: str) -> Answer:
    """A request about a stream's existence (its info, its creation), asked again, within a
    bound, when it times out. A cluster busy placing a stream may let such a request time out:
    an info asked while others create it, or the create itself while the new stream's replica
    group elects its leader (a missed first vote waits out an election timeout of seconds).
    Both may be asked again: a create of the same configuration answers with the stream."""
    for _ in range(STREAM_API_ATTEMPTS - 1):
        try:
            return await ask()
        except timed_out as error:
            log.info("%s: %r; asking again", asking, error)
    return await ask()


class StreamDrift(ProgrammingError):
    """A stream departs from the shape Athenaeum relies on in a way no repair may mend."""


class AppendRefused(OperationalError):
    """JetStream answered an append with a refusal other than a lost race: nothing was stored."""


class NothingAnswers(OperationalError):
    """No responder on the subject: no JetStream, no such stream, or one not up yet."""


class RequestTimedOut(OperationalError):
    """No answer within the timeout: the server may yet have acted on the request."""


async def _log_connection_error(error: Exception) -> None:
    # Operations report their own failures; connection trouble is only worth a debug line.
    log.debug("NATS connection: %r", error)
