"""Snapshots name the event they summarize, and a load checks it: a snapshot that does not
match the event stream is passed over, and the events tell the state."""

from __future__ import annotations

import asyncio
import logging

import msgspec
import nats
import pytest
from eventsourcing.persistence import ProgrammingError

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.state import Snapshot, fold
from athenaeum.services.jetstream.log import TOPIC
from athenaeum.services.jetstream.positions import VERSION
from athenaeum.services.jetstream.snapshots import EVENT_SEQUENCE, EVENT_SHA256, digest
from tests.test_events import Counter, CounterBumped, CounterOpened, evolve, event

COUNTER = "counters/c"


@pytest.fixture
def app(store_env: dict[str, str]):
    with AthenaeumApplication(env=store_env | {"IS_SNAPSHOTTING_ENABLED": "y"}) as app:
        app.save(event(CounterOpened, 1, COUNTER, name="c"), event(CounterBumped, 2, COUNTER, by=2))
        app.take_snapshot(COUNTER, projector_func=fold(evolve))
        app.save(event(CounterBumped, 3, COUNTER, by=5))
        yield app


def snapshot_messages(app: AthenaeumApplication) -> list:
    log = app.snapshots.recorder.log  # type: ignore[union-attr]
    return app.factory.connection.run(log.history(COUNTER))  # type: ignore[attr-defined]


def forge(app: AthenaeumApplication, url: str, state: Counter, headers: dict[str, str]) -> None:
    """A snapshot put on the snapshot stream by hand, as one holding the services' key could."""
    log = app.snapshots.recorder.log  # type: ignore[union-attr]
    payload = msgspec.json.encode(Snapshot.take(state))

    async def publish() -> None:
        nc = await nats.connect(url)
        await nc.jetstream().publish(log.subjects.aggregate(COUNTER), payload,
                                     headers={VERSION: str(state.version), TOPIC: "AggregateSnapshot"} | headers)
        await nc.close()

    asyncio.run(publish())


def test_a_snapshot_records_the_sequence_and_digest_of_the_event_it_summarizes(app: AthenaeumApplication) -> None:
    [message] = snapshot_messages(app)
    events = app.factory.connection.run(app.recorder.log.history(COUNTER))  # type: ignore[attr-defined]
    second = events[1]
    assert message.headers[EVENT_SEQUENCE] == str(second.seq)
    assert message.headers[EVENT_SHA256] == digest(second.payload)
    assert app.repository.get(COUNTER, projector_func=fold(evolve)).total == 7


@pytest.mark.parametrize("anchor", ["another digest", "another event", "none"])
def test_a_snapshot_that_does_not_match_its_event_is_passed_over_and_the_events_tell(
    app: AthenaeumApplication, store_env: dict[str, str], anchor: str, caplog: pytest.LogCaptureFixture
) -> None:
    [genuine] = snapshot_messages(app)
    headers = {"another digest": {EVENT_SEQUENCE: genuine.headers[EVENT_SEQUENCE], EVENT_SHA256: "0" * 64},
               "another event": {EVENT_SEQUENCE: "1", EVENT_SHA256: genuine.headers[EVENT_SHA256]},
               "none": {}}[anchor]
    forge(app, store_env["ATHENAEUM_NATS_URL"], Counter(id=COUNTER, version=3, name="c", total=1000), headers)
    fresh = AthenaeumApplication(env=store_env | {"IS_SNAPSHOTTING_ENABLED": "y"})  # knows nothing yet
    try:
        with caplog.at_level(logging.WARNING, logger="athenaeum.services.jetstream.log"):
            assert fresh.repository.get(COUNTER, projector_func=fold(evolve)).total == 7
        assert "passed over, its events read instead" in caplog.text
    finally:
        fresh.close()


def test_a_snapshot_of_a_version_the_events_lack_is_refused(app: AthenaeumApplication) -> None:
    recorder = app.snapshots.recorder  # type: ignore[union-attr]
    with pytest.raises(ProgrammingError, match="no version 9"):
        recorder.insert_events([app.mapper.to_stored_event(Snapshot.take(Counter(id=COUNTER, version=9, name="c")))])
