"""The eventsourcing Application that runs Athenaeum's immutable aggregates."""

from __future__ import annotations

from typing import Any

import msgspec
from eventsourcing.application import Application
from eventsourcing.persistence import Mapper, MapperDeserialisationError, StoredEvent

from athenaeum.aggregates.state import SNAPSHOT_TAG, Snapshot
from athenaeum.events import Event, event_registry

_encoder = msgspec.json.Encoder()
_snapshot_decoder = msgspec.json.Decoder(Snapshot)


class EventMapper(Mapper[str]):
    """Stores an event as its msgspec JSON under its stable tag, never a Python import path."""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        if not isinstance(domain_event, (Event, Snapshot)):
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


class AthenaeumApplication(Application[str]):
    """Saves msgspec events with ``save(*events)`` and loads state with
    ``repository.get(id, projector_func=fold(evolve))``; snapshots are ``Snapshot``s."""

    snapshot_class = Snapshot  # type: ignore[assignment]

    def construct_mapper(self) -> Mapper[str]:
        return EventMapper(
            transcoder=self.factory.transcoder(),
            compressor=self.factory.compressor(),
            cipher=self.factory.cipher(),
        )
