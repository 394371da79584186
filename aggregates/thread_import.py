"""An original thread folder imported (``athenaeum import``): recorded as found, the rules it
breaks marked, never refused for them; from then on it continues under the rules (the next
entry evaluates its last, a closure sums from its first)."""

from __future__ import annotations

from athenaeum.aggregates.imported import recorded
from athenaeum.aggregates.rules import Context, Invalid, Stamp
from athenaeum.aggregates.thread_state import Thread
from athenaeum.events import Event, family_id
from athenaeum.events.thread import EntryKind, ThreadImported
from athenaeum.events.thread_commands import ImportThread


def import_thread(state: Thread | None, command: ImportThread, context: Context) -> list[Event]:
    for entry in command.entries:
        if entry.kind is EntryKind.CLOSURE and (entry.current_at_close is None or entry.proposed_crystallization is None):
            raise Invalid(f"entries: closure {entry.n} has no current_at_close or proposed_crystallization", "entries")
    if command.archival and command.entries:
        raise Invalid("entries: an archival thread's entry files are historical text, read as no entries", "entries")
    if command.settled is not None and not command.archival and not (
            command.entries and command.entries[-1].kind is EntryKind.CLOSURE):
        raise Invalid(f"settled: {command.settled.status.value}, yet the last entry is no closure", "settled")
    found = recorded(command.files, False if state is None else state.imported_sha256, f"thread {command.slug!r}",
                     "slug")
    if found is None:
        return []
    files, digest = found
    return [
        Stamp(family_id("thread", command.slug), 0, context)(
            ThreadImported,
            opened_by=command.opened_by,
            opened_at=command.opened_at,
            context=command.context,
            open_questions=tuple(command.open_questions),
            participants=tuple(command.participants),
            topics=tuple(command.topics),
            target=command.target,
            entries=tuple(command.entries),
            source=command.source,
            content_sha256=digest,
            files=files,
            findings=tuple(command.findings),
            settled=command.settled,
            archival=command.archival,
        )
    ]
