"""The views bucket, checked by content against the views the replay rebuilds.

Each entry says the ledger position its value reflects, and must hold what the views held
there: HARD when it holds anything else, or claims a position the ledger has not reached (no
projector wrote it). The bucket is read before the replay, so every entry a projector wrote is
within the ledger the replay reads. An entry the views changed since, or a document the bucket
has yet to hold, is a put still on its way (or one a failure left for serve's reconciliation):
INFO, as live views that move on while the audit reads them are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from eventsourcing.persistence import OperationalError

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.services.audit.findings import Finding
from athenaeum.services.views.bucket import bucket_of, kv_key
from athenaeum.services.views.bucket_entries import Entry, entries_got

SHOWN = 5  # keys named in a finding that counts more


class BucketCheck:
    def __init__(self, entries: Mapping[str, Entry] | None, unread: str = "") -> None:
        """``entries``: the bucket's, by key; None when it could not be read (``unread`` says why)."""
        self.entries = entries
        self.unread = unread
        self.held_at: dict[str, Any] = {}  # by key: the document the views held at the position its entry claims
        self.changed_at: dict[str, int] = {}  # by key: the position of the views' last change to it
        self._names: dict[tuple[str, str], str] = {}  # each view key's in the bucket, escaped once

    @classmethod
    def read(cls, app: AthenaeumApplication) -> BucketCheck:
        """The bucket of the ledger ``app`` reads, read now: before the replay."""
        log = app.recorder.log  # type: ignore[attr-defined]
        bucket = bucket_of(log.stream)
        try:
            entries = app.factory.connection.run(entries_got(log.client, bucket))  # type: ignore[attr-defined]
        except OperationalError as error:
            return cls(None, f"the views bucket {bucket} could not be read: {error}")
        return cls(entries, "" if entries is not None else f"there is no views bucket {bucket}")

    def changed(self, view: str, key: str, position: int, document: Any) -> None:
        """The replay's views changed ``key`` of ``view`` at ``position``."""
        name = self._names.get((view, key)) or self._names.setdefault((view, key), kv_key(view, key))
        self.changed_at[name] = position
        entry = self.entries.get(name) if self.entries is not None else None
        if entry is not None and position <= entry.position:
            self.held_at[name] = document

    def findings(self, views: Mapping[tuple[str, str], Any], ledger_end: int) -> list[Finding]:
        """What the bucket holds unlike ``views``, the views the ledger gives through ``ledger_end``."""
        if self.entries is None:
            return [Finding("INFO", "bucket_not_compared", "views", "*", None, self.unread)]
        documents = {kv_key(view, key): document for (view, key), document in views.items()}
        findings, behind = [], []
        for name in sorted(self.entries.keys() | documents.keys()):
            entry = self.entries.get(name)
            if entry is None:
                behind.append(name)
            elif entry.position > ledger_end:
                findings.append(Finding("HARD", "bucket_differs", "views", name, entry.position,
                                        f"the bucket's entry claims position {entry.position}, which the ledger, "
                                        f"ending at {ledger_end}, has not reached: no projector wrote it"))
            elif not _holds(entry.value, documents.get(name) if entry.position == 0 else self.held_at.get(name)):
                at = f"at position {entry.position}, which it claims" if entry.position else "(it claims no position)"
                findings.append(Finding("HARD", "bucket_differs", "views", name, entry.position or None,
                                        f"the bucket's entry is not what the views held {at}"))
            elif self.changed_at.get(name, 0) > entry.position:
                behind.append(name)
        if behind:
            shown = ", ".join(behind[:SHOWN]) + (", ..." if len(behind) > SHOWN else "")
            findings.append(Finding("INFO", "bucket_behind", "views", "*", None,
                                    f"the bucket has yet to take the views' latest for {len(behind)} keys ({shown}): "
                                    "puts on their way, or ones serve's reconciliation writes"))
        return findings


def _holds(value: bytes | None, document: Any) -> bool:
    """Whether an entry's ``value`` is ``document`` (None: none), as JSON says it."""
    if value is None or document is None:
        return value is None and document is None
    try:
        return msgspec.json.decode(value) == msgspec.json.decode(msgspec.json.encode(document))
    except msgspec.DecodeError:
        return False
