"""What a principal signs for a command, and its checking, here and offline alike.

The signed bytes name the ledger (so a signature holds in one deployment only), the route, the
actor, the moment of signing and the command's canonical JSON (its ``command_id`` included, so
the one signature cannot be used for another command either).
"""

from __future__ import annotations

import base64
import binascii
import ctypes
from collections.abc import Callable
from datetime import datetime, timedelta

import msgspec
import nacl._sodium
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


SIGNATURE_BYTES = 64  # an Ed25519 signature's


def _verify_holding_the_gil() -> Callable[[bytes, bytes, bytes], bool] | None:
    """libsodium's detached verify, called without letting go of the GIL. PyNaCl (as cffi does
    around every call) releases it for the 45 us of verifying, and in serve the loop thread then
    waits for a projector thread to give it back, up to the interpreter's 5 ms switch interval:
    a verify beside a busy thread took 5.2 ms, 0.11 ms holding it, and bench.commands' signed
    votes went from 0.89-0.92x of unsigned ones to 0.95x. It is PyNaCl's own libsodium, which
    its extension exports; None (and PyNaCl's call) where it does not."""
    try:
        function = ctypes.PyDLL(nacl._sodium.__file__).crypto_sign_verify_detached
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p)
    function.restype = ctypes.c_int

    def verify(key: bytes, signature: bytes, message: bytes) -> bool:
        # libsodium reads 64 bytes of signature and 32 of key whatever it is given: checked here.
        return len(signature) == SIGNATURE_BYTES and len(key) == 32 and function(signature, message, len(message), key) == 0

    return verify


_verify = _verify_holding_the_gil()


def verifies(public_key: str, signature: str, message: bytes) -> bool:
    """Whether ``signature`` (base64url) is ``public_key``'s over ``message``."""
    try:
        key = verifier(public_key)
        raw = base64.urlsafe_b64decode(signature.encode())
        if _verify is not None:
            return _verify(key.encode(), raw, message)
        key.verify(message, raw)
    except (KeyProblem, binascii.Error, ValueError, nacl.exceptions.BadSignatureError):
        return False
    return True


def all_verify(signed: list[tuple[str, str, bytes]]) -> list[bool]:
    """``verifies`` for each (public key, signature, message): one call for a worker process."""
    return [verifies(*each) for each in signed]
