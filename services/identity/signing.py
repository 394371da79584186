"""What a principal signs for a command, and its checking, here and offline alike.

The signed bytes name the ledger (so a signature holds in one deployment only), the route, the
actor, the moment of signing and the command's canonical JSON (its ``command_id`` included, so
the one signature cannot be used for another command either).
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime, timedelta

import msgspec
import nacl.exceptions
import nkeys

from athenaeum.services.identity.keys import KeyProblem, verifier

PURPOSE = "athenaeum command v1"
CLOCK_SKEW = timedelta(minutes=5)  # a signature's time may differ from the service's by this much
_encoder = msgspec.json.Encoder()


class SignedCommand(msgspec.Struct, frozen=True, kw_only=True):
    purpose: str
    ledger: str
    route: str
    actor: str
    signed_at: datetime
    command: msgspec.Raw


def signed_bytes(ledger: str, route: str, actor: str, signed_at: datetime, command: bytes) -> bytes:
    """``command``: the command's canonical JSON, as msgspec encodes its Struct."""
    return _encoder.encode(SignedCommand(purpose=PURPOSE, ledger=ledger, route=route, actor=actor,
                                         signed_at=signed_at, command=msgspec.Raw(command)))


def sign(pair: nkeys.KeyPair, message: bytes) -> str:
    return base64.urlsafe_b64encode(pair.sign(message)).decode()


def verifies(public_key: str, signature: str, message: bytes) -> bool:
    """Whether ``signature`` (base64url) is ``public_key``'s over ``message``."""
    try:
        verifier(public_key).verify(message, base64.urlsafe_b64decode(signature.encode()))
    except (KeyProblem, binascii.Error, ValueError, nacl.exceptions.BadSignatureError):
        return False
    return True


def all_verify(signed: list[tuple[str, str, bytes]]) -> list[bool]:
    """``verifies`` for each (public key, signature, message): one call for a worker process."""
    return [verifies(*each) for each in signed]
