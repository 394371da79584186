"""The eventsourcing Application that runs Athenaeum's immutable aggregates."""

from __future__ import annotations

from typing import Any

import msgspec
from eventsourcing.application import Application, Repository
from eventsourcing.persistence import Mapper, MapperDeserialisationError, StoredEvent

from athenaeum.aggregates.state import SNAPSHOT_TAG, Snapshot
from athenaeum.events import Event, event_registry

_encoder = msgspec.json.Encoder()
_snapshot_decoder = msgspec.json.Decoder(Snapshot)


class EventMapper(Mapper[str]):
    """Stores an event as its msgspec JSON under its stable tag, never a Python import path."""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        if not isinstance(domain_event, (Event, Snapshot)) or type(domain_event) is Event:
            # The base class has no tag of its own: stored, it could never be read back.
            raise TypeError(f"{type(domain_event).__qualname__} is not an Athenaeum event")
        state = _encoder.encode(domain_event)
        if self.compressor:
            state = self.compressor.compress(state)
        if self.cipher:
            state = self.cipher.encrypt(state)
        return StoredEvent(
            originator_id=domain_event.originator_id,
            originator_version=domain_event.originator_version,
            topic=type(domain_event).__struct_config__.tag,  # type: ignore[arg-type]
            state=state,
        )

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        decoder = _snapshot_decoder if stored_event.topic == SNAPSHOT_TAG else event_registry.decoder_for(stored_event.topic)
        state = stored_event.state
        try:
            if self.cipher:
                state = self.cipher.decrypt(state)
            if self.compressor:
                state = self.compressor.decompress(state)
            return decoder.decode(state)
        except (msgspec.DecodeError, ValueError) as error:
            raise MapperDeserialisationError(
                f"cannot decode {stored_event.topic} version {stored_event.originator_version} "
                f"of {stored_event.originator_id!r}: {error}"
            ) from error


class ImmutableRepository(Repository[str]):
    """A repository whose cache keeps the fast-forwarded state.

    eventsourcing's cache relies on mutable aggregates being advanced in place; an immutable
    state is replaced instead, so the new one is put back, or every load would replay all
    events since the first one cached.
    """

    def get(self, aggregate_id: str, *, version: int | None = None, **kwargs: Any) -> Any:
        aggregate = super().get(aggregate_id, version=version, **kwargs)
        if self.cache is not None and version is None:
            self.cache.put(aggregate_id, aggregate)
        return aggregate


class AthenaeumApplication(Application[str]):
    """Saves msgspec events with ``save(*events)`` and loads state with
    ``repository.get(id, projector_func=fold(evolve))``; snapshots are ``Snapshot``s."""

    snapshot_class = Snapshot  # type: ignore[assignment]
    # Frozen states cannot be corrupted by a caller, so the cache need not copy them.
    env = {"DEEPCOPY_FROM_AGGREGATE_CACHE": "n"}

    def construct_repository(self) -> Repository[str]:
        configured = super().construct_repository()  # reads the cache settings from env
        repository = ImmutableRepository(
            event_store=configured.event_store,
            snapshot_store=configured.snapshot_store,
            fastforward=configured.fastforward,
            fastforward_skipping=configured.fastforward_skipping,
            deepcopy_from_cache=configured.deepcopy_from_cache,
        )
        repository.cache = configured.cache
        return repository

    def construct_mapper(self) -> Mapper[str]:
        return EventMapper(
            transcoder=self.factory.transcoder(),
            compressor=self.factory.compressor(),
            cipher=self.factory.cipher(),
        )
