"""Messages as the store writes and reads them."""

from __future__ import annotations

from dataclasses import dataclass, field

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
