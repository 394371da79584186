"""``athenaeum page ...``: canon pages."""

from __future__ import annotations

import argparse
from pathlib import Path

from athenaeum.events import natural_key
from athenaeum.events.commands import Command
from athenaeum.aggregates.page import AUTHOR_LIFECYCLES
from athenaeum.events.page import CanonLevel, Endorsing, Lifecycle, Scope
from athenaeum.events.page_commands import (
    ApprovePage,
    ChangeLifecycle,
    DisputePage,
    EditPage,
    EndorsePage,
    InitPage,
    ReadPage,
    ResolveDispute,
)
from athenaeum.services.cli.listing import add_list_verb, list_query
from athenaeum.services.cli.args import UsageError, read_text

NAMES = ("page",)


def add_verbs(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    page = subparsers.add_parser("page", help="canon pages: revisions, endorsements, canon")
    verbs = page.add_subparsers(dest="verb", required=True, metavar="VERB")

    init = verbs.add_parser("init", parents=[common], help="write a page's first revision")
    init.add_argument("path")
    init.add_argument("--file", required=True, type=Path)
    init.add_argument("--scope", choices=[s.value for s in Scope], default=Scope.STRUCTURAL.value)
    init.add_argument("--from-thread", help="the thread whose closure this page carries")

    read = verbs.add_parser("read", parents=[common], help="record that you read the current revision")
    read.add_argument("path")
    read.add_argument("--session", required=True)

    endorse = verbs.add_parser("endorse", parents=[common], help="endorse what you read in this session")
    endorse.add_argument("path")
    endorse.add_argument("--status", required=True, choices=[e.value for e in Endorsing])
    endorse.add_argument("--session", required=True)
    endorse.add_argument("--rev", type=int, help="the rev you endorse (default: the current one)")

    edit = verbs.add_parser("edit", parents=[common], help="revise a page (significance is computed)")
    edit.add_argument("path")
    edit.add_argument("--file", required=True, type=Path)
    edit.add_argument("--significant", action="store_true", help="mark the edit significant regardless")

    dispute = verbs.add_parser("dispute", parents=[common], help="contest a section or claim")
    dispute.add_argument("path")
    dispute.add_argument("--section", required=True)
    dispute.add_argument("--thread", help="the thread where it is discussed")

    resolve = verbs.add_parser("resolve", parents=[common], help="(human) decide a dispute")
    resolve.add_argument("path")
    resolve.add_argument("--agent", required=True)
    resolve.add_argument("--decision", required=True)
    resolve.add_argument("--thread", required=True)

    approve = verbs.add_parser("approve", parents=[common], help="(human) approve canon")
    approve.add_argument("path")
    approve.add_argument("--level", required=True, choices=[level.value for level in CanonLevel])

    lifecycle = verbs.add_parser("lifecycle", parents=[common], help="(author) proposal, working or accepted")
    lifecycle.add_argument("path")
    lifecycle.add_argument("--to", required=True, choices=[level.value for level in AUTHOR_LIFECYCLES])
    lifecycle.add_argument("--reason", required=True)

    add_list_verb(verbs, common, "pages", [lifecycle.value for lifecycle in Lifecycle])
    show = verbs.add_parser("show", parents=[common], help="a page and where every agent stands")
    show.add_argument("path")
    show.add_argument("--after", type=int, help="wait for this position instead of the ledger's head (0: for nothing)")
    show.add_argument("--render", choices=["consensus"], help="print the front matter's consensus block")


def command_from(args: argparse.Namespace) -> Command:
    match args.verb:
        case "init":
            return InitPage(page=args.path, content=read_text(args.file, "--file"), scope=Scope(args.scope),
                            from_thread=args.from_thread)
        case "read":
            return ReadPage(page=args.path, session_id=args.session)
        case "endorse":
            return EndorsePage(page=args.path, status=Endorsing(args.status), session_id=args.session, rev=args.rev)
        case "edit":
            return EditPage(page=args.path, content=read_text(args.file, "--file"), significant=args.significant)
        case "dispute":
            return DisputePage(page=args.path, section=args.section, thread=args.thread)
        case "resolve":
            return ResolveDispute(page=args.path, agent=args.agent, decision=args.decision, thread=args.thread)
        case "approve":
            return ApprovePage(page=args.path, level=CanonLevel(args.level))
        case "lifecycle":
            return ChangeLifecycle(page=args.path, to=Lifecycle(args.to), reason=args.reason)
    raise UsageError(f"unknown verb {args.verb}")


def query_from(args: argparse.Namespace) -> tuple[str, dict] | None:
    if args.family == "page" and args.verb == "list":
        return list_query("page", args)
    if args.family != "page" or args.verb != "show":
        return None
    return ("page.consensus" if args.render else "page.show"), {"page": args.path}


SUMMARIES = {
    "PageInitialized": lambda event: {"page": natural_key(event["originator_id"]), "rev": event["rev"],
                                      "content_sha256": event["content_sha256"]},
    "PageRevised": lambda event: {"page": natural_key(event["originator_id"]), "rev": event["rev"],
                                  "significant": event["significant"], "change_ratio": event["change_ratio"]},
}
