"""eventsourcing persistence on NATS JetStream: ``PERSISTENCE_MODULE=athenaeum.services.jetstream``."""

from athenaeum.services.jetstream.factory import JetStreamFactory
from athenaeum.services.jetstream.recorders import (
    JetStreamAggregateRecorder,
    JetStreamApplicationRecorder,
    JetStreamProcessRecorder,
    JetStreamTrackingRecorder,
)

__all__ = [
    "JetStreamAggregateRecorder",
    "JetStreamApplicationRecorder",
    "JetStreamFactory",
    "JetStreamProcessRecorder",
    "JetStreamTrackingRecorder",
]
