"""Time travel: every aggregate as of a position or a time, written as the protocol records the
original tools read (``../shared/FORMATS.md``). The same history gives the same bytes."""

from __future__ import annotations

import errno
import json
from collections.abc import Callable, Iterable
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.page_state import Page
from athenaeum.events import Event, family_of_id, natural_key
from athenaeum.events.page import (
    THREADS_FOLDER, WIKI, WIKI_LOG, DocumentRead, PageImported, PendingAged, ReadinessReassessed,
)
from athenaeum.events.imported import ImportedFile
from athenaeum.events.quorum import ProposalAcked, ProposalImported, ProposalNacked
from athenaeum.events.ratification import RATIFICATION_FOLDERS, ArtifactFrozen, RatificationImported
from athenaeum.events.thread import EntryAppended, ThreadImported, ThreadOpened
from athenaeum.projectors import (
    imported_ratification,
    quorum_scratchpad,
    ratification_records,
    task_records,
    task_status,
    thread_status,
    vote_records,
)
from athenaeum.projectors.record_text import one_line, utc_text
from athenaeum.projectors.yaml_text import dump, scalar
from athenaeum.services.audit.auditor import Audit
from athenaeum.services.commands.handler import Activity
from athenaeum.services.queries.pages import DIALOGUE, page_file

# Where the original wiki tools look for everything: the pages, by their ids, and beside them
# the dialogue threads and the log of their entries; a thread's files are episodic memory.
WIKI_ROOT = Path(WIKI)
EPISODIC = "tier: episodic\n"
STATUS_LINE = re.compile(rb"(?m)^status:.*$")  # a hand-written YAML's status, rewritten in place
UNNAMEABLE = (errno.ENAMETOOLONG, errno.EILSEQ, errno.EINVAL)  # a name the filesystem refuses
# What leaves a page's file as it was: reads, and the timer's findings about time.
ENTRIES = "entries"  # a thread folder's entry files, NNN-<author>.md
UNWRITTEN = (DocumentRead, PendingAged, ReadinessReassessed)


def replay(app: AthenaeumApplication, out: Path, humans: frozenset[str], until: int | datetime | None,
           progress: Callable[[int], None] = lambda entries: None) -> str:
    """Write the records; a summary of what was written. ``progress`` hears how many entries
    have been read."""
    audit = Audit(app, humans=humans, keep_history=True, progress=progress)
    position, moment = (until, None) if isinstance(until, int) else (None, until)
    audit.run(until_position=position, until_time=moment)
    assert audit.history is not None
    files: dict[Path, str | bytes] = {}
    log_lines: list[tuple[datetime, str]] = []
    # Standings read the clock (who is active, who dormant); past the ledger's last event a
    # later time would invent what the ledger never recorded.
    now = min(moment, audit.last_time) if moment and audit.last_time else moment or audit.last_time
    unrendered = []
    for aggregate_id, events in sorted(audit.history.items()):
        try:
            records, lines = _records(audit, out, aggregate_id, events, now)
        except Exception:  # noqa: BLE001  history the rules never make (the audit reports it) has no records
            unrendered.append(aggregate_id)
            continue
        files |= records
        log_lines += lines
    # The wiki's tools require its log, threads or not.
    files[out / WIKI_ROOT / WIKI_LOG] = (f"---\n{EPISODIC}---\n\n# Log\n\nThe dialogue threads' entries, oldest first.\n\n"
                                         + "".join(line + "\n" for _, line in sorted(log_lines)))
    in_the_way, unnameable = _write(out, files)
    unwritten = "".join(f" (not written, {why}: {', '.join(names)})" for why, names in (
        ("another page's file is in the way", in_the_way), ("a name no file can have", unnameable)) if names)
    failed = (f"; none for {', '.join(map(repr, unrendered))}, whose history no record can be made of (run audit)"
              if unrendered else "")
    return (f"{len(files) - len(in_the_way) - len(unnameable)} files{unwritten} for {len(audit.history)} aggregates "
            f"as of position {audit.last_position}{failed}")


def _records(audit: Audit, out: Path, aggregate_id: str, events: list[Event],
             now: datetime | None) -> tuple[dict[Path, str | bytes], list[tuple[datetime, str]]]:
    """One aggregate's records, and its lines of the wiki's log."""
    family = family_of_id(aggregate_id)
    key = natural_key(aggregate_id)
    if family == "ratification" and isinstance(events[0], ArtifactFrozen):
        found_in = events[0].found_in() if isinstance(events[0], RatificationImported) else RATIFICATION_FOLDERS[0]
        return _ratification(out / found_in / key, events), []
    if family == "thread" and isinstance(events[0], ThreadOpened | ThreadImported):  # (forged history opens nothing)
        imported = events[0] if isinstance(events[0], ThreadImported) else None
        history = imported.history() + events[1:] if imported else events
        names = _entry_names(history, imported.files if imported else ())
        lines = [(e.timestamp, f"- {utc_text(e.timestamp)} {DIALOGUE}/{key}: entry {names[e.n]} "
                               f"({e.kind.value}) by {e.author}") for e in history if isinstance(e, EntryAppended)]
        folder, view = out / WIKI_ROOT / THREADS_FOLDER / key, audit.views.get((thread_status.VIEW, key), {})
        rendered = _thread(folder, history, names, view)
        return (rendered if imported is None else _imported_thread(folder, imported, events[1:], rendered, names, view)
                ), lines
    if family == "page" and isinstance(state := audit.states.get(aggregate_id), Page) and now is not None:
        imported = events[0] if isinstance(events[0], PageImported) else None
        if imported is not None and all(isinstance(e, UNWRITTEN) for e in events[1:]):
            return {out / WIKI_ROOT / file.name: file.content for file in imported.files}, []  # as found
        members = Activity(tuple(audit.members()), audit.last_position)
        return {out / WIKI_ROOT / key: page_file(state, members, now)}, []
    if family == "quorum" and (pad := audit.views.get((quorum_scratchpad.VIEW, key))):
        if isinstance(events[0], ProposalImported):
            return _imported_proposal(out / "fleet" / "quorum", events[0], events[1:], pad), []
        return {out / "fleet" / "quorum" / key: _json(pad)}, []
    if family == "task" and (task := audit.views.get((task_status.VIEW, key))):
        return _task(out / "tasks" / key, task, events), []
    return {}, []


def _write(out: Path, files: dict[Path, str | bytes]) -> tuple[list[str], list[str]]:
    """Write every file inside ``out``; those that could not be: because a page's path is
    another page's folder (``a.md`` and ``a.md/b.md``), and because their name is none a file
    can have (forged history's: a NUL, a name too long)."""
    root, in_the_way, unnameable = out.resolve(), [], []
    for path, text in files.items():
        try:
            if not (resolved := path.resolve()).is_relative_to(root):
                continue  # a name from forged history that would lead outside: the audit reports that history
            resolved.parent.mkdir(parents=True, exist_ok=True)
            resolved.write_bytes(text if isinstance(text, bytes) else text.encode())
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            in_the_way.append(str(path.relative_to(out)))
        except (ValueError, OSError) as error:  # ValueError: a NUL in the name
            if isinstance(error, OSError) and error.errno not in UNNAMEABLE:
                raise
            unnameable.append(str(path.relative_to(out)))
    return in_the_way, unnameable


def _ratification(folder: Path, events: list[Event]) -> dict[Path, str | bytes]:
    frozen = events[0]
    assert isinstance(frozen, ArtifactFrozen)
    if isinstance(frozen, RatificationImported):  # the original files, and what happened since
        return {folder / name: content for name, content in imported_ratification.files(events).items()}
    files = {folder / "artifact.md": frozen.artifact}
    for record in ratification_records.RECORDS:
        try:
            files[folder / f"{record}.{'yaml' if record == 'manifest' else 'md'}"] = ratification_records.render(record, events)
        except ratification_records.NotRendered:
            continue  # not there yet at this point in history
    return files | {folder / name: text for name, text in vote_records.files(frozen.key, events).items()}


def _entry_names(events: list[Event], found: Iterable[ImportedFile] = ()) -> dict[int, str]:
    """``NNN-<author>.md`` by entry: numbers padded alike, so the files sort in their order;
    an imported entry keeps the name its file was found by (``001-agent-a.md`` by ``Agent A``)."""
    entries = [e for e in events if isinstance(e, EntryAppended)]
    width = max([3, *(len(str(e.n)) for e in entries)])
    names = {e.n: f"{e.n:0{width}d}-{e.author}.md" for e in entries}
    for file in found:
        entry = file.name.removeprefix(f"{ENTRIES}/")
        if entry != file.name and (number := entry.partition("-")[0]).isdigit():
            names[int(number)] = entry
    return names


def _thread(folder: Path, events: list[Event], names: dict[int, str], view: dict[str, Any]) -> dict[Path, str]:
    opened = events[0]
    assert isinstance(opened, ThreadOpened)
    questions = "\n".join(f"- **{q['id']}**: {one_line(q['text'])}" for q in view.get("open_questions", []))
    thread_md = (f"---\nslug: {opened.key}\nopened_by: {scalar(opened.opened_by)}\nopened_at: {utc_text(opened.timestamp)}\n"
                 f"{EPISODIC}---\n\n"
                 f"## Context\n\n{opened.context.rstrip()}\n\n## Open Questions (OQ)\n\n{questions}\n")
    crystallization = view.get("crystallization") or {}
    meta = {
        "slug": opened.key,
        "status": view.get("status", "open"),
        "created": utc_text(opened.timestamp),
        "last_updated": utc_text(msgspec.convert(view.get("last_updated"), datetime)) if view else utc_text(opened.timestamp),
        "participants": view.get("participants", []),
        "topics": view.get("topics", []),
        "rolespace": {"target": msgspec.to_builtins(opened.target)},
        "crystallization": {"signed_by": crystallization.get("signed_by"), "signature": None,
                            "canon_pages": crystallization.get("canon_pages", [])},
    }
    files = {folder / "thread.md": thread_md, folder / "meta.yaml": dump(meta)}
    for event in events:
        if isinstance(event, EntryAppended):
            name = names[event.n]
            front: dict[str, Any] = {"n": event.n, "type": event.kind.value, "author": event.author,
                                     "ts": utc_text(event.timestamp)}
            if event.declared_axis:
                front["declared_axis"] = event.declared_axis.value
            if event.last_eval:
                front["last_eval"] = {"ref": names.get(event.last_eval.ref, str(event.last_eval.ref)),
                                      "v": msgspec.to_builtins(event.last_eval.v)}
            if event.current_at_close:
                front["current_at_close"] = msgspec.to_builtins(event.current_at_close)
            if event.proposed_crystallization:
                front["proposed_crystallization"] = msgspec.to_builtins(event.proposed_crystallization)
            if event.reason:
                front["reason"] = event.reason
            files[folder / ENTRIES / name] = f"---\n{dump(front)}{EPISODIC}---\n\n{event.body.rstrip()}\n"
    return files


def _imported_thread(folder: Path, imported: ThreadImported, since: list[Event], rendered: dict[Path, str],
                     names: dict[int, str], view: dict[str, Any]) -> dict[Path, str | bytes]:
    """An imported thread's original files byte for byte; the entries appended since, as
    rendered, and the status they leave written into the original meta.yaml."""
    files: dict[Path, str | bytes] = {folder / file.name: file.content for file in imported.files}
    added = {folder / ENTRIES / names[e.n] for e in since if isinstance(e, EntryAppended)}
    files |= {path: text for path, text in rendered.items() if path in added}
    if since and (meta := folder / "meta.yaml") in files and isinstance(original := files[meta], bytes):
        files[meta] = STATUS_LINE.sub(b"status: " + view.get("status", "open").encode(), original, count=1)
    return files


def _imported_proposal(folder: Path, imported: ProposalImported, since: list[Event], pad: dict[str, Any]
                       ) -> dict[Path, str | bytes]:
    """An imported scratchpad byte for byte, under the name it was found by; once anything
    happened since, the original document with the votes cast since appended to its lists, the
    status as it now stands, and the result once resolved (equal as JSON content otherwise)."""
    [file] = imported.files
    if not since:
        return {folder / file.name: file.content}
    document = json.loads(file.content)
    document["acks"] = [*document.get("acks", []), *(e.agent for e in since if isinstance(e, ProposalAcked))]
    document["nacks"] = [*document.get("nacks", []), *({"agent": e.agent, "reason": e.reason}
                                                        for e in since if isinstance(e, ProposalNacked))]
    document["status"] = pad["status"]
    if "result" in pad:
        document["result"] = pad["result"]
    return {folder / file.name: json.dumps(document, indent=2, ensure_ascii=False) + "\n"}


def _task(folder: Path, task: dict[str, Any], events: list[Event]) -> dict[Path, str]:
    files = {folder / "task.json": _json(task), folder / "arbitrations.json": _json(task_records.arbitrations(events))}
    for cycle in task_records.reviewed_cycles(events):
        files[folder / "reviews" / f"cycle-{cycle}.json"] = _json(task_records.reviews(events, cycle))
    return files


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
