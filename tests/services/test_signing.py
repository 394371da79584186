"""The verify serve and the audit use (libsodium's, called holding the GIL) says what PyNaCl's
says, for every signature, good, altered or of any length."""

from __future__ import annotations

import base64

import nacl.exceptions
from hypothesis import given, settings
from hypothesis import strategies as st

from athenaeum.services.identity import signing
from athenaeum.services.identity.keys import key_pair, new_seed, public_key, verifier

KEY = key_pair(new_seed())
PUBLIC = public_key(KEY)


def pynacl_says(signature: bytes, message: bytes) -> bool:
    try:
        verifier(PUBLIC).verify(message, signature)
    except (nacl.exceptions.BadSignatureError, ValueError):
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(message=st.binary(max_size=600), flip=st.integers(min_value=-1, max_value=64 * 8 - 1),
       cut=st.integers(min_value=0, max_value=80), extra=st.binary(max_size=16))
def test_a_signature_verifies_exactly_when_pynacl_says_it_does(message: bytes, flip: int, cut: int, extra: bytes) -> None:
    raw = bytearray(base64.urlsafe_b64decode(signing.sign(KEY, message)))
    if flip >= 0:
        raw[flip // 8] ^= 1 << (flip % 8)
    signature = bytes(raw[:cut] if cut < 64 else raw) + (extra if cut >= 64 else b"")
    said = signing.verifies(PUBLIC, base64.urlsafe_b64encode(signature).decode(), message)
    assert said == pynacl_says(signature, message)
    assert said == (flip < 0 and cut >= 64 and not extra)


def test_the_verify_used_is_libsodiums_held_one_not_pynacls_call() -> None:
    """PyNaCl's call lets go of the GIL, which in serve costs up to a 5 ms switch interval a
    verify (see ``signing``); its libsodium exports the function called instead."""
    assert signing._verify is not None
