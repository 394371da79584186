"""The ledger as JSON Lines, and its offline verification.

Each line is one entry of the stream, in order: its position, subject, the headers that carry
meaning (an event's version and tag, the record of the command that appended it), the exact
stored payload, and, for reading, the decoded event and command. ``verify`` recomputes the
running digest from the lines alone, checks every checkpoint among them and the end line, and
that what each line says it decodes to is what its bytes hold, and audits the ledger they hold
as ``audit`` does, every command decided again: no server at all.
"""

from __future__ import annotations

import base64
import binascii
import collections
import itertools
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import msgspec
from eventsourcing.persistence import JSONTranscoder

from athenaeum.aggregates.application import AthenaeumApplication, EventMapper
from athenaeum.events.ledger import LedgerCheckpoint
from athenaeum.services.audit.auditor import Audit, Reading
from athenaeum.services.audit.findings import Finding
from athenaeum.services.audit.proofs import Proofs
from athenaeum.services.audit.commands import Appended
from athenaeum.services.audit.digest import SHA256_TEXT, Digest
from athenaeum.services.jetstream.entries import Entry
from athenaeum.services.jetstream.factory import LAYOUT

READ_BATCH = 1000
_CHECKPOINT = LedgerCheckpoint.__struct_config__.tag  # type: ignore[attr-defined]


def export(app: AthenaeumApplication, since: int = 1, until: int | None = None,
           until_time: datetime | None = None) -> Iterator[bytes]:
    """The lines of an export; the first one says where it starts and the digest before it, the
    last one the digest at its end. A command is atomic: one whose first event is within
    ``until`` goes out whole (its events share its token, its marker follows them)."""
    digest = Digest()
    ledger_id: str = app.recorder.log.ledger_id  # type: ignore[attr-defined]  # what signatures name
    start = 1
    header_sent = False
    command: Appended | None = None  # the one the last entry exported belongs to
    past_the_end = False
    while not past_the_end:
        batch = app.recorder.select_messages(start, READ_BATCH)  # type: ignore[attr-defined]
        for message in batch:
            entry = Entry.of(message)
            event = _decoded(entry.payload) if entry.kind == "event" else None
            continuing = command is not None and command.continued_by(entry)
            moment = _moment(event) if until_time is not None else None
            past_the_end = not continuing and (
                (until is not None and entry.position > until)
                or (until_time is not None and moment is not None and moment > until_time))
            if past_the_end:
                break
            if continuing and command is not None:
                command.take(entry)
            else:
                command = Appended.starting(entry, None) if entry.kind == "event" and entry.carries_command else None
            if entry.position >= since and not header_sent:
                yield _header(since, digest, ledger_id)
                header_sent = True
            digest.update(entry)
            if entry.position >= since:
                yield _line(_described(entry, event))
        if len(batch) < READ_BATCH:
            break
        start = batch[-1].seq + 1
    if not header_sent:
        yield _header(since, digest, ledger_id)
    # An export cut short (a transfer broken off, ``head``) ends without this line.
    yield _line({"end": {"count": digest.count, "sha256": digest.sha256}})


def _described(entry: Entry, event: dict[str, Any] | None) -> dict[str, Any]:
    line: dict[str, Any] = {"position": entry.position, "subject": entry.subject, "kind": entry.kind,
                            "headers": entry.headers, **_payload(entry.payload)}
    if entry.kind == "event":
        line |= {"time": event.get("timestamp") if event else None, "tag": entry.topic, "event": event}
        originator = entry.originator()
        if originator is not None:
            line |= {"originator_id": originator[0], "originator_version": originator[1]}
    record = entry.record if entry.kind == "event" else entry.payload if entry.kind == "marker" else None
    if record is not None:
        line["command"] = _decoded(record)
    return line


def verify(lines: Iterable[bytes]) -> tuple[list[Finding], int]:
    """Findings for the export's lines, and how many entries they hold. An export of the whole
    ledger (from position 1) is also audited as ``audit`` audits a live one, offline: each
    command decided again on the state before it must give the events its lines hold. (Anyone
    can recompute an export's digests; nobody can make a signed command decide otherwise.)"""
    checked = _Checked()
    entries = checked.entries(lines)
    first = next(entries, None)
    decided: list[Finding] = []
    if first is not None and checked.from_the_start:
        rest = itertools.chain([first], entries)
        audit = Audit(None, reading=Reading(lambda: rest, EventMapper(JSONTranscoder()), checked.ledger_id))
        decided = [finding for finding in audit.run().findings if finding.severity == "HARD"]
    else:
        collections.deque(entries, maxlen=0)  # the lines' own checks, to the end
    findings = checked.finish()
    said = {(finding.code, finding.position) for finding in findings}
    findings += [finding for finding in decided if (finding.code, finding.position) not in said]
    if first is not None and not checked.from_the_start:
        findings.append(Finding("WARN", "not_decided_again", "export", "*", None,
                                f"an export from position {checked.since}: its commands cannot be decided again, "
                                "nor who holds which key or token be known, without the history before it (export "
                                "the whole ledger for that); each signature is checked against the key it names"))
    return findings, checked.count


class _Checked:
    """What the lines alone say: each is what it claims to hold, in order, signed where it
    must be, chained into the digests its checkpoints and its end line give."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.digest: Digest | None = None
        self.end: Digest | None = None
        self.digests: dict[int, tuple[str, int]] = {}
        self.count = self.checkpoints = self.previous = 0
        self.proofs = Proofs()
        self.since = 1
        self.from_the_start = True  # its export line chains its digest from no entry before it
        self.ledger_id = ""

    def entries(self, lines: Iterable[bytes]) -> Iterator[Entry]:
        """Each line's entry, once checked; lines that are none are findings instead."""
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                line: dict[str, Any] = msgspec.json.decode(raw)
                if self.digest is None and "export" in line:
                    self.digest = _start(line["export"], number, self.findings)
                    self.ledger_id = self.proofs.ledger_id = str(line["export"].get("ledger", ""))
                    # An export before positions were checked could say 0 for the ledger's start.
                    self.since = max(int(line["export"].get("since", 1)), 1)
                    # Whether its commands are decided again goes by the digest it starts from,
                    # which the lines must chain to their end, not by what it says of itself.
                    self.from_the_start = self.digest.count == 0
                    self.proofs.partial = not self.from_the_start
                    if (self.since == 1) != self.from_the_start:
                        self.findings.append(Finding(
                            "HARD", "start_mismatch", "export", f"line {number}", None,
                            f"the export line says it starts at position {self.since} after {self.digest.count} "
                            "entries: only an export from position 1 starts after none"))
                    continue
                if self.digest is not None and self.end is None and "end" in line:
                    self.end = Digest(str(line["end"]["sha256"]), int(line["end"]["count"]), 0)
                    continue
                entry = Entry.made(int(line["position"]), str(line["subject"]), _headers(line["headers"]),
                                   _bytes_of(line))
            except (msgspec.DecodeError, KeyError, TypeError, ValueError, binascii.Error) as error:
                self.findings.append(Finding("HARD", "undecodable", "export", f"line {number}", None,
                                             f"not an export line: {error}"))
                continue
            self._check(number, line, entry)
            yield entry

    def _check(self, number: int, line: dict[str, Any], entry: Entry) -> None:
        findings = self.findings
        if self.digest is None:
            findings.append(Finding("HARD", "no_start", "export", f"line {number}", None,
                                    "the export does not begin with its export line"))
            self.digest = Digest()
        if self.end is not None:
            findings.append(Finding("HARD", "after_end", "export", entry.subject, entry.position,
                                    f"line {number} comes after the export's end line"))
        if self.count == 0 and entry.position != self.since:
            findings.append(Finding("HARD", "start_mismatch", "export", entry.subject, entry.position,
                                    f"line {number}: the export line says it starts at position {self.since}, "
                                    f"and its first entry is at {entry.position}"))
        if entry.position <= self.previous:
            findings.append(Finding("HARD", "out_of_order", "export", entry.subject, entry.position,
                                    f"line {number}: position {entry.position} does not follow {self.previous}"))
        self.previous = entry.position
        if _described(entry, _decoded(entry.payload) if entry.kind == "event" else None) != line:
            findings.append(Finding("HARD", "line_mismatch", "export", entry.subject, entry.position,
                                    f"line {number}: what it says it holds (the event, the command, the time) is "
                                    "not what its bytes and headers hold"))
        self.count += 1
        findings += self.proofs.check(entry)
        digest = self.digest
        digest.update(entry)
        self.digests[digest.count] = (digest.sha256, entry.position)
        if entry.kind == "event" and entry.topic == _CHECKPOINT:
            self.checkpoints += 1
            try:
                checkpoint = msgspec.json.decode(entry.payload, type=LedgerCheckpoint)
            except msgspec.DecodeError as error:
                findings.append(Finding("HARD", "undecodable", "ledger", entry.subject, entry.position, str(error)))
                return
            computed = self.digests.get(checkpoint.count)
            if computed is None and checkpoint.count <= digest.count - self.count:
                return  # covers only entries before this export began
            if computed != (checkpoint.sha256, checkpoint.position):
                findings.append(Finding("HARD", "checkpoint_mismatch", "ledger", entry.subject, entry.position,
                                        f"the lines before this checkpoint (the first {checkpoint.count} entries) do "
                                        "not give its digest: an earlier line was changed, removed or added"))
            self.digests = {count: value for count, value in self.digests.items() if count > checkpoint.count}

    def finish(self) -> list[Finding]:
        """The findings, with what the first and last lines say of the export as a whole."""
        findings = self.findings + _ending(self.digest, self.end)
        if self.checkpoints == 0 and self.count:
            findings.append(Finding("WARN", "no_checkpoint", "export", "*", None,
                                    "the export holds no checkpoint to verify"))
        return findings


def _start(header: Any, number: int, findings: list[Finding]) -> Digest:
    if not isinstance(header, dict) or not SHA256_TEXT.fullmatch(str(header.get("sha256"))):
        raise ValueError("its export line names no digest to start from")
    layout = str(header.get("layout", "1"))
    if layout != LAYOUT:
        findings.append(Finding("HARD", "other_layout", "export", f"line {number}", None,
                                f"an export of a ledger in layout {layout}, and this version reads layout {LAYOUT}: "
                                "verify it with the version that wrote it"))
    return Digest(str(header["sha256"]), int(header["count"]), 0)


def _ending(digest: Digest | None, end: Digest | None) -> list[Finding]:
    """What the export's first and last lines say of it as a whole."""
    if digest is None:
        return [Finding("HARD", "no_start", "export", "*", None, "not an export: there is no export line")]
    if end is None:
        return [Finding("HARD", "truncated", "export", "*", None,
                        "the export has no end line: it was cut short, or the end line was removed")]
    if (end.count, end.sha256) != (digest.count, digest.sha256):
        return [Finding("HARD", "end_mismatch", "export", "*", None,
                        f"the lines give {digest.count} entries and a digest other than the end line's "
                        f"({end.count} entries): a line was changed, removed or added")]
    return []


def _header(since: int, digest: Digest, ledger_id: str) -> bytes:
    return _line({"export": {"since": since, "count": digest.count, "sha256": digest.sha256, "ends": True,
                             "layout": LAYOUT, "ledger": ledger_id}})


def _payload(payload: bytes) -> dict[str, str]:
    """The stored bytes as text where they are UTF-8 (every event is), else in base64."""
    try:
        return {"payload": payload.decode()}
    except UnicodeDecodeError:
        return {"payload_base64": base64.b64encode(payload).decode()}


def _bytes_of(line: dict[str, Any]) -> bytes:
    if "payload_base64" in line:
        return base64.b64decode(str(line["payload_base64"]), validate=True)
    return str(line["payload"]).encode()


def _headers(headers: Any) -> dict[str, str]:
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ValueError("headers are a JSON object of strings")
    return {str(name): value for name, value in headers.items()}


def _moment(event: dict[str, Any] | None) -> datetime | None:
    """An event's time, when it says one with a zone (the audit reports one that does not)."""
    try:
        moment = msgspec.convert((event or {}).get("timestamp"), datetime)
    except msgspec.ValidationError:
        return None
    return moment if moment.tzinfo is not None else None


def _decoded(payload: bytes) -> dict[str, Any] | None:
    """The bytes as a JSON object, or None when they are not (the audit reports it; export keeps it)."""
    try:
        decoded = msgspec.json.decode(payload)
    except msgspec.DecodeError:
        return None
    return decoded if isinstance(decoded, dict) else None


def _line(body: dict[str, Any]) -> bytes:
    return msgspec.json.encode(body) + b"\n"
