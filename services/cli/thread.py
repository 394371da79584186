"""``athenaeum thread ...``: dialogue thread verbs, from arguments to command Structs."""

from __future__ import annotations

import argparse
import math

from athenaeum.events import natural_key
from athenaeum.events.commands import Command
from athenaeum.events.thread import Axis, Vector
from athenaeum.events.thread_commands import (
    AskQuestion,
    CloseThread,
    Contribute,
    OpenThread,
    RecognizeClosure,
    RefuseClosure,
    ReopenThread,
)
from athenaeum.services.cli.listing import add_list_verb, list_query
from athenaeum.services.cli.args import UsageError

NAMES = ("thread",)
_AXES = [axis.value for axis in Axis]


def add_verbs(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    thread = subparsers.add_parser("thread", help="dialogue threads: numbered, scored contributions")
    verbs = thread.add_subparsers(dest="verb", required=True, metavar="VERB")

    opened = verbs.add_parser("open", parents=[common], help="open a thread with its context and first entry")
    opened.add_argument("slug")
    opened.add_argument("--context", required=True, help="written once, never edited")
    opened.add_argument("--target", required=True, help="N,C,R: the scores the discussion aims for")
    opened.add_argument("--body", required=True, help="the first entry")
    opened.add_argument("--axis", choices=_AXES, help="the axis this entry means to move")
    opened.add_argument("--question", action="append", default=[], help="an open question (repeatable)")
    opened.add_argument("--topic", action="append", default=[], help="a topic (repeatable)")
    opened.add_argument("--participant", action="append", default=[], help="an agent taking part (repeatable)")

    ask = verbs.add_parser("ask", parents=[common], help="append an open question")
    ask.add_argument("slug")
    ask.add_argument("--question", required=True)

    contribute = verbs.add_parser("contribute", parents=[common], help="score the last entry and add yours")
    contribute.add_argument("slug")
    _evaluation(contribute)
    contribute.add_argument("--body", required=True)
    contribute.add_argument("--axis", choices=_AXES)

    close = verbs.add_parser("close", parents=[common], help="score the last entry and propose a crystallization")
    close.add_argument("slug")
    _evaluation(close)
    close.add_argument("--current", required=True, help="N,C,R: the sum of every evaluation, yours included")
    close.add_argument("--summary", required=True)
    close.add_argument("--page", action="append", required=True, help="a canon page to write (repeatable)")
    close.add_argument("--patch-summary", required=True)

    reopen = verbs.add_parser("reopen", parents=[common], help="score the closure and reopen (once per closure)")
    reopen.add_argument("slug")
    _evaluation(reopen)
    reopen.add_argument("--reason", required=True, help="why the closure was premature")
    reopen.add_argument("--discovery", required=True, help="what is new")

    recognize = verbs.add_parser("recognize", parents=[common], help="(human) recognize the closure: crystallize")
    recognize.add_argument("slug")

    refuse = verbs.add_parser("refuse", parents=[common], help="(human) refuse the closure")
    refuse.add_argument("slug")
    refuse.add_argument("--reason", required=True)

    add_list_verb(verbs, common, "threads", ["open", "awaiting-crystallization", "crystallized",
                                             "closed-without-crystallization"])
    show = verbs.add_parser("show", parents=[common], help="where a thread stands: sum, deficit, role")
    show.add_argument("slug")
    show.add_argument("--after", type=int, help="wait for this position instead of the ledger's head (0: for nothing)")
    show.add_argument("--render", action="store_true", help="print the thread as markdown")


def _evaluation(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--eval", help="N,C,R in [0,1]: your scores of the preceding entry")
    parser.add_argument("--ref", type=int, help="the preceding entry's n, to be sure it is the one you scored")


def command_from(args: argparse.Namespace) -> Command:
    axis = Axis(args.axis) if getattr(args, "axis", None) else None
    match args.verb:
        case "open":
            return OpenThread(
                slug=args.slug, context=args.context, target=vector(args.target, "--target"), body=args.body,
                declared_axis=axis, questions=args.question, topics=args.topic, participants=args.participant,
            )
        case "ask":
            return AskQuestion(slug=args.slug, question=args.question)
        case "contribute":
            return Contribute(slug=args.slug, body=args.body, eval=_scores(args), ref=args.ref, declared_axis=axis)
        case "close":
            return CloseThread(
                slug=args.slug, eval=_scores(args), ref=args.ref, current=vector(args.current, "--current"),
                summary=args.summary, pages=args.page, patch_summary=args.patch_summary,
            )
        case "reopen":
            return ReopenThread(slug=args.slug, eval=_scores(args), ref=args.ref, reason=args.reason,
                                discovery=args.discovery)
        case "recognize":
            return RecognizeClosure(slug=args.slug)
        case "refuse":
            return RefuseClosure(slug=args.slug, reason=args.reason)
    raise UsageError(f"unknown verb {args.verb}")


def query_from(args: argparse.Namespace) -> tuple[str, dict] | None:
    if args.verb == "list":
        return list_query("thread", args)
    if args.verb != "show":
        return None
    return ("thread.render" if args.render else "thread.show"), {"slug": args.slug}


def vector(text: str, option: str) -> Vector:
    """``N,C,R`` as three numbers."""
    parts = text.split(",")
    try:
        values = [float(part) for part in parts]
        if len(values) != 3 or not all(math.isfinite(value) for value in values):
            raise ValueError(text)
        return Vector(*values)
    except ValueError as error:
        raise UsageError(f"{option}: {text!r} is not N,C,R (three numbers, like 0.6,0.4,0.5)") from error


def _scores(args: argparse.Namespace) -> Vector | None:
    return vector(args.eval, "--eval") if args.eval is not None else None


SUMMARIES = {
    "ThreadOpened": lambda event: {"slug": natural_key(event["originator_id"])},
    "EntryAppended": lambda event: {"n": event["n"]},
}
