"""Queries over NATS, answered from the read models: ``athenaeum.query.<name>``.

A query may carry ``after``: the position of the caller's own write, waited for (bounded)
so a client reads what it just wrote.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

import msgspec
from nats.micro.request import Request
from nats.micro.service import Service

from athenaeum.projectors import pending_work, quorum_status, ratification_records, ratification_status
from athenaeum.services.command_service import concurrently
from athenaeum.services.projection import ProjectionRunner
from athenaeum.services.replies import malformed

QUERY_PREFIX = "athenaeum.query"
READ_YOUR_WRITES_TIMEOUT = 5.0


class Query(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    after: int | None = None


class ShowRatification(Query, frozen=True):
    topic: str


class Check(Query, frozen=True):
    agent: str


class RenderRatification(Query, frozen=True):
    topic: str
    record: str


class ShowProposal(Query, frozen=True):
    proposal_id: str


class Answer(msgspec.Struct, omit_defaults=True):
    ok: bool
    position: int | None = None
    result: Any = None
    error: dict[str, Any] | None = None


def show_ratification(runner: ProjectionRunner, query: ShowRatification, humans: frozenset[str]) -> Answer:
    return _document(runner, ratification_status.VIEW, query.topic, f"ratification {query.topic!r}", "topic")


def show_proposal(runner: ProjectionRunner, query: ShowProposal, humans: frozenset[str]) -> Answer:
    return _document(runner, quorum_status.VIEW, query.proposal_id, f"proposal {query.proposal_id!r}", "proposal_id")


def announce_proposal(runner: ProjectionRunner, query: ShowProposal, humans: frozenset[str]) -> Answer:
    answer = show_proposal(runner, query, humans)
    if answer.ok:
        answer.result = {"record": "announcement", "text": quorum_status.announcement(answer.result) + "\n"}
    return answer


def _document(runner: ProjectionRunner, view: str, key: str, what: str, field: str) -> Answer:
    document = runner.store.get(view, key)
    if document is None:
        return _not_found(f"no {what}", field)
    return Answer(ok=True, position=runner.position, result=document)


def _not_found(message: str, field: str) -> Answer:
    return Answer(ok=False, error={"code": "not_found", "message": message, "field": field})


def check(runner: ProjectionRunner, query: Check, humans: frozenset[str]) -> Answer:
    items = (runner.store.get(pending_work.VIEW, query.agent) or {}).get("items", [])
    if query.agent in humans:
        items += (runner.store.get(pending_work.VIEW, pending_work.HUMANS) or {}).get("items", [])
    return Answer(ok=True, position=runner.position, result={"agent": query.agent, "items": items})


def render_ratification(runner: ProjectionRunner, query: RenderRatification, humans: frozenset[str]) -> Answer:
    events = list(runner.app.events.get(query.topic))
    if not events:
        return _not_found(f"no ratification {query.topic!r}", "topic")
    try:
        text = ratification_records.render(query.record, events)
    except ratification_records.NotRendered as missing:
        return _not_found(str(missing), "record")
    return Answer(ok=True, position=runner.position, result={"record": query.record, "text": text})


QUERIES: dict[str, tuple[type[Query], Callable[[ProjectionRunner, Any, frozenset[str]], Answer]]] = {
    "ratification.show": (ShowRatification, show_ratification),
    "ratification.render": (RenderRatification, render_ratification),
    "quorum.show": (ShowProposal, show_proposal),
    "quorum.announcement": (ShowProposal, announce_proposal),
    "check": (Check, check),
}


async def add_query_endpoints(service: Service, runner: ProjectionRunner, workers: Executor, humans: frozenset[str]) -> None:
    for name, (query_type, answer) in QUERIES.items():
        await service.add_endpoint(
            name=f"query-{name.replace('.', '-')}",
            subject=f"{QUERY_PREFIX}.{name}",
            handler=_endpoint(query_type, answer, runner, workers, humans),
        )


def _endpoint(query_type, answer, runner, workers, humans):  # type: ignore[no-untyped-def]
    decoder = msgspec.json.Decoder(query_type)

    def answered(query: Any) -> Answer:
        if query.after is not None and not runner.wait_for(query.after, READ_YOUR_WRITES_TIMEOUT):
            return Answer(
                ok=False,
                error={"code": "unavailable", "message": f"the views did not reach position {query.after} in time"},
            )
        return answer(runner, query, humans)

    async def answer_request(request: Request) -> None:
        try:
            query = decoder.decode(request.data)
        except msgspec.DecodeError as error:
            rejected = malformed(error)
            reply = Answer(ok=False, error=msgspec.to_builtins(rejected.error))
        else:
            try:
                reply = await asyncio.get_running_loop().run_in_executor(workers, answered, query)
            except Exception as error:  # noqa: BLE001  a request must always be answered
                reply = Answer(ok=False, error={"code": "unavailable", "message": f"the query failed: {error!r}"})
        await request.respond(msgspec.json.encode(reply))

    return concurrently(answer_request)
