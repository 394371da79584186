"""The checkpoint writer: runs in the command service's process (never in clients), follows
the ledger, and every N entries records a ``LedgerCheckpoint`` of the running digest, through
the command handler like any command; and one more at shutdown. Replicas write the same
checkpoint as the same command: one appends it, the others get its answer.

The latest checkpoint it appended is also kept outside the ledger, as its anchor: in the data
dir and in the read-model store. A ledger shorter than its anchor, or holding another digest
there, was cut or made again: serve refuses it, and the audit reports it."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import msgspec

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.ledger import Checkpoints
from athenaeum.events.ledger import CHECKPOINTS_ID, RecordCheckpoint
from athenaeum.services.audit.digest import Digest
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.credentials import LEDGER_ACTOR, SERVICE
from athenaeum.services.jetstream.entries import Entry
from athenaeum.services.views.read_models import ReadModelStore

DEFAULT_EVERY = 1000
ANCHORS = "anchors"  # the data dir's folder of anchors, one file per ledger
READ_BATCH = 1000
POLL_EVERY = 1.0  # seconds between looks at the ledger's head
log = logging.getLogger(__name__)


class Anchor(msgspec.Struct, frozen=True, kw_only=True):
    """A ledger's latest checkpoint, kept outside it: the digest of its first ``count`` entries,
    through ``position``, which the ``LedgerCheckpoint`` at ``checkpoint`` records."""

    ledger: str  # the stream's name
    count: int
    position: int
    sha256: str
    checkpoint: int


class Anchors:
    """Where a ledger's anchor is kept: a file in the data dir and the read-model store, each
    of which may be missing (a projector elsewhere, a store rebuilt); the furthest counts."""

    def __init__(self, ledger: str, data_dir: Path | None, store: ReadModelStore | None) -> None:
        self.ledger = ledger
        self.file = data_dir / ANCHORS / f"{ledger}.json" if data_dir is not None else None
        self.store = store

    def keep(self, anchor: Anchor) -> None:
        """Keep ``anchor`` unless a further one is kept: written whole, then renamed, so a crash
        leaves the one before."""
        encoded = msgspec.json.encode(anchor)
        if self.file is not None and ((kept := self._in_file()) is None or kept.count < anchor.count):
            self.file.parent.mkdir(parents=True, exist_ok=True)
            staged = self.file.with_suffix(".new")
            with staged.open("wb") as out:
                out.write(encoded + b"\n")
                out.flush()
                os.fsync(out.fileno())
            staged.replace(self.file)
        if self.store is not None:
            self.store.keep_anchor(self.ledger, anchor.count, encoded.decode())

    def kept(self) -> list[tuple[str, Anchor]]:
        """Each anchor kept, with where: the file's path, or the read models' place."""
        found = []
        if (in_file := self._in_file()) is not None:
            found.append((str(self.file), in_file))
        if self.store is not None and (stored := self.store.anchor(self.ledger)) is not None:
            found.append((self.store.place, _decode(stored.encode(), self.store.place)))
        return found

    def latest(self) -> tuple[str, Anchor] | None:
        """The furthest anchor kept, and where."""
        return max(self.kept(), key=lambda kept: kept[1].count, default=None)

    def _in_file(self) -> Anchor | None:
        try:
            return None if self.file is None else _decode(self.file.read_bytes(), str(self.file))
        except FileNotFoundError:
            return None


def _decode(document: bytes, where: str) -> Anchor:
    try:
        return msgspec.json.decode(document, type=Anchor)
    except msgspec.DecodeError as error:  # no anchor to compare with is no anchor that passed
        raise ValueError(f"the ledger's anchor in {where} cannot be read ({error}): restore it, or move it away "
                         "knowingly") from None


class CheckpointWriter:
    def __init__(self, app: AthenaeumApplication, handler: CommandHandler, last: Checkpoints | None,
                 every: int = DEFAULT_EVERY, anchors: Anchors | None = None) -> None:
        """``app``: the ledger, followed; ``handler``: on the running loop, which records the
        checkpoints; ``last``: the latest checkpoint, from which the digest goes on;
        ``anchors``: where each checkpoint appended is kept outside the ledger too."""
        self.app = app
        self.handler = handler
        self.every = every
        self.anchors = anchors
        self.digest = Digest(last.sha256, last.count, last.position) if last else Digest()
        self.written = last.count if last else 0
        self._loop = asyncio.get_running_loop()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="athenaeum-checkpoints", daemon=True)

    @classmethod
    async def start(cls, app: AthenaeumApplication, handler: CommandHandler, every: int = DEFAULT_EVERY,
                    anchors: Anchors | None = None) -> CheckpointWriter:
        writer = cls(app, handler, await handler.load(CHECKPOINTS_ID), every, anchors)
        writer._thread.start()
        return writer

    async def stop(self, last: bool = True) -> None:
        """Stop following the ledger, and checkpoint it to its end unless told not to (``last``:
        a ledger found cut must not have its remains checkpointed, and so anchored)."""
        self._stop.set()
        await asyncio.to_thread(self._thread.join, 10)
        if last and not self._thread.is_alive():
            try:
                await asyncio.to_thread(self._digest_through, None)  # at shutdown: to the ledger's end
            except Exception:  # noqa: BLE001  a ledger gone or away: the rest of serve still stops
                log.exception("no checkpoint at shutdown: the ledger could not be read")
                return
            if self.digest.count > self.written:
                await self._write()

    def _run(self) -> None:
        """Look at the ledger's head now and then: each entry takes a position of its own, so the
        next checkpoint cannot be due before as many positions have passed as entries are missing
        for it. Only then are the entries read, a batch at a time; a checkpoint is no deadline."""
        while not self._stop.wait(POLL_EVERY):  # a period, not a wait on a condition
            try:
                head = self._head()
                if head >= self.digest.position + self.every - self.digest.count % self.every:
                    self._digest_through(head, self._write_soon)
            except Exception:  # noqa: BLE001  the ledger is away for now: the next look tries again
                log.exception("the checkpoint writer could not read the ledger")

    def _digest_through(self, position: int | None, write: Callable[[], None] = lambda: None) -> None:
        """Chain every entry after the digest's up to ``position`` (None: the last there is),
        checkpointing each ``every``-th."""
        while position is None or self.digest.position < position:
            batch = self.app.recorder.select_messages(self.digest.position + 1, READ_BATCH)  # type: ignore[attr-defined]
            for message in batch:
                if position is not None and message.seq > position:
                    return
                self.digest.update(Entry.of(message))
                if self.digest.count % self.every == 0:
                    write()
            if len(batch) < READ_BATCH:
                return

    def _head(self) -> int:
        return self.app.recorder.max_notification_id() or 0

    def _write_soon(self) -> None:
        asyncio.run_coroutine_threadsafe(self._write(), self._loop).result(timeout=60)

    async def _write(self) -> None:
        command = RecordCheckpoint(count=self.digest.count, position=self.digest.position, sha256=self.digest.sha256,
                                   command_id=f"checkpoint:{self.digest.count}")
        reply = await self.handler.send(command, LEDGER_ACTOR, SERVICE)
        if reply.error is not None and reply.error.code == "invalid":
            latest = await self.handler.load(CHECKPOINTS_ID)
            if latest is not None and latest.position > await asyncio.to_thread(self._head):
                # Past the ledger's end: no replica wrote that. The audit reports it; checkpoints stop.
                log.error("the latest checkpoint claims %d messages, past the ledger's end: it is forged, and "
                          "checkpoints cannot go on after it", latest.count)
                return
        if reply.ok and reply.position is not None and self.anchors is not None:
            anchor = Anchor(ledger=self.anchors.ledger, count=command.count, position=command.position,
                            sha256=command.sha256, checkpoint=reply.position)
            try:
                await asyncio.to_thread(self.anchors.keep, anchor)
            except Exception:  # noqa: BLE001  the ledger holds it; only the guard against its loss is weaker
                log.exception("checkpoint %d could not be kept outside the ledger", command.count)
        if reply.ok or (reply.error is not None and reply.error.code == "invalid"):  # a replica checkpointed past it
            self.written = max(self.written, command.count)
        elif reply.error is not None and reply.error.code == "idempotency_key_reused":
            log.error("checkpoint %d disagrees with this replica's digest: history differs", command.count)
        else:
            log.warning("checkpoint %d: %s", command.count, reply.error)
