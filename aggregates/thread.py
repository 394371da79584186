"""Dialogue thread rules (PROTOCOLS.md section 3): every entry after the first scores the
entry before it; a closure states the running sum; a human recognizes or refuses it.

``decide`` takes one command of the family; each rule checks everything against the state
before anything happens and returns the new events, or raises the rule's violation. A
recognition also lands the closure on its canon pages, whose states arrive in the context.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from athenaeum.aggregates import crystallization
from athenaeum.aggregates.family import Family, existing
from athenaeum.aggregates.rules import (
    AlreadyExists,
    Context,
    Invalid,
    NotHuman,
    RuleViolation,
    Stamp,
    require_page_path,
    require_slug,
    require_text,
)
from athenaeum.aggregates.state import fold
from athenaeum.aggregates.thread_import import import_thread
from athenaeum.aggregates.thread_state import Closure, Status, Thread, evolve
from athenaeum.events import Event, family_id
from athenaeum.events.constraints import CLOSURE_PAGES_LIMIT as MAX_PAGES
from athenaeum.events.thread import (
    ClosureRecognized,
    ClosureRefused,
    Crystallization,
    EntryAppended,
    EntryKind,
    Evaluation,
    OpenQuestion,
    OpenQuestionAdded,
    ThreadCrystallized,
    ThreadOpened,
    ThreadReopened,
    Vector,
)
from athenaeum.events.thread_commands import (
    AskQuestion,
    CloseThread,
    Contribute,
    ImportThread,
    OpenThread,
    TARGET_LIMIT,
    RecognizeClosure,
    RefuseClosure,
    ReopenThread,
    ThreadCommand,
)

# A closure's current_at_close may differ from the sum by this much per axis, compared in floats
# exactly as the original wiki auditor's D6 does (so 1.01 against a sum of 1.0 is out: the
# float difference is just over 0.01), so that no closure accepted here is HARD there.
TOLERANCE = 0.01


class MissingLastEval(RuleViolation):
    code = "missing_last_eval"


class BadEvalRef(RuleViolation):
    code = "bad_eval_ref"


class SelfEvaluation(RuleViolation):
    code = "self_evaluation"


class ThreadNotOpen(RuleViolation):
    code = "thread_not_open"


class ThreadClosed(RuleViolation):
    code = "thread_closed"


class ThreadNotClosed(RuleViolation):
    code = "thread_not_closed"


class CurrentMismatch(RuleViolation):
    code = "current_mismatch"


class ReopenExhausted(RuleViolation):
    code = "reopen_exhausted"


def decide(state: Thread | None, command: ThreadCommand, context: Context) -> list[Event]:
    match command:
        case OpenThread():
            return open_thread(state, command, context)
        case AskQuestion():
            return ask(_existing(state, command.slug), command, context)
        case Contribute():
            return contribute(_existing(state, command.slug), command, context)
        case CloseThread():
            return close(_existing(state, command.slug), command, context)
        case ReopenThread():
            return reopen(_existing(state, command.slug), command, context)
        case RecognizeClosure():
            return recognize(_existing(state, command.slug), context)
        case RefuseClosure():
            return refuse(_existing(state, command.slug), command, context)
        case ImportThread():
            return import_thread(state, command, context)
    raise TypeError(f"not a thread command: {command!r}")


def _existing(state: Thread | None, slug: str) -> Thread:
    thread = existing(state, f"thread {slug!r}", "slug")
    if thread.archival:
        raise ThreadClosed(f"thread {slug!r} is archival: its entries are historical text, which no entry can "
                           "evaluate or follow; continue it in a new thread")
    return thread


def crystallized_pages(command: ThreadCommand, state: Thread | None) -> Sequence[str]:
    """A recognition reads the pages its closure lands on, to initialise or revise each."""
    if not isinstance(command, RecognizeClosure) or state is None or state.closure is None:
        return ()
    return crystallization.page_ids(state.closure) if state.status is Status.AWAITING_CRYSTALLIZATION else ()


def open_thread(state: Thread | None, command: OpenThread, context: Context) -> list[Event]:
    slug, questions, topics, participants = command.slug, command.questions, command.topics, command.participants
    if state is not None:
        raise AlreadyExists(f"thread {slug!r} already exists", "slug")
    require_slug(slug, "slug")
    require_text(command.context, "context")
    require_text(command.body, "body")
    values = command.target.values().values()
    if not all(math.isfinite(value) and 0 < value <= TARGET_LIMIT for value in values):
        raise Invalid(f"every axis of the target is above 0 and at most {TARGET_LIMIT}", "target")
    for question in questions:
        require_text(question, "questions")
    for topic in topics:
        require_text(topic, "topics")
    for agent in participants:
        require_slug(agent, "participants")
    stamp = Stamp(family_id("thread", slug), 0, context)
    opened = stamp(
        ThreadOpened,
        opened_by=context.actor,
        context=command.context,
        open_questions=tuple(OpenQuestion(f"OQ-{i}", q) for i, q in enumerate(questions, start=1)),
        participants=tuple(dict.fromkeys([context.actor, *participants])),
        topics=tuple(topics),
        target=command.target,
    )
    first = stamp(EntryAppended, n=1, kind=EntryKind.CONTRIBUTION, author=context.actor, body=command.body,
                  declared_axis=command.declared_axis)
    return [opened, first]


def ask(state: Thread, command: AskQuestion, context: Context) -> list[Event]:
    """Open questions are appended, never edited."""
    if state.status is not Status.OPEN:
        raise ThreadNotOpen(f"thread {state.key!r} is {state.status.value}, not open")
    require_text(command.question, "question")
    return [Stamp(state.id, state.version, context)(
        OpenQuestionAdded, oq_id=f"OQ-{state.questions + 1}", text=command.question, by=context.actor
    )]


def contribute(state: Thread, command: Contribute, context: Context) -> list[Event]:
    _require_appendable(state)
    last_eval = _evaluation(state, context, command.eval, command.ref)
    require_text(command.body, "body")
    return [Stamp(state.id, state.version, context)(
        EntryAppended, n=state.last_n + 1, kind=EntryKind.CONTRIBUTION, author=context.actor, body=command.body,
        declared_axis=command.declared_axis, last_eval=last_eval,
    )]


def close(state: Thread, command: CloseThread, context: Context) -> list[Event]:
    pages, current = command.pages, command.current
    _require_appendable(state)
    last_eval = _evaluation(state, context, command.eval, command.ref)
    require_text(command.summary, "summary")
    if not 1 <= len(pages) <= MAX_PAGES:
        raise Invalid(f"a closure proposes 1 to {MAX_PAGES} canon pages", "pages")
    if len(set(pages)) != len(pages):
        raise Invalid("a closure names a page twice", "pages")
    for page in pages:
        require_page_path(page, "pages")
    require_text(command.patch_summary, "patch_summary")
    total = state.current + last_eval.v
    for axis, value in current.values().items():
        if not abs(value - total.values()[axis]) <= TOLERANCE:  # NaN is a mismatch too
            raise CurrentMismatch(
                f"current_at_close {axis.value}={value} is not the sum of every evaluation, "
                f"{total.values()[axis]:.4f} (within {TOLERANCE})",
                "current",
            )
    return [Stamp(state.id, state.version, context)(
        EntryAppended, n=state.last_n + 1, kind=EntryKind.CLOSURE, author=context.actor, body=command.summary,
        last_eval=last_eval, current_at_close=current, summary=command.summary,
        proposed_crystallization=Crystallization(tuple(pages), command.patch_summary),
    )]


def reopen(state: Thread, command: ReopenThread, context: Context) -> list[Event]:
    """Evaluates the closing entry (the only way to), once per closure; voting resumes."""
    if state.status is Status.CRYSTALLIZED:
        raise ThreadClosed(f"thread {state.key!r} is crystallized")
    if state.status is Status.OPEN:
        if state.closure is None:
            raise ThreadNotClosed(f"thread {state.key!r} has no closure to reopen")
        raise ReopenExhausted(f"closure {state.closure.n} of {state.key!r} was already reopened")
    assert state.closure is not None
    last_eval = _evaluation(state, context, command.eval, command.ref)
    require_text(command.reason, "reason")
    require_text(command.discovery, "discovery")
    stamp = Stamp(state.id, state.version, context)
    n = state.last_n + 1
    entry = stamp(EntryAppended, n=n, kind=EntryKind.REOPEN, author=context.actor, body=command.discovery,
                  last_eval=last_eval, reason=command.reason)
    reopened = stamp(ThreadReopened, closure_n=state.closure.n, reopen_n=n, by=context.actor, reason=command.reason)
    return [entry, reopened]


def recognize(state: Thread, context: Context) -> list[Event]:
    """(human) Recognition completes the closure and crystallizes it: each of its canon pages,
    as ``context.states`` holds it, is initialised or revised in the same append."""
    closure = _awaiting(state, context)
    under = any(closure.current_at_close.deficit_to(state.target).values().values())
    stamp = Stamp(state.id, state.version, context)
    return [
        stamp(ClosureRecognized, closure_n=closure.n, by=context.actor, under_target=under),
        stamp(ThreadCrystallized, closure_n=closure.n, canon_pages=closure.crystallization.canon_pages),
        *crystallization.crystallize(state.key, closure, context),
    ]


def refuse(state: Thread, command: RefuseClosure, context: Context) -> list[Event]:
    """(human) Always allowed on a closure; a shortfall against the target is cited."""
    closure = _awaiting(state, context)
    require_text(command.reason, "reason")
    deficits = closure.current_at_close.deficit_to(state.target)
    cited = deficits if any(deficits.values().values()) else None
    return [Stamp(state.id, state.version, context)(
        ClosureRefused, closure_n=closure.n, by=context.actor, reason=command.reason, deficits=cited
    )]


def _require_appendable(state: Thread) -> None:
    if state.status is not Status.OPEN:
        raise ThreadClosed(f"thread {state.key!r} is {state.status.value}: nothing is appended after a closure")


def _evaluation(state: Thread, context: Context, evaluation: Vector | None, ref: int | None) -> Evaluation:
    """The new entry's scores of the preceding one, checked."""
    if evaluation is None:
        raise MissingLastEval(f"entry {state.last_n + 1} must evaluate entry {state.last_n}", "eval")
    if ref is not None and ref != state.last_n:
        raise BadEvalRef(f"the evaluation refers to entry {ref}, but the preceding entry is {state.last_n}", "ref")
    for axis, value in evaluation.values().items():
        if not 0 <= value <= 1:  # also false for NaN
            raise Invalid(f"eval {axis.value}={value} is outside [0, 1]", "eval")
    if context.actor == state.last_author:
        raise SelfEvaluation(f"{context.actor!r} wrote entry {state.last_n}: no self-evaluation", "author")
    return Evaluation(ref=state.last_n, v=evaluation)


def _awaiting(state: Thread, context: Context) -> Closure:
    if state.status is not Status.AWAITING_CRYSTALLIZATION or state.closure is None:
        raise ThreadNotClosed(f"thread {state.key!r} is {state.status.value}, no closure awaits a decision")
    if not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is not a human principal; only a human decides a closure", "actor")
    return state.closure


FAMILY = Family("thread", lambda command: family_id("thread", command.slug), fold(evolve), decide, crystallized_pages)
