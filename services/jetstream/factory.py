"""The infrastructure factory eventsourcing finds with
``PERSISTENCE_MODULE=athenaeum.services.jetstream``.

Configuration, read from the application's environment (so ``<APP>_``-prefixed names win):
- ``ATHENAEUM_NATS_URL``: server URL, or several separated by commas (``nats://127.0.0.1:4222``);
- ``ATHENAEUM_STREAM``: the event stream (``ATHENAEUM``), created when missing with atomic
  publish and direct get allowed, delete and purge denied; snapshots go to ``<stream>_SNAPSHOTS``,
  made alike (an existing stream is mended or refused: see ``shape``);
- ``ATHENAEUM_REPLICAS``: stream replicas (1; 3 on a cluster);
- ``ATHENAEUM_NATS_KEY``: the seed file of the nkey user to connect as, where NATS authenticates;
- ``ATHENAEUM_NATS_TIMEOUT``: seconds any single NATS wait may take (5);
- ``ATHENAEUM_CREATE_STREAM``: ``n`` for readers (auditors) that must find the stream, never
  create one under a mistyped name (``y``).
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Any

from eventsourcing.persistence import (
    AggregateRecorder,
    ApplicationRecorder,
    InfrastructureFactory,
    ProcessRecorder,
    ProgrammingError,
)
from eventsourcing.utils import Environment, EnvType, resolve_topic

from athenaeum.services.jetstream.connection import Connection
from athenaeum.services.jetstream.log import StreamLog
from athenaeum.services.jetstream.recorders import (
    JetStreamAggregateRecorder,
    JetStreamApplicationRecorder,
    JetStreamProcessRecorder,
    JetStreamTrackingRecorder,
)

DEFAULT_URL = "nats://127.0.0.1:4222"
DEFAULT_STREAM = "ATHENAEUM"
# The layout of subjects and headers a stream is written in (see ``subjects`` and ``log``):
# declared in the stream's metadata, and a stream of another layout is refused.
LAYOUT_KEY = "athenaeum_layout"
LAYOUT = "2"
_STREAM_NAME = re.compile(r"^[A-Za-z0-9_-]{1,200}$")


def stream_config(name: str, replicas: int, *, immutable: bool) -> dict[str, object]:
    if not _STREAM_NAME.match(name):
        raise ProgrammingError(
            f"ATHENAEUM_STREAM: {name!r} is not a stream name (letters, digits, '-' and '_' only)"
        )
    return {
        "name": name,
        "subjects": [f"{name}.>"],
        "storage": "file",
        "retention": "limits",
        "num_replicas": replicas,
        "allow_atomic": True,
        "allow_direct": True,
        "deny_delete": immutable,
        "deny_purge": immutable,
        "metadata": {LAYOUT_KEY: LAYOUT},
    }


class JetStreamFactory(InfrastructureFactory[JetStreamTrackingRecorder]):
    NATS_URL = "ATHENAEUM_NATS_URL"
    STREAM = "ATHENAEUM_STREAM"
    REPLICAS = "ATHENAEUM_REPLICAS"
    TIMEOUT = "ATHENAEUM_NATS_TIMEOUT"
    NATS_KEY = "ATHENAEUM_NATS_KEY"
    CREATE_STREAM = "ATHENAEUM_CREATE_STREAM"

    def __init__(self, env: Environment | EnvType | None) -> None:
        super().__init__(env)
        self._urls = [url.strip() for url in self.env.get(self.NATS_URL, DEFAULT_URL).split(",") if url.strip()]
        stream = self.env.get(self.STREAM, DEFAULT_STREAM)
        replicas = int(self.env.get(self.REPLICAS, "1"))
        self.events_config = stream_config(stream, replicas, immutable=True)
        # Snapshots are derived data, and a load checks each against the event it summarizes
        # (see ``log``); a snapshot once written stays, and the stream as a whole may be made again.
        self.snapshots_config = stream_config(f"{stream}_SNAPSHOTS", replicas, immutable=True)
        self._timeout = float(self.env.get(self.TIMEOUT, "5"))
        self._key = Path(key) if (key := self.env.get(self.NATS_KEY)) else None
        self._create = self.env.get(self.CREATE_STREAM, "y").lower() not in ("n", "no", "false", "0")
        self._closed = False
        self._logs: dict[str, StreamLog] = {}

    @cached_property
    def connection(self) -> Connection:
        """Made on first use: eventsourcing also makes factories only for their mapper (a
        process application, for each application it follows), and never closes those."""
        if self._closed:
            raise ProgrammingError("this JetStream infrastructure factory is closed")
        return Connection(self._urls, self._timeout, name=f"athenaeum:{self.env.name}", key=self._key)

    def _log(self, config: dict[str, object], events_log: StreamLog | None = None) -> StreamLog:
        name = str(config["name"])
        if name not in self._logs:
            try:
                facts = self.connection.ensure_stream(config, self._create, keeps_history=events_log is None)
            except Exception:
                # The application being built fails with this, and nobody closes it: close the
                # connection now, not when garbage collection finds its loop already gone.
                self.close()
                raise
            self._logs[name] = StreamLog(self.connection.client, name, events_log, replicated=facts.replicas > 1,
                                         ledger_id=facts.ledger_id)
        return self._logs[name]

    @property
    def events_log(self) -> StreamLog:
        return self._log(self.events_config)

    def aggregate_recorder(self, purpose: str = "events") -> AggregateRecorder:
        if purpose == "snapshots":
            return JetStreamAggregateRecorder(self.connection, self._log(self.snapshots_config, self.events_log))
        return JetStreamAggregateRecorder(self.connection, self.events_log)

    def snapshots_recorder(self) -> JetStreamApplicationRecorder | None:
        """The snapshots as an auditor reads them, every message in order; None where no
        snapshot was ever stored (a reader makes no stream)."""
        name = str(self.snapshots_config["name"])
        info = self.connection.run(self.connection.client.stream_info(name))
        if "error" in info:
            return None
        return JetStreamApplicationRecorder(self.connection, self._log(self.snapshots_config, self.events_log))

    def application_recorder(self) -> ApplicationRecorder:
        cls = self._recorder_class(self.APPLICATION_RECORDER_TOPIC, JetStreamApplicationRecorder)
        return cls(self.connection, self.events_log)

    def tracking_recorder(
        self, tracking_recorder_class: type[JetStreamTrackingRecorder] | None = None
    ) -> JetStreamTrackingRecorder:
        cls = tracking_recorder_class or self._recorder_class(
            self.TRACKING_RECORDER_TOPIC, JetStreamTrackingRecorder
        )
        return cls(self.connection, self.events_log)

    def process_recorder(self) -> ProcessRecorder:
        cls = self._recorder_class(self.PROCESS_RECORDER_TOPIC, JetStreamProcessRecorder)
        return cls(self.connection, self.events_log)

    def _recorder_class(self, topic_variable: str, default: type) -> type:
        topic = self.env.get(topic_variable)
        return resolve_topic(topic) if topic else default

    def close(self) -> None:
        """Close the NATS connection and its loop thread; safe to call twice."""
        self._closed = True
        if "connection" in self.__dict__:
            self.connection.close()

    def __exit__(self, *exc_info: Any) -> None:
        super().__exit__(*exc_info)
        self.close()
