"""Messages as the store writes and reads them."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from nats.aio.msg import Msg


@dataclass
class Outgoing:
    """One message to append: its subject, body and headers."""

    subject: str
    payload: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stored:
    """One message read back from the stream."""

    seq: int
    subject: str
    payload: bytes
    headers: dict[str, str]


def stored(msg: Msg) -> Stored:
    """A direct get's reply as the stored message it carries."""
    headers = msg.headers or {}
    return Stored(
        seq=int(headers["Nats-Sequence"]),
        subject=headers["Nats-Subject"],
        payload=msg.data,
        headers=headers,
    )


def stored_from_api(message: dict[str, Any]) -> Stored:
    """A stream message as the JetStream API's message get returns it (JSON, base64 parts)."""
    return Stored(
        seq=int(message["seq"]),
        subject=message["subject"],
        payload=base64.b64decode(message.get("data") or ""),
        headers=_headers(base64.b64decode(message.get("hdrs") or "")),
    )


def _headers(block: bytes) -> dict[str, str]:
    """``NATS/1.0`` then ``Name: value`` lines, as nats-py reads them (names kept as sent)."""
    headers = {}
    for line in block.decode().split("\r\n")[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip()] = value.strip()
    return headers
