"""The ``athenaeum`` NATS micro service: one endpoint per command, in a queue group so
replicas share the load. Endpoints decode, have the handler decide and append on this loop,
and reply."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from importlib import metadata

import msgspec
from nats import micro
from nats.aio.client import Client
from nats.micro.request import Request
from nats.micro.service import Service

from athenaeum.aggregates.rules import SLUG, Invalid, RuleViolation, require_bounded_texts, require_command_id
from athenaeum.services.commands.credentials import Credential, require_public_key
from athenaeum.events.commands import Command
from athenaeum.events.fleet import FLEET_ID
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.imports import IMPORT_ROUTES, IMPORT_SUBJECT, MAX_ITEMS, decode_items
from athenaeum.services.commands.reading import read_command
from athenaeum.services.commands.replies import Reply, encode, malformed
from athenaeum.services.commands.routes import EXPOSED, Route
from athenaeum.services.identity.accounts import REQUEST_INFO_HEADER, caller_key
from athenaeum.services.runtime.metrics import command_observer

ACTOR_HEADER = "Athenaeum-Actor"
SIGNATURE_HEADER = "Athenaeum-Signature"  # base64url Ed25519, over identity.signing.signed_bytes
SIGNED_AT_HEADER = "Athenaeum-Signed-At"  # RFC 3339, with its zone
TOKEN_HEADER = "Athenaeum-Token"  # an HTTP bearer token the gateway passes on
LEDGER_SUBJECT = "athenaeum.ledger"  # answers the ledger's id, which signatures name
# Answers whether the roster holds a token's SHA-256: for the HTTP gateway, which refuses a token
# never issued before it reads the request. Not exported to the agents' account.
TOKEN_SUBJECT = "athenaeum.token"
log = logging.getLogger(__name__)
commands_log = logging.getLogger("athenaeum.commands")  # one line per command: who, what, on what, how, how long
QUEUE_GROUP = "athenaeum"


async def start_command_service(nc: Client, handler: CommandHandler | None) -> Service:
    """The ``athenaeum`` service; without a ``handler`` it carries only what is added later
    (queries), for a process that runs no command handlers."""
    service = await micro.add_service(
        nc,
        name="athenaeum",
        version=metadata.version("athenaeum"),
        description="Athenaeum commands",
        queue_group=QUEUE_GROUP,
    )
    if handler is not None:
        await service.add_endpoint(name="ledger", subject=LEDGER_SUBJECT, handler=_ledger(handler))
        await service.add_endpoint(name="token", subject=TOKEN_SUBJECT, handler=_token_issued(handler))
    if handler is not None:
        await service.add_endpoint(name="import-together", subject=IMPORT_SUBJECT, handler=_imports(handler))
    for route in EXPOSED if handler is not None else ():
        await service.add_endpoint(name=f"{route.group}-{route.verb}", subject=route.subject,
                                   handler=_endpoint(route, handler))
    await nc.flush()  # the server has the subscriptions: a request from any connection finds them
    return service


def _endpoint(route: Route, handler: CommandHandler):  # type: ignore[no-untyped-def]
    decoder = msgspec.json.Decoder(route.command)
    observe = command_observer(route.group, route.verb)

    async def answer(request: Request) -> None:
        started = time.perf_counter()
        command = None
        headers = request.headers or {}
        actor = headers.get(ACTOR_HEADER, "")
        if (refusal := _unnamed(headers)) is not None:
            reply = refusal
        else:
            try:
                credential = credential_of(headers)
                command = _checked(request.data, decoder)
            except msgspec.DecodeError as error:
                reply = malformed(error)
            except RuleViolation as violation:
                reply = Reply.rejected(violation.code, violation.message, violation.field)
            except Exception as error:  # noqa: BLE001  a request must always be answered
                reply = _unprocessed(route, error)
            else:
                try:
                    reply = await handler.send(command, actor, credential)
                except Exception as error:  # noqa: BLE001  a request must always be answered
                    reply = _unprocessed(route, error, command.command_id)
        outcome, took = "ok" if reply.error is None else reply.error.code, time.perf_counter() - started
        observe(outcome, took)
        aggregate = route.family.aggregate_of(command) if command is not None else None
        commands_log.info("%s %s %s %s %.1fms", actor or "(by key)", route.name, aggregate or "-", outcome, took * 1000,
                          extra={"actor": actor or None, "route": route.name, "id": aggregate, "outcome": outcome,
                                 "ms": round(took * 1000, 2)})
        if reply.ok or reply.error is None:
            await request.respond(encode(reply))
        else:
            await request.respond_error(reply.error.code, reply.error.message, encode(reply))

    return concurrently(answer)


def _unprocessed(route: Route, error: Exception, command_id: str | None = None) -> Reply:
    """The answer to a request whose processing failed for a reason no rule names: logged with
    its traceback, and answered all the same, so that the sender does not wait out its timeout."""
    log.exception("%s failed", route.subject)
    return Reply.rejected("unavailable", f"the command could not be processed: {error!r}", command_id=command_id)


def _unnamed(headers: dict[str, str]) -> Reply | None:
    """The refusal of a request that names nobody who sends it: a connection's key or a token names its holder."""
    actor = headers.get(ACTOR_HEADER, "")
    if SLUG.fullmatch(actor) or (actor == "" and ({TOKEN_HEADER, REQUEST_INFO_HEADER} & headers.keys())):
        return None
    return Reply.rejected("invalid", f"the {ACTOR_HEADER} header names who sends the command, as an agent slug: "
                          f"{actor!r}", "actor")


def _checked(data: bytes, decoder: msgspec.json.Decoder) -> Command:
    command = read_command(data, decoder)
    require_bounded_texts(command)
    require_command_id(command)
    require_public_key(command)
    return command


def _imports(handler: CommandHandler):  # type: ignore[no-untyped-def]
    """The endpoint of import commands sent together (see ``imports``)."""
    decoders = {name: msgspec.json.Decoder(route.command) for name, route in IMPORT_ROUTES.items()}
    observe = command_observer("import", "together")

    async def answer(request: Request) -> None:
        started = time.perf_counter()
        headers = request.headers or {}
        actor = headers.get(ACTOR_HEADER, "")
        items = []
        if (refusal := _unnamed(headers)) is None:
            try:
                items = decode_items(request.data)
                if not items or len(items) > MAX_ITEMS:
                    raise Invalid(f"a request carries 1 to {MAX_ITEMS} import commands, not {len(items)}", "body")
            except msgspec.DecodeError as error:
                refusal = malformed(error)
            except RuleViolation as violation:
                refusal = Reply.rejected(violation.code, violation.message, violation.field)
        if refusal is not None:
            assert refusal.error is not None
            return await request.respond_error(refusal.error.code, refusal.error.message, encode(refusal))
        replies: list[Reply | None] = [None] * len(items)
        sent: list[tuple[int, tuple[Command, Credential]]] = []
        # Each item's signature is its own: one on the request would sign none of them.
        unsigned = {name: value for name, value in headers.items() if name not in (SIGNATURE_HEADER, SIGNED_AT_HEADER)}
        for index, item in enumerate(items):
            try:
                if item.route not in decoders:
                    raise Invalid(f"route {item.route!r} is none of {', '.join(decoders)}", "route")
                signature = {SIGNATURE_HEADER: item.signature, SIGNED_AT_HEADER: item.signed_at}
                credential = credential_of(unsigned | {name: value for name, value in signature.items() if value})
                sent.append((index, (_checked(bytes(item.command), decoders[item.route]), credential)))
            except msgspec.DecodeError as error:
                replies[index] = malformed(error)
            except RuleViolation as violation:
                replies[index] = Reply.rejected(violation.code, violation.message, violation.field)
        try:
            for (index, _), reply in zip(sent, await handler.send_together([each for _, each in sent], actor)):
                replies[index] = reply
        except Exception as error:  # noqa: BLE001  a request must always be answered
            log.exception("%s failed", IMPORT_SUBJECT)
            unanswered = Reply.rejected("unavailable", f"the commands could not be processed: {error!r}; send them "
                                        "again with the same command ids, which apply each at most once")
            replies = [reply or unanswered for reply in replies]
        took = time.perf_counter() - started
        observe("ok", took)
        commands_log.info("%s import (%d together) %.1fms", actor or "(by key)", len(items), took * 1000,
                          extra={"actor": actor or None, "route": "import", "outcome": "ok",
                                 "ms": round(took * 1000, 2)})
        await request.respond(b"[" + b",".join(encode(reply) for reply in replies if reply is not None) + b"]")

    return concurrently(answer)


def credential_of(headers: dict[str, str]) -> Credential:
    """The signature or token a request carries, if any, and the key of the agent that sent it
    when the server says (see ``identity.accounts``)."""
    signature, signed_at = headers.get(SIGNATURE_HEADER), headers.get(SIGNED_AT_HEADER)
    connection_key = caller_key(headers.get(REQUEST_INFO_HEADER))
    if signature is None and signed_at is None:
        return Credential(token=headers.get(TOKEN_HEADER), connection_key=connection_key)
    if signature is None or signed_at is None:
        raise Invalid(f"a signed command carries both {SIGNATURE_HEADER} and {SIGNED_AT_HEADER}",
                      "signature" if signature is None else "signed_at")
    try:
        moment = msgspec.convert(signed_at, datetime)
    except msgspec.ValidationError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise Invalid(f"{SIGNED_AT_HEADER} is an RFC 3339 time with its zone: {signed_at!r}", "signed_at")
    return Credential(signature=signature, signed_at=moment, connection_key=connection_key)


def _ledger(handler: CommandHandler):  # type: ignore[no-untyped-def]
    ledger = msgspec.json.encode({"ledger_id": handler.store.ledger_id})

    async def answer(request: Request) -> None:
        await request.respond(ledger)

    return answer


def _token_issued(handler: CommandHandler):  # type: ignore[no-untyped-def]
    async def answer(request: Request) -> None:
        roster = await handler.load(FLEET_ID)  # afresh: a token issued or revoked just now counts
        issued = roster is not None and request.data.decode(errors="replace") in roster.tokens
        await request.respond(msgspec.json.encode({"issued": issued}))

    return concurrently(answer)


_in_flight: set[asyncio.Task[None]] = set()  # requests being answered, by every endpoint


def concurrently(answer: Callable[[Request], Awaitable[None]]) -> Callable[[Request], Awaitable[None]]:
    """nats-py awaits a subscription's callback before it delivers the next message, so each
    request gets a task of its own: requests on different aggregates overlap."""

    async def endpoint(request: Request) -> None:
        task = asyncio.create_task(answer(request))
        _in_flight.add(task)
        task.add_done_callback(_in_flight.discard)

    return endpoint


async def stop_answering(service: Service, grace: float) -> None:
    """Take no more requests, and answer those already taken (up to ``grace`` seconds): a
    command applied must not go unanswered because its replica was stopped."""
    # Drain each endpoint rather than unsubscribe it, as nats-py's Service.stop does: that
    # discards the requests this client has received and not yet handed to the endpoint.
    endpoints, service._endpoints = service._endpoints, []  # noqa: SLF001  no draining stop in nats-py
    for endpoint in endpoints:
        if endpoint._subscription is not None:  # noqa: SLF001
            await endpoint._subscription.drain()  # noqa: SLF001
    if _in_flight:
        await asyncio.wait(set(_in_flight), timeout=grace)
    await service.stop()  # its own monitoring subscriptions
