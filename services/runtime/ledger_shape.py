"""The ledger guards its own shape (DESIGN.md §13). At serve's start, whenever NATS announces
that one of its streams changed or went, once its nats-server was started again, and every
minute (every few seconds while NATS cannot answer), serve checks the ledger, its
snapshots, its timers and its views bucket against the shape it makes them in, mends what is
safe to mend (``jetstream.shape``: a limit lifted, a protection or subject restored) and
compares the ledger with its anchor, the latest checkpoint kept outside it (``Anchors``).
What it cannot mend stops serve: exit 3, and one line naming the drift.

Safe to mend: what drops or rewrites no stored message. Limits are lifted (one that has
dropped nothing yet then never will), deny delete and purge, atomic batches and direct gets
set again, the subjects and the layout of an empty stream restored, too few replicas raised.
The views bucket and the timers are derived (made again from the ledger), so a limit is also
set back there to the one they are made with. Not safe, or not possible: a sealed stream (NATS
cannot unseal one), another storage or retention, another layout, messages gone from the
ledger, a ledger shorter than its anchor or holding another checkpoint where the anchor says,
and read models ahead of the ledger. serve never makes an empty ledger where one existed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import msgspec
from eventsourcing.persistence import OperationalError, ProgrammingError

from athenaeum.events.ledger import CHECKPOINTS_ID, LedgerCheckpoint
from athenaeum.services.audit.checkpoints import Anchor, Anchors
from athenaeum.services.jetstream.client import STREAM_NOT_FOUND, JetStreamClient, StreamDrift
from athenaeum.services.jetstream.factory import DEFAULT_STREAM, JetStreamFactory, stream_config
from athenaeum.services.jetstream.messages import Stored
from athenaeum.services.jetstream.subjects import StreamSubjects
from athenaeum.services.views.bucket import bucket_stream
from athenaeum.services.views.projection import PROJECTION
from athenaeum.services.views.read_models import ReadModelStore

CHECK_EVERY = 60.0  # seconds between checks nothing announced
CHECK_AGAIN_AFTER = 2.0  # seconds before a check NATS could not answer is tried again
ADVISORIES = ("UPDATED", "DELETED")  # $JS.EVENT.ADVISORY.STREAM.<what>.<stream>
log = logging.getLogger(__name__)


class LedgerDrift(ProgrammingError):
    """The ledger's streams depart from their shape in a way serve may not mend: one line."""


def configured_ledger() -> tuple[str, int]:
    """The ledger's stream and replicas, as the services' store reads them from the environment."""
    return os.environ.get(JetStreamFactory.STREAM, DEFAULT_STREAM), int(os.environ.get(JetStreamFactory.REPLICAS, "1"))


def expected_streams(stream: str, replicas: int) -> list[tuple[dict[str, object], bool]]:
    """Each stream of the ledger as serve makes it, and whether it keeps history (its messages
    lost are history lost) rather than data made again from the ledger."""
    plain = {"storage": "file", "retention": "limits", "num_replicas": replicas}
    timers = plain | {"name": f"{stream}_TIMERS", "subjects": [f"{stream}_TIMERS.>"], "allow_msg_schedules": True}
    # As the bucket makes it: any other shape makes a KV client fail.
    views = bucket_stream(stream, replicas)
    return [(stream_config(stream, replicas, immutable=True), True),
            (stream_config(f"{stream}_SNAPSHOTS", replicas, immutable=True), False),
            (timers, False), (views, False)]


class LedgerGuard:
    def __init__(self, client: JetStreamClient, stream: str, replicas: int, anchors: Anchors,
                 views: ReadModelStore) -> None:
        self.client = client
        self.stream = stream
        self.expected = expected_streams(stream, replicas)
        self.anchors = anchors
        self.views = views
        self.drift: str | None = None  # why serve stopped, once it has
        self.verified = False  # whether the last check passed (serve is ready only while it has)
        self._changed = asyncio.Event()

    @classmethod
    async def open(cls, urls: Sequence[str], key: Path | None, stream: str, replicas: int, anchors: Anchors,
                   views: ReadModelStore) -> LedgerGuard:
        client = await JetStreamClient.connect(urls, 5.0, name="athenaeum:guard", key=key)
        return cls(client, stream, replicas, anchors, views)

    async def close(self) -> None:
        await self.client.close()

    async def check(self) -> None:
        """Mend what is safe to mend; ``LedgerDrift`` names what is not."""
        # Where the views are, read before where the ledger ends: the views only follow the
        # ledger, so read in this order they are never ahead of it unless it was cut.
        views = await asyncio.to_thread(self.views.position, PROJECTION)
        for config, keeps_history in self.expected:
            info = await self.client.stream_info(str(config["name"]))
            missing = info.get("error", {}).get("err_code") == STREAM_NOT_FOUND
            if "error" in info and not missing:
                raise OperationalError(f"stream {config['name']}: {info['error'].get('description')}")
            if config["name"] == self.stream:
                await self._against_anchor(None if missing else info, views)
            if missing:
                continue  # made by the service that uses it (the ledger: once the anchor allows)
            try:
                await self.client.mend_stream(config, info, keeps_history)
            except StreamDrift as drift:
                raise LedgerDrift(str(drift)) from None
        self.verified = True

    def check_soon(self) -> None:
        """Check again at once, and count the ledger unverified until then: the server under
        it started again, from its store on disk."""
        self.verified = False
        self._changed.set()

    async def watch(self, stop: asyncio.Event) -> asyncio.Task[None]:
        """From now on, check again whenever NATS announces a change to one of the streams, and
        every ``CHECK_EVERY`` seconds; on drift, say it, keep it in ``drift`` and set ``stop``."""
        nc = self.client.nc
        for what in ADVISORIES:
            for config, _ in self.expected:
                await nc.subscribe(f"$JS.EVENT.ADVISORY.STREAM.{what}.{config['name']}", cb=self._announced)
        await nc.flush()  # announced from here on
        self._changed.set()  # and whatever changed since the check at start: looked at once now
        return asyncio.create_task(self._watching(stop))

    async def _watching(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(asyncio.TimeoutError):  # a period, or an announcement
                await asyncio.wait_for(self._changed.wait(), CHECK_EVERY if self.verified else CHECK_AGAIN_AFTER)
            self._changed.clear()
            try:
                await self.check()
            except LedgerDrift as drift:
                self.verified, self.drift = False, str(drift)
                log.error("serve stops: %s", drift)
                stop.set()
            except OperationalError as error:  # NATS away for now: the next look tries again
                self.verified = False
                log.warning("could not check the ledger's shape: %s", error)
            except Exception:  # noqa: BLE001  the guard stays on watch; the next look tries again
                self.verified = False
                log.exception("checking the ledger's shape failed")

    async def _announced(self, msg: object) -> None:
        self._changed.set()

    async def _against_anchor(self, info: dict | None, views: int | None) -> None:
        """The ledger must reach its anchor and hold there the checkpoint the anchor records,
        and the read models (at ``views`` before ``info`` was read) must not be ahead of it."""
        kept = await asyncio.to_thread(self._latest)
        last = int((info or {}).get("state", {}).get("last_seq") or 0)
        name = self.stream
        if kept is not None:
            where, anchor = kept
            what = f"the checkpoint of its first {anchor.count:,} entries at position {anchor.checkpoint}"
            if info is None:
                raise LedgerDrift(f"there is no stream {name}, but the anchor in {where} records {what}: serve "
                                  "makes no empty ledger where one was; restore the stream from a backup, or move "
                                  f"{where} away to begin another ledger")
            if last < anchor.checkpoint:
                raise LedgerDrift(f"stream {name} ends at position {last}, before {what} that the anchor in {where} "
                                  "records: history was cut or the stream made again; restore it from a backup")
            if not _records(await self.client.leader_get(name, {"seq": anchor.checkpoint}), anchor):
                raise LedgerDrift(f"stream {name} does not hold at position {anchor.checkpoint} the checkpoint "
                                  f"(digest {anchor.sha256}) that the anchor in {where} records: the ledger was "
                                  "rewritten; restore it from a backup")
        if views is not None and views > last:
            raise LedgerDrift(f"the read models reflect position {views} of stream {name}, which ends at {last}: "
                              "the ledger was cut or made again; restore it from a backup, or move the read models "
                              "away to begin another ledger")

    def _latest(self) -> tuple[str, Anchor] | None:
        try:
            return self.anchors.latest()
        except ValueError as unreadable:
            raise LedgerDrift(str(unreadable)) from None


def _records(message: Stored | None, anchor: Anchor) -> bool:
    """Whether ``message`` is the checkpoint ``anchor`` says is there."""
    if message is None or message.subject != StreamSubjects(anchor.ledger).aggregate(CHECKPOINTS_ID):
        return False
    try:
        checkpoint = msgspec.json.decode(message.payload, type=LedgerCheckpoint)
    except msgspec.DecodeError:
        return False
    return (checkpoint.count, checkpoint.position, checkpoint.sha256) == (anchor.count, anchor.position, anchor.sha256)
