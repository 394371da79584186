"""How the edge reads a command's JSON, once, before the command's typed decoder: a key named
twice in one object is refused, and a whole number written as 2.0 or 1e3 is the integer it is.

msgspec, as most parsers, keeps the last of two values for one key, and takes only ``2`` for
an integer, where JSON Schema (and so the OpenAPI document) reads ``2.0`` as the same integer.
The standard library's parser hands each object's pairs, and each number's literal, over before
they become values: about 3 µs on a vote's 265 bytes, against the milliseconds a command takes.
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import TypeVar

import msgspec

from athenaeum.aggregates.rules import Invalid

C = TypeVar("C")
_EXACT = 2**53  # past this, a float no longer spells every integer


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return found


def _not_json(literal: str) -> None:
    raise ValueError(f"{literal} is not JSON")  # NaN, Infinity: the typed decoder says so


_read = threading.local()  # whether the document being read has a whole number written as a float


def _number(literal: str) -> float | int:
    value = float(literal)
    if not (value.is_integer() and abs(value) <= _EXACT):
        return value
    _read.whole = True
    return int(value)


_reader = json.JSONDecoder(object_pairs_hook=_unique, parse_float=_number, parse_constant=_not_json)


class _NotJson(Exception):
    """Not UTF-8, not JSON, or nested past what the parser follows: the typed decoder says which."""


def _parsed(body: bytes, what: str) -> object:
    """``body`` as the standard library's parser reads it; a key named twice in one object is
    ``invalid``, naming the key (``what`` names what the body is, for the message)."""
    try:
        return _reader.decode(body.decode())
    except _DuplicateKey as duplicate:
        raise Invalid(f"the key {duplicate.key!r} appears twice in one object: a {what} names each field once",
                      duplicate.key) from None
    except (ValueError, RecursionError):
        raise _NotJson from None


def require_keys_once(body: bytes) -> None:
    """Refuse a JSON document naming a key twice in one object, as ``read_command`` does, for a
    body another library decodes (an MCP request); what is not JSON is left for it to say."""
    with contextlib.suppress(_NotJson):
        _parsed(body, "request")


def read_command(body: bytes, decoder: msgspec.json.Decoder[C]) -> C:
    """The command ``body`` carries, as ``decoder`` decodes it. A JSON object that names a key
    twice is ``invalid``, naming the key: which value counts would otherwise be the parser's
    choice, not the sender's. What is not JSON at all is left for ``decoder`` to describe."""
    _read.whole = False
    try:
        document = _parsed(body, "command")
    except _NotJson:
        return decode_typed(body, decoder)
    if _read.whole:
        with contextlib.suppress(UnicodeEncodeError):  # a lone surrogate: named below, once the decoder refuses it
            body = msgspec.json.encode(document)
    try:
        return decode_typed(body, decoder)
    except msgspec.DecodeError:
        # msgspec calls a lone surrogate "truncated": looked for only then, off the path of every command.
        if (where := lone_surrogate(document)) is not None:
            raise Invalid(f"{where or 'the body'} holds a lone surrogate (a \\ud800-\\udfff escape with no pair), "
                          "which is no Unicode character", where or "body") from None
        raise


def lone_surrogate(value: object, path: str = "") -> str | None:
    """The dotted path (list indexes left out) of the first text in ``value`` holding a lone
    surrogate, which UTF-8 cannot carry; "" for ``value`` itself; None if none does."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return path
    elif isinstance(value, dict):
        for key, item in value.items():
            named = f"{path}.{key}" if path else key
            if lone_surrogate(key) is not None:
                return repr(named)
            if (found := lone_surrogate(item, named)) is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            if (found := lone_surrogate(item, path)) is not None:
                return found
    return None


def decode_typed(body: bytes, decoder: msgspec.json.Decoder[C]) -> C:
    """``body`` as ``decoder`` reads it. A typed decoder stops at the first field of the wrong
    type, however deep its value, but not in a value it takes whole (any JSON, or raw)."""
    try:
        return decoder.decode(body)
    except RecursionError:
        raise Invalid("the body nests arrays or objects deeper than any command does", "body") from None
