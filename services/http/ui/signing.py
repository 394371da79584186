"""What a human's browser signs: the page hands the command to the gateway, which answers the
exact bytes to sign (the same ``signed_bytes`` the Python client signs) and the command's
canonical JSON to send with the signature. The seed never leaves the browser, and no
canonical JSON is written twice."""

from __future__ import annotations

import base64
import uuid
from datetime import datetime, timezone
from typing import Any

import msgspec
from litestar import Request, Response, post
from litestar.handlers import HTTPRouteHandler

from athenaeum.aggregates.rules import SLUG
from athenaeum.services.commands.credentials import canonical, to_sign
from athenaeum.services.commands.routes import BY_NAME
from athenaeum.services.http.common import Gateway, body_refusal, error_response


class ToSign(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    actor: str
    command: msgspec.Raw


_to_sign = msgspec.json.Decoder(ToSign)


def handler(gateway: Gateway) -> HTTPRouteHandler:
    @post("/ui/signing/{group:str}/{verb:str}", include_in_schema=False, status_code=200)
    async def signing(group: str, verb: str, request: Request) -> Response[Any]:
        """``{"actor", "command"}`` → ``{"message", "command", "signed_at"}``: ``message`` (base64)
        is what ``actor`` signs; ``command`` is the body to send with the signature."""
        route = BY_NAME.get(f"{group}.{verb}")
        if route is None or not route.exposed:
            return error_response({"code": "not_found", "message": f"no command {group} {verb}", "field": "command"})
        body = await request.body()
        if (refusal := body_refusal(body, ToSign)) is not None:  # an actor named twice is refused, not the last taken
            return error_response(refusal)
        asked = _to_sign.decode(body)
        if not SLUG.fullmatch(asked.actor):
            return error_response({"code": "invalid", "message": f"who signs is an agent slug: {asked.actor!r}",
                                   "field": "actor"})
        if (refusal := body_refusal(bytes(asked.command), route.command)) is not None:
            return error_response(refusal)
        command = msgspec.json.decode(bytes(asked.command), type=route.command)
        if command.command_id is None:  # signed with its id, so a retry is the same command
            command = msgspec.structs.replace(command, command_id=uuid.uuid4().hex)
        ledger = await gateway.ledger()
        if not ledger["ok"]:
            return error_response(ledger["error"])
        at = datetime.now(timezone.utc)
        message = to_sign(ledger["result"]["ledger_id"], command, asked.actor, at)
        return Response({"message": base64.b64encode(message).decode(), "command": canonical(command).decode(),
                         "signed_at": at.isoformat()})

    return signing
