"""The ledger's own events: checkpoints of a running SHA-256 over its history, so an edit,
a deletion or a truncation before a checkpoint is detectable, offline too."""

from __future__ import annotations

from athenaeum.events.base import Event, family_id

CHECKPOINTS_ID = family_id("ledger", "checkpoints")


class LedgerCheckpoint(Event, tag="LedgerCheckpoint"):
    count: int  # events covered: the first ``count`` events of the ledger
    position: int  # the stream position of the last event covered
    sha256: str  # the running digest after it (see services.ledger_digest)
