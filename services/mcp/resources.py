"""The records a client reads as MCP resources: a ratification's rendered records
(``ratified.md``, ``decomposition.md``, its manifest and log), a thread rendered, a page with
its consensus block (or the block alone), a task's addendum to a ruling. Each is the query
that renders it, and the view whose change may change it (its key in the views bucket, which
a reader watches)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from athenaeum.events.page import page_path
from athenaeum.events.task import Trigger
from athenaeum.projectors import page_status, ratification_status, task_status, thread_status
from athenaeum.projectors.ratification_records import RECORDS
from athenaeum.services.views.bucket import kv_key

SCHEME = "athenaeum://"
MARKDOWN = "text/markdown"


@dataclass(frozen=True)
class Record:
    """A resource named by its URI: the query that renders it and the view key it follows."""

    uri: str
    query: str
    fields: dict[str, Any]
    view: str
    key: str

    @property
    def watched(self) -> str:
        """Its key in the views bucket."""
        return kv_key(self.view, self.key)


@dataclass(frozen=True)
class Template:
    uri_template: str
    pattern: re.Pattern[str]  # the URI's path after the scheme
    name: str
    description: str
    record: Callable[[str, dict[str, str]], Record]  # the record a matching URI names, from its parts

    def resource_template(self) -> types.ResourceTemplate:
        return types.ResourceTemplate(uri_template=self.uri_template, name=self.name, description=self.description,
                                      mime_type=MARKDOWN)


_RECORD_NAMES = "|".join(RECORDS)
_TRIGGERS = "|".join(trigger.value for trigger in Trigger)
TEMPLATES = (
    Template(f"{SCHEME}ratifications/{{topic}}/{{record}}.md",
             re.compile(rf"ratifications/(?P<topic>[^/]+)/(?P<record>{_RECORD_NAMES})\.md"),
             "ratification record",
             f"a ratification's record, rendered: one of {', '.join(f'{name}.md' for name in RECORDS)}",
             lambda uri, part: Record(uri, "ratification.render", {"topic": part["topic"], "record": part["record"]},
                                      ratification_status.VIEW, part["topic"])),
    Template(f"{SCHEME}threads/{{slug}}/thread.md", re.compile(r"threads/(?P<slug>[^/]+)/thread\.md"),
             "thread", "a dialogue thread rendered, its entries and evaluations",
             lambda uri, part: Record(uri, "thread.render", {"slug": part["slug"]}, thread_status.VIEW, part["slug"])),
    Template(f"{SCHEME}pages/{{+page}}", re.compile(r"pages/(?P<page>.+)"),
             "page", "a canon page as the wiki keeps it: its consensus block as front matter, then its content",
             lambda uri, part: Record(uri, "page.render", {"page": page_path(part["page"])}, page_status.VIEW,
                                      page_path(part["page"]))),
    Template(f"{SCHEME}consensus/{{+page}}", re.compile(r"consensus/(?P<page>.+)"),
             "page consensus", "a canon page's consensus block alone: its rev, lifecycle and every agent's standing",
             lambda uri, part: Record(uri, "page.consensus", {"page": page_path(part["page"])}, page_status.VIEW,
                                      page_path(part["page"]))),
    Template(f"{SCHEME}tasks/{{task_id}}/addendum/{{trigger}}.md",
             re.compile(rf"tasks/(?P<task_id>[0-9]+)/addendum/(?P<trigger>{_TRIGGERS})\.md"),
             "task addendum", "the addendum a ruling added to a task's next engineering session",
             lambda uri, part: Record(uri, "task.addendum", {"task_id": int(part["task_id"]), "trigger": part["trigger"]},
                                      task_status.VIEW, part["task_id"])),
)


class UnknownResource(LookupError):
    """A URI no template matches; the message says which ones there are."""


def record_of(uri: str) -> Record:
    """The record ``uri`` names."""
    if uri.startswith(SCHEME):
        for template in TEMPLATES:
            if (match := template.pattern.fullmatch(uri.removeprefix(SCHEME))) is not None:
                return template.record(uri, match.groupdict())
    raise UnknownResource(f"no Athenaeum resource {uri!r}; the resources are "
                          + ", ".join(template.uri_template for template in TEMPLATES))
