"""Time travel: every aggregate as of a position or a time, written as the protocol records the
original tools read (``../shared/FORMATS.md``). The same history gives the same bytes."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.page_state import Page
from athenaeum.events import Event, family_of_id, natural_key
from athenaeum.events.ratification import ArtifactFrozen, HumanDecisionRecorded, VoteCast, VotesTallied
from athenaeum.events.thread import EntryAppended, ThreadOpened
from athenaeum.projectors import quorum_scratchpad, ratification_records, task_records, task_status, thread_status
from athenaeum.projectors.yaml_text import dump
from athenaeum.services.audit.auditor import Audit
from athenaeum.services.commands.handler import Activity
from athenaeum.services.queries.pages import DIALOGUE, consensus_block


def replay(app: AthenaeumApplication, out: Path, humans: frozenset[str], until: int | datetime | None) -> str:
    """Write the records; a summary of what was written."""
    audit = Audit(app, humans=humans, keep_history=True)
    position, moment = (until, None) if isinstance(until, int) else (None, until)
    audit.run(until_position=position, until_time=moment)
    assert audit.history is not None
    files: dict[Path, str] = {}
    log_lines: list[tuple[datetime, str]] = []
    # Standings read the clock (who is active, who dormant); past the ledger's last event a
    # later time would invent what the ledger never recorded.
    now = min(moment, audit.last_time) if moment and audit.last_time else moment or audit.last_time
    for aggregate_id, events in sorted(audit.history.items()):
        family = family_of_id(aggregate_id)
        key = natural_key(aggregate_id)
        if family == "ratification" and isinstance(events[0], ArtifactFrozen):
            files |= _ratification(out / ".athenaeum" / key, events)
        elif family == "thread" and isinstance(events[0], ThreadOpened):  # (forged history opens nothing)
            # Where the original checker looks for threads, beside the wiki's log.
            files |= _thread(out / "wiki" / "agents" / DIALOGUE / key, events,
                             audit.views.get((thread_status.VIEW, key), {}))
            log_lines += [(e.timestamp, f"- {_time(e.timestamp)} {DIALOGUE}/{key}: entry {e.n:03d} "
                                        f"({e.kind.value}) by {e.author}") for e in events if isinstance(e, EntryAppended)]
        elif family == "page" and isinstance(state := audit.states.get(aggregate_id), Page) and now is not None:
            members = Activity(tuple(audit.members()), audit.last_position)
            files[out / "pages" / key] = _page(state, members, now)
        elif family == "quorum" and (pad := audit.views.get((quorum_scratchpad.VIEW, key))):
            files[out / "fleet" / "quorum" / key] = _json(pad)
        elif family == "task" and (task := audit.views.get((task_status.VIEW, key))):
            files |= _task(out / "tasks" / key, task, events)
    if log_lines:
        files[out / "wiki" / "log.md"] = "# Log\n\n" + "".join(line + "\n" for _, line in sorted(log_lines))
    root = out.resolve()
    for path, text in files.items():
        if not path.resolve().is_relative_to(root):
            continue  # a name from forged history that would lead outside: the audit reports that history
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return f"{len(files)} files for {len(audit.history)} aggregates as of position {audit.last_position}"


def _ratification(folder: Path, events: list[Event]) -> dict[Path, str]:
    frozen = events[0]
    assert isinstance(frozen, ArtifactFrozen)
    files = {folder / "artifact.md": frozen.artifact}
    for record in ratification_records.RECORDS:
        try:
            files[folder / f"{record}.{'yaml' if record == 'manifest' else 'md'}"] = ratification_records.render(record, events)
        except ratification_records.NotRendered:
            continue  # not there yet at this point in history
    # Votes are blind until the tally (PROTOCOLS.md section 1), and a vote file names its
    # decision (FORMATS.md): until the tally there are none; the log says who voted.
    tallied = any(isinstance(event, VotesTallied) for event in events)
    for event in events:
        if isinstance(event, VoteCast) and tallied:
            vote: dict[str, Any] = {"agent": event.agent, "artifact_sha256": event.artifact_sha256,
                                    "decision": event.decision.value, "timestamp": _time(event.timestamp)}
            if event.dissent:
                vote["dissent"] = msgspec.to_builtins(event.dissent)
            files[folder / f"{event.agent}.vote.yaml"] = dump(vote)
        elif isinstance(event, HumanDecisionRecorded):
            files[folder / "human-decision.yaml"] = dump({
                "topic": frozen.key, "decision": event.decision.value, "decided_at": _time(event.timestamp),
                "notes": msgspec.to_builtins(event.notes)})
    return files


def _thread(folder: Path, events: list[Event], view: dict[str, Any]) -> dict[Path, str]:
    opened = events[0]
    assert isinstance(opened, ThreadOpened)
    questions = "\n".join(f"- **{q['id']}**: {q['text']}" for q in view.get("open_questions", []))
    thread_md = (f"---\nslug: {opened.key}\nopened_by: {opened.opened_by}\nopened_at: {_time(opened.timestamp)}\n---\n\n"
                 f"## Context\n\n{opened.context.rstrip()}\n\n## Open Questions (OQ)\n\n{questions}\n")
    crystallization = view.get("crystallization") or {}
    meta = {
        "slug": opened.key,
        "status": view.get("status", "open"),
        "created": _time(opened.timestamp),
        "last_updated": _time(msgspec.convert(view.get("last_updated"), datetime)) if view else _time(opened.timestamp),
        "participants": view.get("participants", []),
        "topics": view.get("topics", []),
        "rolespace": {"target": msgspec.to_builtins(opened.target)},
        "crystallization": {"signed_by": crystallization.get("signed_by"), "signature": None,
                            "canon_pages": crystallization.get("canon_pages", [])},
    }
    files = {folder / "thread.md": thread_md, folder / "meta.yaml": dump(meta)}
    names: dict[int, str] = {}
    for event in events:
        if isinstance(event, EntryAppended):
            name = f"{event.n:03d}-{event.author}.md"
            names[event.n] = name
            front: dict[str, Any] = {"n": event.n, "type": event.kind.value, "author": event.author,
                                     "ts": _time(event.timestamp)}
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
            files[folder / "entries" / name] = f"---\n{dump(front)}---\n\n{event.body.rstrip()}\n"
    return files


def _page(page: Page, activity: Activity, now: datetime) -> str:
    return f"---\n{consensus_block(page, activity, now)}---\n\n{page.content}"


def _task(folder: Path, task: dict[str, Any], events: list[Event]) -> dict[Path, str]:
    files = {folder / "task.json": _json(task), folder / "arbitrations.json": _json(task_records.arbitrations(events))}
    cycles = sorted({e.cycle for e in events if hasattr(e, "reviewer_role")})
    for cycle in cycles:
        files[folder / "reviews" / f"cycle-{cycle}.json"] = _json(task_records.reviews(events, cycle))
    return files


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
