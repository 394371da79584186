"""eventsourcing's own persistence suites, unchanged, against the JetStream module.

Knobs set, and why:
- ``EXPECT_CONTIGUOUS_NOTIFICATION_IDS`` stays True: notification ids are stream sequences and
  each test has a stream of its own, so they start at 1 and have no gaps in these suites.
- ``test_insert_subscribe`` runs the suite's ``optional_test_insert_subscribe``, which the
  library leaves to each persistence module to switch on.

The snapshot recorder is not given the aggregate recorder's suite: a snapshot here must summarize
an event the event stream holds, which that suite's snapshots of nothing do not (its own tests
are in ``test_snapshots``; the application suite takes snapshots of real aggregates).
"""

from __future__ import annotations

import os
from uuid import UUID

import pytest
from eventsourcing.persistence import (
    AggregateRecorder,
    ApplicationRecorder,
    ProcessRecorder,
    TrackingRecorder,
)
# Modules, not classes: pytest would collect the imported base TestCases themselves.
from eventsourcing.tests import application as application_suites
from eventsourcing.tests import persistence as suites
from eventsourcing.utils import Environment

from athenaeum.services.jetstream import (
    JetStreamAggregateRecorder,
    JetStreamApplicationRecorder,
    JetStreamFactory,
    JetStreamProcessRecorder,
    JetStreamTrackingRecorder,
)

pytestmark = pytest.mark.usefixtures("environ_store")


class FactoryPerTest:
    """Each recorder comes from a factory on the test's own stream, closed after the test."""

    def factory(self) -> JetStreamFactory:
        factory = JetStreamFactory(Environment(env=os.environ))
        self.addCleanup(factory.close)  # type: ignore[attr-defined]
        return factory


class TestAggregateRecorder(FactoryPerTest, suites.AggregateRecorderTestCase):
    def create_recorder(self) -> AggregateRecorder:
        return self.factory().aggregate_recorder()


class TestStringIdAggregateRecorder(FactoryPerTest, suites.AggregateRecorderTestCase):
    def new_originator_id(self) -> UUID | str:
        return f"pages/{super().new_originator_id()}.md"

    def create_recorder(self) -> AggregateRecorder:
        return self.factory().aggregate_recorder()


class TestApplicationRecorder(FactoryPerTest, suites.ApplicationRecorderTestCase[JetStreamApplicationRecorder]):
    def create_recorder(self) -> JetStreamApplicationRecorder:
        recorder = self.factory().application_recorder()
        assert isinstance(recorder, JetStreamApplicationRecorder)
        return recorder

    def test_insert_subscribe(self) -> None:
        self.optional_test_insert_subscribe()


class TestTrackingRecorder(FactoryPerTest, suites.TrackingRecorderTestCase):
    def create_recorder(self) -> TrackingRecorder:
        return self.factory().tracking_recorder()


class TestProcessRecorder(FactoryPerTest, suites.ProcessRecorderTestCase):
    def create_recorder(self) -> ProcessRecorder:
        return self.factory().process_recorder()


class TestNonInterleavingNotificationIDs(FactoryPerTest, suites.NonInterleavingNotificationIDsBaseCase):
    def create_recorder(self) -> ApplicationRecorder:
        return self.factory().application_recorder()


class TestInfrastructureFactory(suites.InfrastructureFactoryTestCase[JetStreamFactory]):
    def setUp(self) -> None:
        self.env = Environment("TestCase", dict(os.environ))
        super().setUp()

    def expected_factory_class(self) -> type[JetStreamFactory]:
        return JetStreamFactory

    def expected_aggregate_recorder_class(self) -> type[AggregateRecorder]:
        return JetStreamAggregateRecorder

    def expected_application_recorder_class(self) -> type[ApplicationRecorder]:
        return JetStreamApplicationRecorder

    def expected_tracking_recorder_class(self) -> type[TrackingRecorder]:
        return JetStreamTrackingRecorder

    def tracking_recorder_subclass(self) -> type[TrackingRecorder]:
        return TrackingRecorderSubclass

    def expected_process_recorder_class(self) -> type[ProcessRecorder]:
        return JetStreamProcessRecorder


class TrackingRecorderSubclass(JetStreamTrackingRecorder):
    pass


class TestExampleApplication(application_suites.ExampleApplicationTestCase):
    expected_factory_topic = "athenaeum.services.jetstream.factory:JetStreamFactory"
