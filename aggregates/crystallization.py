"""Recognizing a closure crystallizes it (PROTOCOLS.md section 3): the thread records the
recognition, and each target page is initialised, or revised, by the closer, in one append."""

from __future__ import annotations

from collections.abc import Callable

from athenaeum.aggregates import page, thread
from athenaeum.aggregates.page_state import Page
from athenaeum.aggregates.rules import Context
from athenaeum.aggregates.thread_state import Thread
from athenaeum.events import Event, family_id


def recognize(state: Thread, context: Context, load_page: Callable[[str], Page | None]) -> list[Event]:
    """``load_page``: a page's current state by its aggregate id, None when it is new."""
    events = thread.recognize(state, context)
    closure = state.closure
    assert closure is not None  # thread.recognize admitted only an awaiting closure
    closer = Context(actor=closure.author, now=context.now, command_id=context.command_id, is_human=context.is_human)
    for path in closure.crystallization.canon_pages:
        events += page.crystallize(
            load_page(family_id("page", path)), closer, page=path, thread=state.key, closure_n=closure.n,
            summary=closure.summary, patch_summary=closure.crystallization.patch_summary,
        )
    return events
