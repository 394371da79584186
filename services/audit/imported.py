"""What imported history broke before Athenaeum held it: each rule an imported record's files
break, as its import recorded it, is a WARN of its own (``imported_<code>``), never taken for a
fault of the services."""

from __future__ import annotations

from athenaeum.events import Event
from athenaeum.events.page import PageImported
from athenaeum.events.quorum import ProposalImported
from athenaeum.events.ratification import RatificationImported
from athenaeum.events.task import TaskImported
from athenaeum.events.thread import ThreadImported
from athenaeum.services.audit.findings import Finding, found_at
from athenaeum.services.jetstream.entries import Entry

# A tuple, not a union: the audit asks this of every event, and a union is built anew each time.
_IMPORTED = (RatificationImported, ThreadImported, PageImported, TaskImported, ProposalImported)


def imported_findings(entry: Entry, event: Event) -> list[Finding]:
    if not isinstance(event, _IMPORTED):
        return []
    return [
        found_at(entry, "WARN", f"imported_{finding.code}",
                 f"{_where(event, finding.file)}{'' if finding.line is None else f':{finding.line}'}: "
                 f"{finding.message} (imported by {event.actor})")
        for finding in event.findings
    ]


def _where(event: RatificationImported | ThreadImported | PageImported | TaskImported | ProposalImported,
           file: str) -> str:
    """The file in the record's folder; for a task, the row in its database (``#<table>/<id>``)."""
    if isinstance(event, TaskImported):
        return f"{event.source.partition('#')[0]}#{file}"
    return f"{event.source}/{file}"
