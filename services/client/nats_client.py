"""The Python client: send commands to Athenaeum over NATS.

``AthenaeumClient`` is async; ``SyncClient`` wraps it for scripts. Both give every command a
``command_id`` when the caller did not. A retry is safe when it carries the same id: set one on
the command, or take it from the ``Unreachable`` that a lost reply raises.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import msgspec
import nats.errors
import nkeys
from nats.aio.client import DEFAULT_INBOX_PREFIX, Client
from nats.aio.msg import Msg

from athenaeum.events.commands import Command
from athenaeum.services.commands.service import (
    ACTOR_HEADER, LEDGER_SUBJECT, SIGNATURE_HEADER, SIGNED_AT_HEADER, TOKEN_HEADER,
)
from athenaeum.services.commands.credentials import signed
from athenaeum.services.client.refusals import Refusals
from athenaeum.services.commands.imports import IMPORT_SUBJECT, MAX_ITEMS, ImportItem
from athenaeum.services.identity.keys import inbox_prefix, key_of, public_key
from athenaeum.services.jetstream.loop import LoopThread
from athenaeum.services.queries.service import QUERY_PREFIX
from athenaeum.services.commands.reading import lone_surrogate
from athenaeum.services.commands.replies import Reply, decode
from athenaeum.services.commands.routes import BY_COMMAND



class Unreachable(ConnectionError):
    """No Athenaeum server or command service answers. ``command_id`` is the id the command
    went with, if it went: send it again with that id, and it is applied at most once."""

    def __init__(self, message: str, command_id: str | None = None) -> None:
        super().__init__(message)
        self.command_id = command_id


AUTHORIZATION_VIOLATION = "Authorization Violation"  # the server's words for a key it does not admit
Seed = nkeys.KeyPair | str | bytes | Path  # a key pair, a seed's text (SU...), or a seed file


class AthenaeumClient:
    """Sends as ``actor``; with a ``seed`` (the actor's key), every command is signed with it,
    as the ledger requires of a principal bound to a key (or, from the HTTP gateway, sent with
    the caller's bearer ``token``). A request the server refuses to let this connection's
    principal publish raises ``NotPermitted`` at once (``refusals`` hears of it; ``connect``
    wires them to the connection's error callback)."""

    def __init__(self, nc: Client, actor: str, timeout: float = 10.0, online: asyncio.Event | None = None,
                 seed: Seed | None = None, token: str | None = None, signature: tuple[str, str] | None = None,
                 refusals: Refusals | None = None) -> None:
        self.nc = nc
        self.actor = actor
        self.timeout = timeout
        self.key = key_of(seed) if seed is not None else None
        self.token = token  # an HTTP bearer token, which the gateway passes on
        self.signature = signature  # an HTTP caller's own (signature, signed at), passed on as well
        self._ledger_id: str | None = None
        self._refusals = refusals or Refusals()
        self._online = online or asyncio.Event()
        if online is None and nc.is_connected:
            self._online.set()

    @classmethod
    async def connect(cls, url: str, actor: str, timeout: float = 10.0, seed: Seed | None = None) -> AthenaeumClient:
        servers = url.split(",")  # a cluster: several URLs, comma-separated
        key = key_of(seed) if seed is not None else None  # connects as it, where the server authenticates
        online, refused = asyncio.Event(), asyncio.Event()
        last_error: list[Exception] = []
        refusals = Refusals()

        async def remember(error: Exception) -> None:  # failures reach the caller, named, not printed
            if refusals.told(error):
                return  # a publish refused: its request fails, and the connection stays
            last_error[:] = [error]
            if AUTHORIZATION_VIOLATION in str(error):
                refused.set()  # trying again cannot help: nats-py would, until the timeout

        async def disconnected() -> None:
            online.clear()

        async def reconnected() -> None:
            online.set()

        nc = Client()
        # Within ``timeout``, so a command line says "unreachable" now; once connected, a
        # node that goes away is replaced by another of the cluster's.
        connecting = asyncio.ensure_future(nc.connect(
            servers=servers,
            # A share each: a node that takes connections but never answers leaves
            # time to try the others.
            connect_timeout=timeout / (len(servers) + 1),
            allow_reconnect=True,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.25,
            # Nothing is kept to send later: a command its caller was told did not go
            # must not go once the connection is back.
            pending_size=0,
            nkeys_seed_str=key.seed.decode() if key is not None else None,
            # The only replies the server lets an agent receive: those to inboxes named by its key.
            inbox_prefix=inbox_prefix(public_key(key)) if key is not None else DEFAULT_INBOX_PREFIX,
            error_cb=remember,
            disconnected_cb=disconnected,
            reconnected_cb=reconnected,
        ))
        refusal = asyncio.ensure_future(refused.wait())
        await asyncio.wait({connecting, refusal}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        refusal.cancel()
        error = connecting.exception() if connecting.done() and not connecting.cancelled() else None
        if not connecting.done() or error is not None:
            connecting.cancel()
            await nc.close()
            cause = last_error[0] if last_error else error or asyncio.TimeoutError()
            if refused.is_set():
                raise Unreachable(f"Athenaeum's NATS at {url} admits only keys its roster binds, and refused "
                                  + ("this one (not registered, or revoked)" if key else "a connection without a key")
                                  + ": act --as a registered principal with its key, or name one with --key")
            raise Unreachable(f"cannot reach Athenaeum's NATS at {url}: {cause!r}")
        online.set()
        return cls(nc, actor, timeout, online, key, refusals=refusals)

    async def _connected(self, what: str, command_id: str | None = None) -> None:
        """Wait, within the timeout, for a connection that is back: nothing is sent meanwhile."""
        if self.nc.is_closed:
            raise Unreachable(f"the connection to Athenaeum's NATS is closed: {what} was not sent", command_id)
        if self._online.is_set():
            return
        try:
            await asyncio.wait_for(self._online.wait(), self.timeout)
        except asyncio.TimeoutError:
            raise Unreachable(f"not connected to Athenaeum's NATS for {self.timeout}s: {what} was not sent",
                              command_id) from None

    async def send(self, command: Command) -> Reply:
        """Send ``command`` as this client's actor; the reply says accepted or which rule broke."""
        route = BY_COMMAND[type(command)]
        if command.command_id is None:
            command = msgspec.structs.replace(command, command_id=uuid.uuid4().hex)
        await self._connected(f"the command (command_id {command.command_id!r})", command.command_id)
        try:
            headers = await self._headers(command)
            msg = await self._request(route.subject, msgspec.json.encode(command), headers)
        except UnicodeEncodeError:  # no JSON encoder writes a lone surrogate: the field is looked for only then
            where = lone_surrogate(msgspec.to_builtins(command))
            return Reply.rejected("invalid", f"{where} holds a lone surrogate (\\ud800-\\udfff with no pair), which is "
                                  "no Unicode character: nothing was sent", where)
        except nats.errors.NoRespondersError as error:
            raise Unreachable("no Athenaeum command service is running") from error
        except nats.errors.TimeoutError as error:
            raise Unreachable(f"no reply within {self.timeout}s (command_id {command.command_id!r})",
                              command.command_id) from error
        except nats.errors.MaxPayloadError as error:
            return Reply.rejected("invalid", f"the command is over the server's message size limit: {error}", "body")
        except nats.errors.OutboundBufferLimitError as error:  # gone between the wait and the send
            raise Unreachable(f"not connected to Athenaeum's NATS: the command (command_id {command.command_id!r}) "
                              "was not sent", command.command_id) from error
        except nats.errors.Error as error:  # the connection is gone, perhaps after the command went
            raise Unreachable(f"the connection to Athenaeum's NATS is lost (command_id {command.command_id!r}): "
                              f"{error!r}", command.command_id) from error
        return decode(msg.data)

    async def send_together(self, commands: list[Command]) -> list[Reply]:
        """Send import ``commands`` (``athenaeum import``'s records) together, on as few requests
        as the server's message size allows: each one signed, decided and answered as ``send``
        would, in order; the service appends them in one write to the ledger instead of one each."""
        commands = [command if command.command_id else msgspec.structs.replace(command, command_id=uuid.uuid4().hex)
                    for command in commands]
        await self._connected(f"{len(commands)} import commands")
        items = []
        for command in commands:
            headers = await self._headers(command)
            items.append(msgspec.json.encode(ImportItem(
                BY_COMMAND[type(command)].name, msgspec.Raw(msgspec.json.encode(command)),
                headers.get(SIGNATURE_HEADER), headers.get(SIGNED_AT_HEADER))))
        replies: list[Reply] = []
        for start, end in _requests([len(item) for item in items], self.nc.max_payload // 2):
            replies += await self._send_items(items[start:end], commands[start:end])
        return replies

    async def _send_items(self, items: list[bytes], commands: list[Command]) -> list[Reply]:
        ids = ", ".join(repr(command.command_id) for command in commands[:3]) + (", ..." if len(commands) > 3 else "")
        headers = {ACTOR_HEADER: self.actor} | ({TOKEN_HEADER: self.token} if self.token is not None else {})
        try:
            msg = await self.nc.request(IMPORT_SUBJECT, b"[" + b",".join(items) + b"]", timeout=self.timeout,
                                        headers=headers)
        except nats.errors.NoRespondersError as error:
            raise Unreachable("no Athenaeum command service is running") from error
        except nats.errors.TimeoutError as error:
            raise Unreachable(f"no reply within {self.timeout}s (command_ids {ids})") from error
        except nats.errors.MaxPayloadError as error:
            return [Reply.rejected("invalid", f"the command is over the server's message size limit: {error}",
                                   "body")] * len(commands)
        except nats.errors.Error as error:
            raise Unreachable(f"the connection to Athenaeum's NATS is lost (command_ids {ids}): {error!r}") from error
        answer = _decode_replies(msg.data)
        return answer if isinstance(answer, list) else [answer] * len(commands)  # a request refused whole

    async def _headers(self, command: Command) -> dict[str, str]:
        """Who sends, and with a key, the signature over the command in this ledger."""
        headers = {ACTOR_HEADER: self.actor} | ({TOKEN_HEADER: self.token} if self.token is not None else {})
        if self.signature is not None:
            return headers | dict(zip((SIGNATURE_HEADER, SIGNED_AT_HEADER), self.signature))
        if self.key is not None:
            if self._ledger_id is None:
                answer = await self._request(LEDGER_SUBJECT, b"")
                self._ledger_id = str(msgspec.json.decode(answer.data)["ledger_id"])
            credential = signed(self.key, self._ledger_id, command, self.actor)
            assert credential.signature is not None and credential.signed_at is not None
            headers |= {SIGNATURE_HEADER: credential.signature, SIGNED_AT_HEADER: credential.signed_at.isoformat()}
        return headers

    async def query(self, name: str, **fields: Any) -> dict[str, Any]:
        """Ask a read model (``ratification.show``, ``check``). The answer reflects every
        command acknowledged before the query; ``after=position`` waits for that position
        instead (one learnt elsewhere; 0 waits for nothing)."""
        subject = f"{QUERY_PREFIX}.{name}"
        await self._connected(f"the query {name!r}")
        try:
            msg = await self._request(subject, msgspec.json.encode(fields))
        except nats.errors.NoRespondersError as error:
            raise Unreachable(f"nothing answers the query {name!r}: no such query, or no query service running") from error
        except nats.errors.TimeoutError as error:
            raise Unreachable(f"no answer within {self.timeout}s") from error
        except nats.errors.Error as error:
            raise Unreachable(f"the connection to Athenaeum's NATS is lost: {error!r}") from error
        return msgspec.json.decode(msg.data)

    async def _request(self, subject: str, payload: bytes, headers: dict[str, str] | None = None) -> Msg:
        """``nc.request``, but a publish the server refuses raises ``NotPermitted`` at once."""
        with self._refusals.watching(subject) as refused:
            request = asyncio.ensure_future(self.nc.request(subject, payload, timeout=self.timeout, headers=headers))
            try:
                await asyncio.wait({request, refused}, return_when=asyncio.FIRST_COMPLETED)
                if not request.done():
                    refused.result()  # raises the refusal
                return request.result()
            finally:
                request.cancel()  # once refused, or the caller gone: nobody waits for its reply

    async def close(self) -> None:
        try:
            await self.nc.close()
        except (nats.errors.Error, OSError):  # a connection already broken has nothing to flush
            pass

    async def __aenter__(self) -> AthenaeumClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


_decode_replies = msgspec.json.Decoder(list[Reply] | Reply).decode


def _requests(sizes: list[int], limit: int) -> list[tuple[int, int]]:
    """The items of these sizes in runs (start, end) of at most ``limit`` bytes and MAX_ITEMS
    items; an item larger than ``limit`` alone."""
    runs: list[tuple[int, int]] = []
    start, size = 0, 0
    for index, item in enumerate(sizes):
        if index > start and (size + item > limit or index - start == MAX_ITEMS):
            runs.append((start, index))
            start, size = index, 0
        size += item
    return runs + ([(start, len(sizes))] if start < len(sizes) else [])


class SyncClient:
    """The same client for synchronous code. Its loop runs on a thread of its own, so an idle
    client still answers the server's pings and notices a lost node before it is next used."""

    def __init__(self, url: str, actor: str, timeout: float = 10.0, seed: Seed | None = None) -> None:
        key = key_of(seed) if seed is not None else None  # a bad seed is said before connecting
        self._loop = LoopThread("athenaeum-client")
        try:
            self._client = self._loop.run(AthenaeumClient.connect(url, actor, timeout, key))
        except BaseException:
            self._loop.close()
            raise

    def send(self, command: Command) -> Reply:
        return self._loop.run(self._client.send(command))

    def send_together(self, commands: list[Command]) -> list[Reply]:
        return self._loop.run(self._client.send_together(commands))

    def query(self, name: str, **fields: Any) -> dict[str, Any]:
        return self._loop.run(self._client.query(name, **fields))

    def close(self) -> None:
        try:
            if self._loop.running:
                self._loop.run(self._client.close())
        finally:
            self._loop.close()  # and with it what nats-py leaves when closed mid-reconnect

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
