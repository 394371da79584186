"""The base event and the registry of stable tags.

Every event is a frozen msgspec Struct with an explicit tag. The tag, never a Python import
path, is what the ledger stores, so modules can move without breaking history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Generic, TypeVar

import msgspec

T = TypeVar("T", bound=msgspec.Struct)


class UnknownEventTag(LookupError):
    """A stored record names a tag that no loaded class declares."""

    def __init__(self, tag: str) -> None:
        super().__init__(f"unknown tag {tag!r}: no loaded class declares it")
        self.tag = tag


def family_id(family: str, key: str) -> str:
    """An aggregate id unique across families: a thread slug, a page path and a proposal id
    may otherwise coincide (``adr-7`` the thread and ``adr-7`` the ratification)."""
    return f"{family}:{key}"


def family_of_id(aggregate_id: str) -> str:
    """The family an aggregate id names (see ``family_id``); ratification topics carry none."""
    return aggregate_id.partition(":")[0] if ":" in aggregate_id else "ratification"


def natural_key(aggregate_id: str) -> str:
    """The name users give an aggregate: its id without the family prefix. Ratification
    topics, the first family, carry none."""
    return aggregate_id.partition(":")[2] or aggregate_id


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
    def key(self) -> str:
        """The aggregate's natural key (a slug, a path, a proposal id)."""
        return natural_key(self.originator_id)

    @property
    def tag(self) -> str:
        return type(self).__struct_config__.tag  # type: ignore[return-value]

    @property
    def command(self) -> tuple[str, datetime]:
        """Which command appended it: the events of one command share its id and its time (an
        id alone may recur, being each actor's; the actor may differ, as a recognized closure's
        pages are written by the closer)."""
        return self.command_id, self.timestamp


class TagRegistry(Generic[T]):
    """The subclasses of one tagged Struct base, found by tag, each with a reused decoder."""

    def __init__(self, base: type[T]) -> None:
        self.base = base
        self._decoders: dict[str, msgspec.json.Decoder[T]] = {}

    def types(self) -> dict[str, type[T]]:
        """Every loaded subclass by its tag; two classes claiming one tag is an error."""
        found: dict[str, type[T]] = {}
        pending = list(self.base.__subclasses__())
        while pending:
            cls = pending.pop()
            pending.extend(cls.__subclasses__())
            tag = cls.__struct_config__.tag  # type: ignore[attr-defined]
            if found.setdefault(tag, cls) is not cls:
                raise TypeError(f"tag {tag!r} is declared by both {found[tag]} and {cls}")
        return found

    def decoder_for(self, tag: str) -> msgspec.json.Decoder[T]:
        """The reused JSON decoder of the class that declares ``tag``."""
        decoder = self._decoders.get(tag)
        if decoder is None:
            # Classes load lazily (a family module imported after the first decode), so a
            # miss rescans the subclasses once before giving up.
            cls = self.types().get(tag)
            if cls is None:
                raise UnknownEventTag(tag)
            decoder = self._decoders[tag] = msgspec.json.Decoder(cls)
        return decoder


event_registry = TagRegistry(Event)
