"""The checkpoint writer: runs in the command service's process (never in clients), follows
the ledger, and every N entries records a ``LedgerCheckpoint`` of the running digest, through
the command handler like any command; and one more at shutdown. Replicas write the same
checkpoint as the same command: one appends it, the others get its answer."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.ledger import Checkpoints
from athenaeum.events.ledger import CHECKPOINTS_ID, RecordCheckpoint
from athenaeum.services.audit.digest import Digest
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.credentials import LEDGER_ACTOR, SERVICE
from athenaeum.services.jetstream.entries import Entry

DEFAULT_EVERY = 1000
READ_BATCH = 1000
POLL_EVERY = 1.0  # seconds between looks at the ledger's head
log = logging.getLogger(__name__)


class CheckpointWriter:
    def __init__(self, app: AthenaeumApplication, handler: CommandHandler, last: Checkpoints | None,
                 every: int = DEFAULT_EVERY) -> None:
        """``app``: the ledger, followed; ``handler``: on the running loop, which records the
        checkpoints; ``last``: the latest checkpoint, from which the digest goes on."""
        self.app = app
        self.handler = handler
        self.every = every
        self.digest = Digest(last.sha256, last.count, last.position) if last else Digest()
        self.written = last.count if last else 0
        self._loop = asyncio.get_running_loop()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="athenaeum-checkpoints", daemon=True)

    @classmethod
    async def start(cls, app: AthenaeumApplication, handler: CommandHandler, every: int = DEFAULT_EVERY,
                    ) -> CheckpointWriter:
        writer = cls(app, handler, await handler.load(CHECKPOINTS_ID), every)
        writer._thread.start()
        return writer

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.to_thread(self._thread.join, 10)
        if not self._thread.is_alive():
            await asyncio.to_thread(self._digest_through, None)  # at shutdown: to the ledger's end
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
        if reply.ok or (reply.error is not None and reply.error.code == "invalid"):  # a replica checkpointed past it
            self.written = max(self.written, command.count)
        elif reply.error is not None and reply.error.code == "idempotency_key_reused":
            log.error("checkpoint %d disagrees with this replica's digest: history differs", command.count)
        else:
            log.warning("checkpoint %d: %s", command.count, reply.error)
