"""Who sends a command, proven: the credential a request arrives with, checked against the
key the fleet roster binds its actor to, and the proof stored with the command.

A principal the roster binds to a key acts only with it: an unsigned command in its name is
refused, as is one signed with another key or a revoked one. A name no key binds yet is
only asserted, and stored as such, so the audit can list what nobody proved.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import NamedTuple

import msgspec
import nkeys

from athenaeum.aggregates.fleet import Fleet
from athenaeum.aggregates.rules import ActorMismatch, BadSignature, Invalid, KeyRevoked, RuleViolation
from athenaeum.events.commands import Command, Proof
from athenaeum.services.commands.routes import BY_COMMAND
from athenaeum.services.identity.keys import KeyProblem, verifier
from athenaeum.services.identity.signing import CLOCK_SKEW, sign, signed_bytes, verifies

TIMER_ACTOR = "athenaeum-timer"
LEDGER_ACTOR = "athenaeum-ledger"  # who records the ledger's checkpoints
SERVICE_ACTORS = frozenset({TIMER_ACTOR, LEDGER_ACTOR})
BY_SERVICE = Proof(by="service")
BY_HEADER = Proof(by="header")
UNISSUED = "the bearer token is not one the ledger issued, or it was revoked"
_encoder = msgspec.json.Encoder()


class Unauthenticated(RuleViolation):
    code = "unauthenticated"


class Credential(NamedTuple):
    """What came with a command: its signature and the moment it was signed, if any; an HTTP
    bearer token; the key of the NATS user the server says sent it, if the server
    authenticates users; or that Athenaeum's own services send it (never set from a request)."""

    signature: str | None = None
    signed_at: datetime | None = None
    token: str | None = None
    connection_key: str | None = None
    service: bool = False


ASSERTED = Credential()
SERVICE = Credential(service=True)


def signed(pair: nkeys.KeyPair, ledger_id: str, command: Command, actor: str, at: datetime | None = None) -> Credential:
    """``command`` as ``actor`` signs it with its key ``pair`` for the ledger ``ledger_id``."""
    at = at or datetime.now(timezone.utc)
    return Credential(signature=sign(pair, to_sign(ledger_id, command, actor, at)), signed_at=at)


def to_sign(ledger_id: str, command: Command, actor: str, at: datetime) -> bytes:
    """The bytes ``actor`` signs to send ``command`` at ``at``: what a signer without this
    library (the web page's browser) is handed, so nobody re-implements the canonical JSON."""
    return signed_bytes(ledger_id, BY_COMMAND[type(command)].name, actor, at, canonical(command))


def canonical(command: Command) -> bytes:
    """``command``'s JSON as the service will read it: a float field given an int
    (Vector(1, 1, 1)) is 1.0 there."""
    encoded = _encoder.encode(command)
    try:
        return _encoder.encode(msgspec.json.decode(encoded, type=type(command)))
    except msgspec.ValidationError:  # over a limit, say: the service refuses it before any signature counts
        return encoded


def authenticate(credential: Credential, actor: str, route: str, command: bytes, roster: Fleet | None,
                 ledger_id: str, now: datetime, human: bool) -> Proof:
    """The proof to store with ``command`` (its canonical JSON) sent as ``actor`` (a human
    principal or not); raises the PROTOCOLS code when the credential does not prove it."""
    if credential.service:
        return BY_SERVICE
    if actor in SERVICE_ACTORS:
        raise ActorMismatch(f"{actor!r} is the name of one of Athenaeum's own services: nobody else acts as it", "actor")
    if roster is not None and actor in roster.revoked:
        raise KeyRevoked(f"{actor}'s key is revoked: it can no longer act", "actor")
    key = roster.key_of(actor) if roster is not None else None
    if credential.connection_key is not None and credential.connection_key != key:
        holder = roster.holder_of(credential.connection_key) if roster is not None else None
        raise ActorMismatch(f"this connection is {holder or 'a key the roster does not bind'}, and may act only as "
                            f"itself, not as {actor!r}", "actor")
    # A token proves its holder before anything else is asked: naming someone else (a human
    # among them) is then the holder acting as another, not a signature gone missing.
    proof = None
    if credential.token is not None and credential.signature is None:
        proof = _by_token(credential.token, actor, roster)
    if (credential.signature is None or credential.signed_at is None) and human:
        raise BadSignature(f"{actor} is human: a human's commands are signed with the human's key", "signature")
    if proof is not None:
        return proof
    if credential.signature is None or credential.signed_at is None:
        if key is not None:
            raise BadSignature(f"{actor!r} is bound to a key: its commands must be signed with it (over HTTP: or sent with "
                               "its bearer token)", "signature")
        return BY_HEADER
    if key is None:
        raise BadSignature(f"{actor!r} has no registered key to check the signature with: a human registers it "
                           "(athenaeum agent register NAME --public-key U...)", "signature")
    if abs(now - credential.signed_at) > CLOCK_SKEW:
        raise BadSignature(f"signed at {credential.signed_at.isoformat()}, more than {CLOCK_SKEW} from the service's "
                           f"clock ({now.isoformat()}): sign it again", "signed_at")
    if not verifies(key, credential.signature, signed_bytes(ledger_id, route, actor, credential.signed_at, command)):
        raise BadSignature(f"the signature is not {actor}'s over this command in this ledger", "signature")
    return Proof(by="signature", public_key=key, signed_at=credential.signed_at, signature=credential.signature)


def require_public_key(command: Command) -> None:
    """A key a command binds is a user's public nkey, checksum and all: the NATS server would
    refuse its whole configuration over one that is not."""
    key = getattr(command, "public_key", None)
    if key is not None:
        try:
            verifier(key)
        except KeyProblem as problem:
            raise Invalid(str(problem), "public_key") from None


def deployment_command_id(human: str) -> str:
    """The id under which ``serve --humans`` registers each of the deployment's humans."""
    return f"deployment-human-{human}"


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _by_token(token: str, actor: str, roster: Fleet | None) -> Proof:
    digest = token_sha256(token)
    holder = roster.tokens.get(digest) if roster is not None else None
    if holder is None:
        raise Unauthenticated(UNISSUED, "Authorization")
    if holder != actor:
        raise ActorMismatch(f"the token proves {holder!r}, who may act only as itself, not as {actor!r}", "actor")
    return Proof(by="token", token_sha256=digest)

