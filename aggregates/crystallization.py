"""Recognizing a closure crystallizes it (PROTOCOLS.md section 3): each target page is
initialised, or revised, by the closer, with a link back to the thread, in the recognition's
own append. The thread's scores never become endorsements.

The thread family's ``decide`` calls it on a recognition; the pages' states arrive in the
context, read beforehand (by the service, and again by the audit) as ``page_ids`` names them.
"""

from __future__ import annotations

from athenaeum.aggregates import page
from athenaeum.aggregates.page_state import Page
from athenaeum.aggregates.rules import Context
from athenaeum.aggregates.thread_state import Closure
from athenaeum.events import Event, family_id
from athenaeum.events.page_commands import InitPage


def page_ids(closure: Closure) -> tuple[str, ...]:
    """The page aggregates a closure lands on."""
    return tuple(family_id("page", path) for path in closure.crystallization.canon_pages)


def crystallize(thread: str, closure: Closure, context: Context) -> list[Event]:
    """The closure of ``thread`` on each of its pages, as ``context.states`` holds them (None: new)."""
    closer = Context(actor=closure.author, now=context.now, command_id=context.command_id)
    events: list[Event] = []
    for path, aggregate_id in zip(closure.crystallization.canon_pages, page_ids(closure)):
        events += _land(context.states.get(aggregate_id), path, thread, closure, closer)
    return events


def _land(state: Page | None, path: str, thread: str, closure: Closure, closer: Context) -> list[Event]:
    section = f"## From thread {thread} (closure {closure.n})\n\n{closure.crystallization.patch_summary}\n"
    if state is None:
        title = path.rsplit("/", 1)[-1].removesuffix(".md")
        content = f"# {title}\n\n{closure.summary}\n\n{section}"
        return page.init_page(None, InitPage(page=path, content=content, from_thread=thread), closer)
    return page.revise(state, closer, content=f"{state.content.rstrip()}\n\n{section}", crystallized_from=thread)
