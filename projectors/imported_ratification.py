"""An imported ratification's folder written back: the original files byte for byte, and what
happened since under Athenaeum's rules laid over them (the manifest's new status, the log's
new lines, the votes cast since, the tally's records)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from athenaeum.events import Event
from athenaeum.events.ratification import ArtifactRatified, RatificationImported, VotesTallied
from athenaeum.projectors import ratification_records, vote_records

ARTIFACT, MANIFEST, LOG = "artifact.md", "manifest.yaml", "log.md"
_STATUS = re.compile(rb"(?m)^status:.*$")


def files(events: Sequence[Event]) -> dict[str, bytes]:
    """Each file's name in the folder, and its bytes."""
    imported = events[0]
    assert isinstance(imported, RatificationImported)
    written = {file.name: file.content for file in imported.files} | {ARTIFACT: imported.artifact.encode()}
    since = events[1:]
    if not since:
        return written
    if MANIFEST in written:
        status = ratification_records.status_of(events).encode()
        written[MANIFEST] = _STATUS.sub(lambda _: b"status: " + status, written[MANIFEST], count=1)
    log = written.get(LOG, b"")
    written[LOG] = log + (b"\n" if log and not log.endswith(b"\n") else b"") + "".join(
        ratification_records.log_lines(since)).encode()
    # The tally's records, when the tally came since; the ratification, whenever it came since.
    for record, after in (("decomposition", VotesTallied), ("ratified", ArtifactRatified)):
        if any(isinstance(event, after) for event in since):
            try:
                written[f"{record}.md"] = ratification_records.render(record, events).encode()
            except ratification_records.NotRendered:
                continue
    return written | {name: text.encode() for name, text in vote_records.files(imported.key, since).items()}
