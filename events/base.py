"""The base event and the registry of stable tags.

Every event is a frozen msgspec Struct with an explicit tag. The tag, never a Python import
path, is what the ledger stores, so modules can move without breaking history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec


class UnknownEventTag(LookupError):
    """A stored event names a tag that no loaded event class declares."""

    def __init__(self, tag: str) -> None:
        super().__init__(f"unknown event tag {tag!r}: no loaded event class declares it")
        self.tag = tag


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """A fact that happened to one aggregate.

    Subclasses declare their stable tag: ``class VoteCast(Event, tag="VoteCast")``.
    """

    originator_id: str
    originator_version: int
    timestamp: datetime
    actor: str
    command_id: str

    @property
    def tag(self) -> str:
        return type(self).__struct_config__.tag  # type: ignore[return-value]


_decoders: dict[str, msgspec.json.Decoder[Any]] = {}


def event_types() -> dict[str, type[Event]]:
    """Every loaded event class by its tag; two classes claiming one tag is an error."""
    found: dict[str, type[Event]] = {}
    pending = list(Event.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        tag = cls.__struct_config__.tag
        if not isinstance(tag, str):
            continue
        if found.setdefault(tag, cls) is not cls:
            raise TypeError(f"tag {tag!r} is declared by both {found[tag]} and {cls}")
    return found


def decoder_for(tag: str) -> msgspec.json.Decoder[Any]:
    """The reused JSON decoder of the event class that declares ``tag``."""
    decoder = _decoders.get(tag)
    if decoder is None:
        # Classes load lazily (a family module imported after the first decode), so a miss
        # rescans the subclasses once before giving up.
        cls = event_types().get(tag)
        if cls is None:
            raise UnknownEventTag(tag)
        decoder = _decoders[tag] = msgspec.json.Decoder(cls)
    return decoder
