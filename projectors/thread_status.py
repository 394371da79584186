"""Where does thread T stand: the ``threads`` view, one document per slug, with what is
derived and never stored (PROTOCOLS.md section 3): the running sum, the deficit against the
target, the momentum softmax(deficit), the suggested role, and each author's orientation.
"""

from __future__ import annotations

import math
from functools import singledispatch

import msgspec

from athenaeum.events import Event
from athenaeum.events.thread import (
    ZERO,
    Axis,
    ClosureRecognized,
    ClosureRefused,
    EntryAppended,
    EntryKind,
    OpenQuestionAdded,
    ThreadCrystallized,
    ThreadImported,
    ThreadOpened,
    ThreadReopened,
    Vector,
)
from athenaeum.projectors.imported_history import folded
from athenaeum.projectors.views import Document, per_aggregate

VIEW = "threads"
ROLES = {Axis.N: "generator", Axis.C: "connector", Axis.R: "critic"}  # who the largest deficit calls for
_to_builtins = msgspec.to_builtins


def _vector(value: dict) -> Vector:
    return msgspec.convert(value, Vector)


def _rounded(vector: Vector) -> dict:
    return {axis.value: round(value, 4) for axis, value in vector.values().items()}


def _derived(current: Vector, target: Vector) -> dict:
    deficit = current.deficit_to(target)
    largest = max(deficit.values().items(), key=lambda item: item[1])[0]  # ties: N, then C, then R
    top = max(deficit.values().values())  # softmax of the shifted deficit: the same, and never overflows
    exponentials = {axis: math.exp(value - top) for axis, value in deficit.values().items()}
    total = sum(exponentials.values())
    return {
        "sum": _to_builtins(current),  # exact, to add the next evaluation to; ``current`` is for reading
        "current": _rounded(current),
        "deficit": _rounded(deficit),
        "momentum": {axis.value: round(value / total, 4) for axis, value in exponentials.items()},
        "suggested_role": ROLES[largest],
    }


@singledispatch
def _apply(event: Event, current: Document) -> Document | None:
    return None


project = per_aggregate(VIEW, _apply)  # the cases below register on ``_apply``


@_apply.register
def _(event: ThreadOpened, current: Document) -> Document:
    return {
        "slug": event.key,
        "status": "open",
        "opened_by": event.opened_by,
        "opened_at": _to_builtins(event.timestamp),
        "context": event.context,
        "target": _to_builtins(event.target),
        **_derived(ZERO, event.target),
        "participants": list(event.participants),
        "topics": list(event.topics),
        "open_questions": [{"id": q.id, "text": q.text, "by": event.opened_by} for q in event.open_questions],
        "entries": [],
        "closures": [],
        "orientation": {},
        "last_updated": _to_builtins(event.timestamp),
    }


@_apply.register
def _(event: ThreadImported, current: Document) -> Document:
    """As found: its history folded as the thread's own events would have been."""
    document, imported = folded(event, current, _apply)
    if event.archival:  # no entries read: the status its meta.yaml gives, if settled
        status = event.settled.status.value if event.settled else document["status"]
        return document | {"imported": imported | {"archival": True}, "status": status}
    return document | {"imported": imported}


@_apply.register
def _(event: OpenQuestionAdded, current: Document) -> Document:
    question = {"id": event.oq_id, "text": event.text, "by": event.by}
    return current | {"open_questions": [*current["open_questions"], question]}


@_apply.register
def _(event: EntryAppended, current: Document) -> Document:
    entry = {
        "n": event.n,
        "type": event.kind.value,
        "author": event.author,
        "ts": _to_builtins(event.timestamp),
        "declared_axis": event.declared_axis.value if event.declared_axis else None,
        "last_eval": _to_builtins(event.last_eval),
    }
    document = current | {"entries": [*current["entries"], entry], "last_updated": entry["ts"]}
    if event.author not in current["participants"]:
        document["participants"] = [*current["participants"], event.author]
    if event.last_eval is not None:
        total = _vector(current["sum"]) + event.last_eval.v
        document |= _derived(total, _vector(current["target"]))
        document |= _oriented(current, event)
    if event.kind is EntryKind.CLOSURE:
        assert event.current_at_close is not None and event.proposed_crystallization is not None
        under = any(event.current_at_close.deficit_to(_vector(current["target"])).values().values())
        closure = {
            "n": event.n,
            "author": event.author,
            "current_at_close": _to_builtins(event.current_at_close),
            "under_target": under,
            "canon_pages": list(event.proposed_crystallization.canon_pages),
            "patch_summary": event.proposed_crystallization.patch_summary,
            "reopened": False,
            "decision": None,
        }
        document |= {"status": "awaiting-crystallization", "closures": [*current["closures"], closure]}
    return document


def _oriented(current: Document, event: EntryAppended) -> dict:
    """ẑ: per author, the normalised sum of the evaluations its entries received (the sums
    themselves are kept beside it, to add the next evaluation to)."""
    assert event.last_eval is not None
    evaluated = next((e["author"] for e in current["entries"] if e["n"] == event.last_eval.ref), None)
    if evaluated is None:  # history imported as found: it evaluates an entry the thread lacks, crediting nobody
        return {}
    sums = {author: _vector(raw) for author, raw in current.get("evaluations_received", {}).items()}
    sums[evaluated] = sums.get(evaluated, ZERO) + event.last_eval.v
    oriented = {}
    for author, vector in sums.items():
        norm = math.sqrt(sum(value * value for value in vector.values().values())) or 1.0
        oriented[author] = {axis.value: round(value / norm, 4) for axis, value in vector.values().items()}
    return {"orientation": oriented, "evaluations_received": {a: _to_builtins(v) for a, v in sums.items()}}


def _decided(current: Document, closure_n: int, **fields: object) -> list[dict]:
    return [closure | fields if closure["n"] == closure_n else closure for closure in current["closures"]]


@_apply.register
def _(event: ThreadReopened, current: Document) -> Document:
    return current | {"status": "open", "closures": _decided(current, event.closure_n, reopened=True)}


@_apply.register
def _(event: ClosureRefused, current: Document) -> Document:
    refusal = {"decision": "refused", "reason": event.reason, "deficits": _to_builtins(event.deficits)}
    return current | {"status": "closed-without-crystallization",
                      "closures": _decided(current, event.closure_n, **refusal)}


@_apply.register
def _(event: ClosureRecognized, current: Document) -> Document:
    return current | {"closures": _decided(current, event.closure_n, decision="recognized")}


@_apply.register
def _(event: ThreadCrystallized, current: Document) -> Document:
    # An imported thread's crystallization comes without the recognition before it.
    closures = _decided(current, event.closure_n, decision="recognized")
    return current | {"status": "crystallized", "closures": closures, "crystallization": {
        "signed_by": event.actor, "closure_n": event.closure_n, "canon_pages": list(event.canon_pages)}}
