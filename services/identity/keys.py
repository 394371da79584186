"""Principals' key pairs: Ed25519 in the NATS nkey format, a seed file per principal.

A seed file holds one user seed (``SU...``), readable by its owner only. ``<data-dir>/keys/NAME.nk``
is where the CLI makes and finds them.
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
from pathlib import Path

import nacl.signing
import nkeys

KEYS_DIR = "keys"
SEED_SUFFIX = ".nk"


class KeyProblem(Exception):
    """A key that cannot be used, said in one line."""


def key_path(data_dir: Path, name: str) -> Path:
    return data_dir / KEYS_DIR / f"{name}{SEED_SUFFIX}"


def new_seed() -> bytes:
    """A fresh user seed (``SU...``)."""
    return nkeys.encode_seed(nacl.signing.SigningKey.generate().encode(), nkeys.PREFIX_BYTE_USER)


def write_seed(path: Path, seed: bytes) -> None:
    """Write ``seed`` to a new file readable by its owner only; an existing one is never replaced."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(seed + b"\n")
    except FileExistsError:
        raise KeyProblem(f"{path} exists already: a key is never overwritten") from None
    except OSError as error:
        raise KeyProblem(f"cannot write the key file {path}: {error.strerror}") from None


def key_pair(seed: bytes | str) -> nkeys.KeyPair:
    """The key pair of a user seed given as its text (``SU...``)."""
    text = seed.encode() if isinstance(seed, str) else seed
    try:
        pair = nkeys.from_seed(bytearray(text.strip()))
        if not pair.public_key.startswith(b"U"):
            raise KeyProblem("the seed is not a user's (its public key must begin with U)")
        return pair
    except (nkeys.NkeysError, ValueError) as error:
        raise KeyProblem(f"not an nkey user seed: {error}") from None


def read_key(path: Path) -> nkeys.KeyPair:
    """The key pair in a seed file, or one line saying why there is none."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        raise KeyProblem(f"no key file {path}: make one with `athenaeum key new NAME`") from None
    except OSError as error:
        raise KeyProblem(f"cannot read the key file {path}: {error.strerror}") from None
    try:
        return key_pair(text)
    except KeyProblem as problem:
        raise KeyProblem(f"{path}: {problem}") from None


def public_key(pair: nkeys.KeyPair) -> str:
    return pair.public_key.decode()


def inbox_prefix(key: str) -> str:
    """Where the replies to the user with public key ``key`` go, on a server that lets each
    receive only its own (see ``identity.accounts``)."""
    return f"_INBOX.{key}"


@functools.lru_cache(maxsize=4096)  # a fleet's keys, each checked once: an audit verifies thousands of signatures
def verifier(text: str) -> nacl.signing.VerifyKey:
    """The Ed25519 verify key of a user's public nkey (``U...``, with its checksum); the
    nkeys package verifies only with a whole key pair."""
    try:
        raw = base64.b32decode(text.encode() + b"=" * (-len(text) % 8))
    except binascii.Error:
        raise KeyProblem(f"{text!r} is not a public nkey") from None
    if len(raw) != 35 or raw[0] != nkeys.PREFIX_BYTE_USER or nkeys.crc16(bytearray(raw[:-2])) != int.from_bytes(raw[-2:], "little"):
        raise KeyProblem(f"{text!r} is not a user's public nkey")
    return nacl.signing.VerifyKey(raw[1:33])


def key_of(seed: nkeys.KeyPair | str | bytes | Path) -> nkeys.KeyPair:
    """A key pair from what a caller has: a pair, a seed's text (``SU...``), or a seed file's path."""
    if isinstance(seed, nkeys.KeyPair):
        return seed
    if isinstance(seed, bytes) or (isinstance(seed, str) and seed.startswith("SU")):
        return key_pair(seed)
    return read_key(Path(seed))
