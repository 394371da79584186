"""The ledger's own events: checkpoints of a running SHA-256 over its history, so an edit,
a deletion or a truncation before a checkpoint is detectable, offline too."""

from __future__ import annotations

from athenaeum.events.base import Event, family_id
from athenaeum.events.commands import Command

CHECKPOINTS_ID = family_id("ledger", "checkpoints")


class LedgerCheckpoint(Event, tag="LedgerCheckpoint"):
    count: int  # messages covered: the first ``count`` messages of the ledger's stream
    position: int  # the stream position of the last message covered
    sha256: str  # the running digest after it (see services.audit.digest)


class RecordCheckpoint(Command, frozen=True):
    """Sent by the ledger's own checkpoint writer, never by an agent: the digest it computed."""

    count: int
    position: int
    sha256: str
