"""The queries the query service answers, as they arrive on ``athenaeum.query.<name>``, and
the answer every one of them gets. Unknown fields are refused, so a misspelt one is named."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from athenaeum.events.constraints import Agent
from athenaeum.events.page import page_path


MAX_PAGE = 1000  # rows one answer may hold


class Query(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    after: Annotated[int, msgspec.Meta(ge=0)] | None = None  # a ledger position: 0 waits for nothing


class ShowRatification(Query, frozen=True):
    topic: str


class RenderRatification(Query, frozen=True):
    topic: str
    record: str


class ShowProposal(Query, frozen=True):
    proposal_id: str


class ShowThread(Query, frozen=True):
    slug: str


class ShowPage(Query, frozen=True):
    page: str  # its path inside wiki/, or from the repository's root: one page either way

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "page", page_path(self.page))


class Check(Query, frozen=True):
    agent: Agent
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE)] | None = None  # the soonest due first


class ListRecords(Query, frozen=True):
    """A page of a family's records, in key order: those in ``status``, those ``mine`` takes
    part in, those ``awaiting`` that agent; after ``cursor`` (the ``next`` of the page before)."""

    status: str | None = None
    mine: Agent | None = None
    awaiting: Agent | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE)] = 50
    cursor: str | None = None


class ShowTask(Query, frozen=True):
    task_id: int
    project_id: str | None = None  # when given, a task of another project is not found


class ListTasks(Query, frozen=True):
    """A project's tasks, in id order; with ``status``, only those in it."""

    project_id: str
    status: str | None = None  # only the tasks in this status (``arbitrating``: an arbitrator's work)


class TaskReviews(ShowTask, frozen=True, kw_only=True):
    cycle: int


class TaskAddendum(ShowTask, frozen=True, kw_only=True):
    trigger: str


class ShowA2ATask(Query, frozen=True):
    task_id: str


class Answer(msgspec.Struct, omit_defaults=True):
    ok: bool
    position: int | None = None
    result: Any = None
    error: dict[str, Any] | None = None
