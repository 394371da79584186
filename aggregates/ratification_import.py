"""An original ratification folder imported (``athenaeum import``): recorded as found, the
rules it breaks marked, never refused for them; from then on it lives under the rules like any
other (an open one takes the remaining votes and is tallied at its imported ``expires_at``)."""

from __future__ import annotations

from datetime import timezone

from athenaeum.aggregates.imported import recorded
from athenaeum.aggregates.ratification_state import Ratification
from athenaeum.aggregates.rules import ARTIFACT_LIMIT, Context, Invalid, Stamp, require_schedulable, require_text
from athenaeum.events import Event
from athenaeum.events.imported import SourceFile
from athenaeum.events.ratification import RatificationImported
from athenaeum.events.ratification_commands import ImportRatification

ARTIFACT_FILE = "artifact.md"


def import_ratification(state: Ratification | None, command: ImportRatification, context: Context) -> list[Event]:
    require_text(command.artifact, "artifact", ARTIFACT_LIMIT)
    if any(file.name == ARTIFACT_FILE for file in command.files):
        raise Invalid(f"files: {ARTIFACT_FILE} is the artifact, given as such", "files")
    found = recorded([SourceFile(name=ARTIFACT_FILE, content=command.artifact.encode()), *command.files],
                     False if state is None else state.imported_sha256, f"ratification {command.topic!r}", "topic")
    if found is None:
        return []
    (artifact, *others), digest = found
    require_schedulable(command.expires_at, "expires_at")
    return [
        Stamp(command.topic, 0, context)(
            RatificationImported,
            initiator=command.initiator,
            artifact=command.artifact,
            artifact_sha256=artifact.sha256,
            artifact_origin=command.artifact_origin,
            roster=tuple(command.roster),
            mode=command.mode,
            expires_at=command.expires_at.astimezone(timezone.utc),
            supersedes=command.supersedes,
            status=command.status,
            votes=tuple(command.votes),
            source=command.source,
            content_sha256=digest,
            files=tuple(others),
            findings=tuple(command.findings),
        )
    ]
