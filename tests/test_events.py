"""Events are stored as msgspec JSON under their stable tag and decoded back to their Struct."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec
import pytest
from eventsourcing.persistence import JSONTranscoder, StoredEvent

from athenaeum.aggregates.application import AthenaeumApplication, EventMapper
from athenaeum.aggregates.state import AggregateState, Snapshot, fold
from athenaeum.events import Event, TagRegistry, UnknownEventTag


class CounterOpened(Event, tag="TestCounterOpened"):
    name: str


class CounterBumped(Event, tag="TestCounterBumped"):
    by: int


class Counter(AggregateState, tag="TestCounter"):
    name: str
    total: int = 0


def evolve(state: Counter | None, event: Event) -> Counter:
    match event:
        case CounterOpened(name=name):
            return Counter(id=event.originator_id, version=event.originator_version, name=name)
        case CounterBumped(by=by):
            assert state is not None
            return msgspec.structs.replace(state, total=state.total + by)
    raise AssertionError(event)


def event(cls: type[Event], version: int, aggregate: str = "counter/1", **fields: object) -> Event:
    return cls(
        originator_id=aggregate,
        originator_version=version,
        timestamp=datetime(2026, 11, 30, tzinfo=timezone.utc),
        actor="agent-a",
        command_id=f"cmd-{version}",
        **fields,
    )


mapper = EventMapper(transcoder=JSONTranscoder())


def test_an_event_is_stored_under_its_tag_not_an_import_path() -> None:
    stored = mapper.to_stored_event(event(CounterBumped, 2, by=5))
    assert stored.topic == "TestCounterBumped"
    assert msgspec.json.decode(stored.state)["by"] == 5
    assert stored.originator_id == "counter/1" and stored.originator_version == 2


def test_a_stored_event_decodes_to_its_struct() -> None:
    original = event(CounterOpened, 1, name="c")
    assert mapper.to_domain_event(mapper.to_stored_event(original)) == original


def test_an_unknown_tag_is_a_clear_error() -> None:
    stored = StoredEvent(originator_id="x", originator_version=1, topic="NoSuchEvent", state=b"{}")
    with pytest.raises(UnknownEventTag, match="NoSuchEvent"):
        mapper.to_domain_event(stored)


def test_the_base_event_has_no_tag_to_be_read_back_by_and_is_refused() -> None:
    with pytest.raises(TypeError, match="not an Athenaeum event"):
        mapper.to_stored_event(event(Event, 1))


def test_two_classes_cannot_claim_one_tag() -> None:
    class Base(msgspec.Struct, tag_field="type"):
        pass

    class First(Base, tag="Same"):
        pass

    class Second(Base, tag="Same"):
        pass

    with pytest.raises(TypeError, match="'Same' is declared by both"):
        TagRegistry(Base).types()


def test_a_snapshot_restores_the_state_it_took() -> None:
    state = Counter(id="counter/1", version=3, name="c", total=9)
    snapshot = mapper.to_domain_event(mapper.to_stored_event(Snapshot.take(state)))
    assert isinstance(snapshot, Snapshot)
    assert snapshot.restore() == state


def test_the_fold_applies_events_and_stamps_versions() -> None:
    state = fold(evolve)(None, [event(CounterOpened, 1, name="c"), event(CounterBumped, 2, by=4)])
    assert state == Counter(id="counter/1", version=2, name="c", total=4)


def test_the_application_saves_events_and_loads_state_in_memory() -> None:
    app = AthenaeumApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo", "IS_SNAPSHOTTING_ENABLED": "y"})
    app.save(event(CounterOpened, 1, name="c"), event(CounterBumped, 2, by=4))
    app.take_snapshot("counter/1", projector_func=fold(evolve))
    app.save(event(CounterBumped, 3, by=1))
    assert app.repository.get("counter/1", projector_func=fold(evolve)).total == 5
