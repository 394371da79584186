"""Queries over NATS, answered from the read models: ``athenaeum.query.<name>``.

Every answer reflects every command acknowledged before the query came (see
``consistency``); a query may carry ``after``, a position learnt elsewhere, to wait for that
instead.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
import nats.errors
from eventsourcing.application import AggregateNotFoundError
from nats.micro.request import Request
from nats.micro.service import Service

from athenaeum.aggregates import page
from athenaeum.events import family_id
from athenaeum.events.task import TaskStatus, task_id
from athenaeum.projectors import (
    a2a_tasks,
    fleet_activity,
    pending_work,
    quorum_status,
    ratification_records,
    ratification_status,
    task_records,
    task_status,
    thread_records,
    thread_status,
)
from athenaeum.services.commands.handler import Activity
from athenaeum.services.identity.accounts import REQUEST_INFO_HEADER, caller_key
from athenaeum.services.jetstream.entries import holds_an_event
from athenaeum.services.commands.service import concurrently
from athenaeum.services.queries.consistency import Behind, Ledger, catch_up
from athenaeum.services.queries.lists import LISTINGS, listed
from athenaeum.services.queries.pages import consensus_block, page_document, page_file
from athenaeum.services.runtime.metrics import query_observer
from athenaeum.services.views.projection import ProjectionRunner
from athenaeum.services.queries.wire import (
    Answer,
    Check,
    ListRecords,
    ListTasks,
    Query,
    RenderRatification,
    ShowA2ATask,
    ShowPage,
    ShowProposal,
    ShowRatification,
    ShowTask,
    ShowThread,
    TaskAddendum,
    TaskReviews,
)
from athenaeum.services.commands.replies import malformed

QUERY_PREFIX = "athenaeum.query"
READ_YOUR_WRITES_TIMEOUT = 5.0
# A caller's reads waiting for the views at once: more are refused rather than queued, so one
# client cannot pile up waits (the HTTP gateway is one caller for all its clients).
MAX_WAITING_READS = 256
# Reads answered at once: a flood of them queues here rather than crowd the commands out of the
# one interpreter they share.
READS_AT_ONCE = 2


def caller_of(request: Request) -> str:
    """Who asks: the agent's key the server stamps, else the connection's inbox prefix."""
    headers = request.headers or {}
    return caller_key(headers.get(REQUEST_INFO_HEADER)) or request._msg.reply.rpartition(".")[0]  # noqa: SLF001


@dataclass(frozen=True)
class Reads:
    """What queries read from: the views, the ledger (and where it stands), the deployment's
    humans, the clock and the fleet's activity (for what depends on time, like a page's
    consensus)."""

    runner: ProjectionRunner
    ledger: Ledger
    humans: frozenset[str]
    clock: Callable[[], datetime]
    activity: Callable[[], Activity]


def show_ratification(reads: Reads, query: ShowRatification) -> Answer:
    return _document(reads, ratification_status.VIEW, query.topic, f"ratification {query.topic!r}", "topic")


def render_ratification(reads: Reads, query: RenderRatification) -> Answer:
    events = list(reads.runner.app.events.get(query.topic))
    if not events:
        return _not_found(f"no ratification {query.topic!r}", "topic")
    try:
        text = ratification_records.render(query.record, events)
    except ratification_records.UnknownRecord as unknown:  # "render": as HTTP and the CLI ask for it
        return Answer(ok=False, error={"code": "invalid", "message": str(unknown), "field": "render"})
    except ratification_records.NotRendered as missing:
        return _not_found(str(missing), "render")
    return _record(reads, query.record, text)


def show_proposal(reads: Reads, query: ShowProposal) -> Answer:
    proposal_id = query.proposal_id.upper()  # hex, in any case, as the CLI takes it
    return _document(reads, quorum_status.VIEW, proposal_id, f"proposal {proposal_id!r}", "proposal_id")


def announce_proposal(reads: Reads, query: ShowProposal) -> Answer:
    answer = show_proposal(reads, query)
    return _record(reads, "announcement", quorum_status.announcement(answer.result) + "\n") if answer.ok else answer


def show_thread(reads: Reads, query: ShowThread) -> Answer:
    answer = _document(reads, thread_status.VIEW, query.slug, f"thread {query.slug!r}", "slug")
    if answer.ok:  # the bookkeeping behind the derived figures is not for readers
        answer.result = {k: v for k, v in answer.result.items() if k not in ("sum", "evaluations_received")}
    return answer


def render_thread(reads: Reads, query: ShowThread) -> Answer:
    events = list(reads.runner.app.events.get(family_id("thread", query.slug)))
    if not events:
        return _not_found(f"no thread {query.slug!r}", "slug")
    return _record(reads, "thread", thread_records.render(events))


def show_page(reads: Reads, query: ShowPage) -> Answer:
    page = _page(reads, query.page)
    if page is None:
        return _not_found(f"no page {query.page!r}", "page")
    return Answer(ok=True, position=reads.runner.position, result=page_document(page, reads.activity(), reads.clock()))


def render_consensus(reads: Reads, query: ShowPage) -> Answer:
    page = _page(reads, query.page)
    if page is None:
        return _not_found(f"no page {query.page!r}", "page")
    return _record(reads, "consensus", consensus_block(page, reads.activity(), reads.clock()))


def render_page(reads: Reads, query: ShowPage) -> Answer:
    page = _page(reads, query.page)
    if page is None:
        return _not_found(f"no page {query.page!r}", "page")
    return _record(reads, "page", page_file(page, reads.activity(), reads.clock()))


def show_task(reads: Reads, query: ShowTask) -> Answer:
    answer = _document(reads, task_status.VIEW, str(query.task_id), f"task {query.task_id}", "taskId")
    if answer.ok and query.project_id is not None and answer.result["projectId"] != query.project_id:
        return _not_found(f"no task {query.task_id} in project {query.project_id!r}", "taskId")
    return answer


def list_tasks(reads: Reads, query: ListTasks) -> Answer:
    statuses = [status.value for status in TaskStatus]
    if query.status is not None and query.status not in statuses:
        return Answer(ok=False, error={"code": "invalid", "field": "status",
                                       "message": f"status {query.status!r} is not one of {', '.join(statuses)}"})
    tasks = [task for task in reads.runner.store.documents(task_status.VIEW).values()
             if task["projectId"] == query.project_id and query.status in (None, task["status"])]
    return Answer(ok=True, position=reads.runner.position, result={"tasks": sorted(tasks, key=lambda t: t["id"])})


def task_reviews(reads: Reads, query: TaskReviews) -> Answer:
    return _task_events(reads, query, lambda events: task_records.reviews(events, query.cycle))


def task_arbitrations(reads: Reads, query: ShowTask) -> Answer:
    return _task_events(reads, query, task_records.arbitrations)


def task_addendum(reads: Reads, query: TaskAddendum) -> Answer:
    def addendum(events):  # type: ignore[no-untyped-def]
        return task_records.addendum(events, query.trigger)

    answer = _task_events(reads, query, addendum)
    if answer.ok and answer.result is None:
        return _not_found(f"task {query.task_id} has no addendum for {query.trigger!r}", "trigger")
    return _record(reads, "addendum", answer.result) if answer.ok else answer


def _task_events(reads: Reads, query: ShowTask, read: Callable[[list], Any]) -> Answer:
    shown = show_task(reads, query)  # the project check
    if not shown.ok:
        return shown
    events = list(reads.runner.app.events.get(task_id(query.task_id)))
    return Answer(ok=True, position=reads.runner.position, result=read(events))


def show_a2a_task(reads: Reads, query: ShowA2ATask) -> Answer:
    return _document(reads, a2a_tasks.VIEW, query.task_id, f"A2A task {query.task_id!r}", "id")


def check(reads: Reads, query: Check) -> Answer:
    """What waits on the agent, the soonest due first (then what has no deadline), each with
    what acting on it needs (a ratification's sha to vote with)."""
    store = reads.runner.store
    items = (store.get(pending_work.VIEW, query.agent) or {}).get("items", [])
    roster = store.get(fleet_activity.ROSTER_VIEW, fleet_activity.ROSTER_KEY) or {}
    if query.agent in reads.humans or query.agent in roster.get("humans", []):
        items += (store.get(pending_work.VIEW, pending_work.HUMANS) or {}).get("items", [])
    # A vote past its deadline can no longer be cast, even before the timer records the close.
    now = reads.clock()
    items = [item for item in items if not item.get("deadline") or msgspec.convert(item["deadline"], datetime) > now]
    items.sort(key=lambda item: (item.get("deadline") is None, item.get("deadline") or "", item["kind"], item["id"]))
    shown = items[:query.limit] if query.limit is not None else items
    for item in shown:
        if item["kind"] == "ratification" and item["action"] == "vote":
            ratification = store.get(ratification_status.VIEW, item["id"]) or {}
            item["sha256"] = ratification.get("artifact_sha256")
    return Answer(ok=True, position=reads.runner.position,
                  result={"agent": query.agent, "items": shown, "total": len(items)})


def _lister(family: str) -> Callable[[Reads, ListRecords], Answer]:
    def listing(reads: Reads, query: ListRecords) -> Answer:
        found = listed(reads.runner.store, family, query.status, query.mine, query.awaiting, query.limit, query.cursor)
        return Answer(ok=True, position=reads.runner.position, result=found)

    return listing


def _page(reads: Reads, path: str) -> Any:
    app = reads.runner.app
    # As the command store reads an aggregate: past a message on its subject that is no event
    # the ledger can hold (the audit reports it), rather than failing on it for good.
    app.recorder.log.readable = app.recorder.log.readable or holds_an_event(app.mapper)  # type: ignore[attr-defined]
    try:
        return app.repository.get(family_id("page", path), projector_func=page.FAMILY.project)
    except AggregateNotFoundError:
        return None


def _document(reads: Reads, view: str, key: str, what: str, field: str) -> Answer:
    document = reads.runner.store.get(view, key)
    if document is None:
        return _not_found(f"no {what}", field)
    return Answer(ok=True, position=reads.runner.position, result=document)


def _record(reads: Reads, record: str, text: str) -> Answer:
    return Answer(ok=True, position=reads.runner.position, result={"record": record, "text": text})


def _not_found(message: str, field: str) -> Answer:
    return Answer(ok=False, error={"code": "not_found", "message": message, "field": field})


QUERIES: dict[str, tuple[type[Query], Callable[[Reads, Any], Answer]]] = {
    "ratification.show": (ShowRatification, show_ratification),
    "ratification.render": (RenderRatification, render_ratification),
    "quorum.show": (ShowProposal, show_proposal),
    "quorum.announcement": (ShowProposal, announce_proposal),
    "thread.show": (ShowThread, show_thread),
    "thread.render": (ShowThread, render_thread),
    "page.show": (ShowPage, show_page),
    "page.consensus": (ShowPage, render_consensus),
    "page.render": (ShowPage, render_page),
    "task.show": (ShowTask, show_task),
    "task.list": (ListTasks, list_tasks),
    "task.reviews": (TaskReviews, task_reviews),
    "task.arbitrations": (ShowTask, task_arbitrations),
    "task.addendum": (TaskAddendum, task_addendum),
    "a2a.task": (ShowA2ATask, show_a2a_task),
    "check": (Check, check),
    **{f"{family}.list": (ListRecords, _lister(family)) for family in LISTINGS},
}


async def add_query_endpoints(service: Service, reads: Reads, workers: Executor) -> None:
    turns = asyncio.Semaphore(READS_AT_ONCE)
    for name, (query_type, answer) in QUERIES.items():
        await service.add_endpoint(
            name=f"query-{name.replace('.', '-')}",
            subject=f"{QUERY_PREFIX}.{name}",
            handler=_endpoint(query_type, answer, reads, workers, turns, query_observer(name)),
        )


def _endpoint(query_type, answer, reads, workers, turns, observe):  # type: ignore[no-untyped-def]
    decoder = msgspec.json.Decoder(query_type)
    waiting: Counter[str] = Counter()  # reads waiting for the views, by caller

    async def answer_request(request: Request) -> None:
        started = time.perf_counter()
        try:
            query = decoder.decode(request.data)
        except msgspec.DecodeError as error:
            rejected = malformed(error)
            reply = Answer(ok=False, error=msgspec.to_builtins(rejected.error))
        else:
            caller = caller_of(request)
            try:
                if waiting[caller] >= MAX_WAITING_READS:
                    raise Behind("unavailable", f"{MAX_WAITING_READS} reads of yours already wait for the views; "
                                 "ask again once they are answered")
                waiting[caller] += 1
                try:
                    await catch_up(reads.runner, reads.ledger, query.after, READ_YOUR_WRITES_TIMEOUT)
                finally:
                    waiting[caller] -= 1
                    if not waiting[caller]:
                        del waiting[caller]
                async with turns:
                    reply = await asyncio.get_running_loop().run_in_executor(workers, answer, reads, query)
            except Behind as behind:
                reply = Answer(ok=False, error=behind.error)
            except Exception as error:  # noqa: BLE001  a request must always be answered
                reply = Answer(ok=False, error={"code": "unavailable", "message": f"the query failed: {error!r}"})
        encoded = msgspec.json.encode(reply)
        observe(time.perf_counter() - started)
        try:
            await request.respond(encoded)
        except nats.errors.MaxPayloadError as error:
            too_large = {"code": "too_large", "message": f"the answer is {len(encoded):,} bytes, more than one NATS "
                         f"message carries ({error}); ask for a narrower part of it"}
            await request.respond(msgspec.json.encode(Answer(ok=False, error=too_large)))

    return concurrently(answer_request)
