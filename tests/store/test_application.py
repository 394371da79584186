"""eventsourcing's Application, Repository, snapshots and projection runners on JetStream."""

from __future__ import annotations

from functools import singledispatchmethod
from typing import Any

from eventsourcing.persistence import Tracking
from eventsourcing.popo import POPOTrackingRecorder
from eventsourcing.projection import Projection, ProjectionRunner

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.state import fold
from tests.test_events import Counter, CounterBumped, CounterOpened, evolve, event


def test_immutable_aggregates_save_load_and_snapshot_on_jetstream(store_env) -> None:
    with AthenaeumApplication(env=store_env | {"IS_SNAPSHOTTING_ENABLED": "y"}) as app:
        page = "concepts/canon rules.md"
        app.save(event(CounterOpened, 1, page, name="canon"), event(CounterBumped, 2, page, by=2))
        app.take_snapshot(page, projector_func=fold(evolve))
        app.save(event(CounterBumped, 3, page, by=5))
        assert app.repository.get(page, projector_func=fold(evolve)) == Counter(
            id=page, version=3, name="canon", total=7
        )
        assert app.repository.get(page, version=2, projector_func=fold(evolve)).total == 2
        [snapshot] = app.snapshots.get(page)
        assert snapshot.originator_version == 2


def test_a_cached_aggregate_fast_forwards_to_events_saved_elsewhere(store_env) -> None:
    cached = store_env | {"AGGREGATE_CACHE_MAXSIZE": "10"}
    with AthenaeumApplication(env=cached) as mine, AthenaeumApplication(env=cached) as theirs:
        mine.save(event(CounterOpened, 1, "shared", name="s"))
        assert mine.repository.get("shared", projector_func=fold(evolve)).total == 0
        theirs.save(event(CounterBumped, 2, "shared", by=4))
        assert mine.repository.get("shared", projector_func=fold(evolve)).total == 4


class TotalsView(POPOTrackingRecorder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.totals: dict[str, int] = {}

    def add(self, counter: str, by: int, tracking: Tracking) -> None:
        with self._database_lock:
            self._assert_tracking_uniqueness(tracking)
            self.totals[counter] = self.totals.get(counter, 0) + by
            self._insert_tracking(tracking)


class Totals(Projection[TotalsView]):
    topics = ("TestCounterBumped",)

    @singledispatchmethod
    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        self.view.insert_tracking(tracking)

    @process_event.register
    def _(self, domain_event: CounterBumped, tracking: Tracking) -> None:
        self.view.add(domain_event.originator_id, domain_event.by, tracking)


def test_a_projection_runner_follows_the_application_live(store_env) -> None:
    env = store_env | {"TOTALS_PERSISTENCE_MODULE": "eventsourcing.popo"}
    with AthenaeumApplication(env=env) as app:
        app.save(event(CounterOpened, 1, "a", name="a"), event(CounterBumped, 2, "a", by=3))
        with ProjectionRunner(
            application_class=AthenaeumApplication, projection_class=Totals, view_class=TotalsView, env=env
        ) as runner:
            [recording] = app.save(event(CounterBumped, 3, "a", by=4))
            runner.wait(recording.notification.id, timeout=10)
            assert runner.view.totals == {"a": 7}
