"""The ledger as JSON Lines, and its offline verification.

Each line is one event message: its position, subject, time, the headers that carry meaning,
the exact stored payload, and the decoded event for reading. ``verify`` recomputes the running
digest from the lines alone and checks every checkpoint among them, with no server at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import msgspec

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.events.ledger import LedgerCheckpoint
from athenaeum.services.audit.auditor import Finding
from athenaeum.services.audit.digest import Digest

READ_BATCH = 1000
_CHECKPOINT = LedgerCheckpoint.__struct_config__.tag  # type: ignore[attr-defined]


def export(app: AthenaeumApplication, since: int = 1, until: int | None = None,
           until_time: datetime | None = None) -> Iterator[bytes]:
    """The lines of an export; the first one says where it starts and the digest before it, the
    last one the digest at its end. A command is atomic: one whose first event is within ``until`` goes out whole."""
    digest = Digest()
    start = 1
    header_sent = False
    command: tuple[Any, Any] | None = None  # of the last event exported
    past_the_end = False
    while not past_the_end:
        batch = app.recorder.select_notifications(start, READ_BATCH)
        for n in batch:
            payload = bytes(n.state)
            event = _decoded(payload)
            this = (event.get("command_id"), event.get("timestamp")) if event else None
            past_the_end = (until_time is not None and event is not None
                            and msgspec.convert(event.get("timestamp"), datetime) > until_time) or (
                until is not None and n.id > until and (this is None or this != command))
            if past_the_end:
                break
            command = this
            if n.id >= since and not header_sent:
                yield _header(since, digest)
                header_sent = True
            digest.update(n.id, str(n.originator_id), n.originator_version, n.topic, payload)
            if n.id >= since:
                yield _line({
                    "position": n.id,
                    "subject": app.recorder.log.subjects.aggregate(n.originator_id),  # type: ignore[attr-defined]
                    "time": event.get("timestamp") if event else None,
                    "originator_id": str(n.originator_id),
                    "originator_version": n.originator_version,
                    "tag": n.topic,
                    "payload": payload.decode(),
                    "event": event,
                })
        if len(batch) < READ_BATCH:
            break
        start = batch[-1].id + 1
    if not header_sent:
        yield _header(since, digest)
    # An export cut short (a transfer broken off, ``head``) ends without this line.
    yield _line({"end": {"count": digest.count, "sha256": digest.sha256}})


def verify(lines: Iterable[bytes]) -> tuple[list[Finding], int]:
    """Findings for the export's lines, and how many events they hold."""
    findings: list[Finding] = []
    digest: Digest | None = None
    end: Digest | None = None
    ends = False
    digests: dict[int, tuple[str, int]] = {}
    events = checkpoints = 0
    previous = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            line: dict[str, Any] = msgspec.json.decode(raw)
            if digest is None and "export" in line:
                digest = Digest(str(line["export"]["sha256"]), int(line["export"]["count"]), 0)
                ends = line["export"].get("ends") is True
                continue
            if digest is not None and end is None and "end" in line:
                end = Digest(str(line["end"]["sha256"]), int(line["end"]["count"]), 0)
                continue
            position, tag = int(line["position"]), str(line["tag"])
            payload = str(line["payload"]).encode()
            originator_id, version = str(line["originator_id"]), int(line["originator_version"])
        except (msgspec.DecodeError, KeyError, TypeError, ValueError) as error:
            findings.append(Finding("HARD", "undecodable", "export", f"line {number}", None, f"not an export line: {error}"))
            continue
        if digest is None:
            findings.append(Finding("HARD", "no_start", "export", f"line {number}", None,
                                    "the export does not begin with its export line"))
            digest = Digest()
        if end is not None:
            findings.append(Finding("HARD", "after_end", "export", originator_id, position,
                                    f"line {number} comes after the export's end line"))
        if position <= previous:
            findings.append(Finding("HARD", "out_of_order", "export", originator_id, position,
                                    f"line {number}: position {position} does not follow {previous}"))
        previous = position
        if line.get("event") != _decoded(payload) or line.get("time") != (_decoded(payload) or {}).get("timestamp"):
            findings.append(Finding("HARD", "event_mismatch", "export", originator_id, position,
                                    f"line {number}: the decoded event or time is not what the payload holds"))
        events += 1
        digest.update(position, originator_id, version, tag, payload)
        digests[digest.count] = (digest.sha256, position)
        if tag == _CHECKPOINT:
            checkpoints += 1
            try:
                checkpoint = msgspec.json.decode(payload, type=LedgerCheckpoint)
            except msgspec.DecodeError as error:
                findings.append(Finding("HARD", "undecodable", "ledger", originator_id, position, str(error)))
                continue
            computed = digests.get(checkpoint.count)
            if computed is None and checkpoint.count <= digest.count - events:
                continue  # covers only events before this export began
            if computed != (checkpoint.sha256, checkpoint.position):
                findings.append(Finding("HARD", "checkpoint_mismatch", "ledger", originator_id, position,
                                        f"the lines before this checkpoint (the first {checkpoint.count} events) do "
                                        "not give its digest: an earlier line was changed, removed or added"))
            digests = {count: value for count, value in digests.items() if count > checkpoint.count}
    findings += _ending(digest, end, ends)
    if checkpoints == 0 and events:
        findings.append(Finding("WARN", "no_checkpoint", "export", "*", None, "the export holds no checkpoint to verify"))
    return findings, events


def _ending(digest: Digest | None, end: Digest | None, ends: bool) -> list[Finding]:
    """What the export's first and last lines say of it as a whole."""
    if digest is None:
        return [Finding("HARD", "no_start", "export", "*", None, "not an export: there is no export line")]
    if end is None and not ends:
        return [Finding("WARN", "no_end_line", "export", "*", None,
                        "an export from before exports had end lines: whether it is whole cannot be told")]
    if end is None:
        return [Finding("HARD", "truncated", "export", "*", None,
                        "the export has no end line: it was cut short, or the end line was removed")]
    if (end.count, end.sha256) != (digest.count, digest.sha256):
        return [Finding("HARD", "end_mismatch", "export", "*", None,
                        f"the lines give {digest.count} events and a digest other than the end line's "
                        f"({end.count} events): a line was changed, removed or added")]
    return []


def _header(since: int, digest: Digest) -> bytes:
    # ``ends``: an end line closes this export (exports made before there were end lines
    # cannot be told whole, and verify only warns of them).
    return _line({"export": {"since": since, "count": digest.count, "sha256": digest.sha256, "ends": True}})


def _decoded(payload: bytes) -> dict[str, Any] | None:
    """The payload as JSON, or None when it is not (the audit reports it; export keeps it)."""
    try:
        decoded = msgspec.json.decode(payload)
    except msgspec.DecodeError:
        return None
    return decoded if isinstance(decoded, dict) else None


def _line(body: dict[str, Any]) -> bytes:
    return msgspec.json.encode(body) + b"\n"
