"""A thread as markdown, from its events: context, open questions, then every entry with the
evaluation it gives the entry before it."""

from __future__ import annotations

from collections.abc import Iterable

from athenaeum.events import Event
from athenaeum.events.thread import (
    EntryAppended, OpenQuestionAdded, ThreadImported, ThreadOpened, ThreadReopened, Vector,
)
from athenaeum.projectors.record_text import one_line


def _scores(v: Vector) -> str:
    return f"N {v.N:g} · C {v.C:g} · R {v.R:g}"


def render(events: Iterable[Event]) -> str:
    header: list[str] = []
    questions: list[str] = []
    entries: list[str] = []
    for event in events:
        match event:
            case ThreadImported():  # its history, as the thread's own events would have told it
                return render(event.history() + [later for later in events if later is not event])
            case ThreadOpened():
                header = [
                    f"# {event.key}",
                    "",
                    f"opened by {event.opened_by} at {event.timestamp:%Y-%m-%dT%H:%M:%SZ} · "
                    f"target {_scores(event.target)}",
                    "",
                    "## Context",
                    "",
                    event.context.rstrip(),
                ]
                questions += [f"- {q.id}: {one_line(q.text)}" for q in event.open_questions]
            case OpenQuestionAdded():
                questions.append(f"- {event.oq_id}: {one_line(event.text)} ({event.by})")
            case EntryAppended():
                entries += _entry(event)
            case ThreadReopened():
                entries += [f"_Closure {event.closure_n} reopened by {event.by}: {event.reason}_", ""]
    lines = [*header, "", "## Open Questions (OQ)", "", *(questions or ["(none)"]), "", "## Entries", "", *entries]
    return "\n".join(lines).rstrip() + "\n"


def _entry(event: EntryAppended) -> list[str]:
    lines = [f"### {event.n:03d} · {event.author} · {event.kind.value}", ""]
    facts = [f"- ts: {event.timestamp:%Y-%m-%dT%H:%M:%SZ}"]
    if event.declared_axis:
        facts.append(f"- declared_axis: {event.declared_axis.value}")
    if event.last_eval:
        facts.append(f"- last_eval: entry {event.last_eval.ref:03d}: {_scores(event.last_eval.v)}")
    if event.current_at_close:
        facts.append(f"- current_at_close: {_scores(event.current_at_close)}")
    if event.proposed_crystallization:
        pages = ", ".join(event.proposed_crystallization.canon_pages)
        facts.append(f"- proposed_crystallization: {pages}: {one_line(event.proposed_crystallization.patch_summary)}")
    if event.reason:
        facts.append(f"- reason: {one_line(event.reason)}")
    return [*lines, *facts, "", event.body.rstrip(), ""]
