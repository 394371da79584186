"""The views as the audit rebuilds them, one event after another as the projector service
applies them: what the live views and the bucket are compared with, and the fleet's activity
as it stood at each position, on which commands that weigh it are decided again."""

from __future__ import annotations

import bisect
from typing import Any

import msgspec

from athenaeum.aggregates.context import Member
from athenaeum.events import Event, family_of_id
from athenaeum.projectors import fleet_activity
from athenaeum.projectors.registry import PROJECTORS
from athenaeum.projectors.views import project_all
from athenaeum.services.audit.bucket_check import BucketCheck
from athenaeum.services.audit.findings import Finding


class RebuiltViews:
    def __init__(self, bucket: BucketCheck | None = None) -> None:
        self.documents: dict[tuple[str, str], dict[str, Any]] = {}
        self.bucket = bucket
        # Each agent's activity document after each change, by position: a command records
        # where it read the fleet's activity, and is decided again on the fleet as it was there.
        self.activity: dict[str, tuple[list[int], list[dict[str, Any] | None]]] = {}

    def apply(self, position: int, event: Event) -> Finding | None:
        """The changes ``event`` makes; a finding when a view cannot take it."""
        try:
            changes = project_all(PROJECTORS, event, lambda view, key: self.documents.get((view, key)))
        except Exception as error:  # noqa: BLE001  as the projector service, which skips it too
            return Finding("HARD", "projector_failed", family_of_id(event.originator_id), event.key, position,
                           f"a view cannot take this {event.tag}: {error!r}")
        for change in changes:
            if change.document is None:
                self.documents.pop((change.view, change.key), None)
            else:
                self.documents[(change.view, change.key)] = change.document
            if self.bucket is not None:
                self.bucket.changed(change.view, change.key, position, change.document)
            if change.view == fleet_activity.VIEW:
                positions, documents = self.activity.setdefault(change.key, ([], []))
                positions.append(position)
                documents.append(change.document)
        return None

    def members(self, as_of: int | None = None) -> list[Member]:
        """The fleet's agents as the views had them after position ``as_of`` (by default, now).
        A document that is no agent's (forged history, reported where it was read) counts none."""
        members = []
        for name in sorted(self.activity):
            positions, documents = self.activity[name]
            at = len(positions) if as_of is None else bisect.bisect_right(positions, as_of)
            agent = documents[at - 1] if at else None
            try:
                if agent is not None and fleet_activity.in_consensus(agent):
                    members.append(msgspec.convert(agent, Member))
            except (KeyError, TypeError, msgspec.ValidationError):
                continue
        return members
