"""``athenaeum task ...``: durable tasks and their arbitration, for operators and scripts."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import msgspec

from athenaeum.events import natural_key
from athenaeum.events.commands import Command
from athenaeum.events.task import Ruling, Trigger, Verdict
from athenaeum.events.task_commands import (
    ClaimTask,
    CreateTask,
    FindingInput,
    PostReview,
    PostRuling,
    ResetTask,
    ResolutionInput,
    TransitionTask,
)
from athenaeum.services.cli.args import UsageError, read_text

NAMES = ("task",)


def add_verbs(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    task = subparsers.add_parser("task", help="durable engineer/reviewer tasks and their arbitration")
    verbs = task.add_subparsers(dest="verb", required=True, metavar="VERB")
    scoped = argparse.ArgumentParser(add_help=False, parents=[common])
    scoped.add_argument("--project", default=os.environ.get("ATHENAEUM_PROJECT"),
                        help="the project the task belongs to ($ATHENAEUM_PROJECT)")

    create = verbs.add_parser("create", parents=[scoped], help="create a task; prints its id")
    create.add_argument("--title", required=True)
    create.add_argument("--plan", help="the plan's path (a task may be its title alone)")
    create.add_argument("--budget", type=int, default=5, help="review cycles before arbitration (default 5)")
    create.add_argument("--reviewer-role", action="append", default=[])

    claim = verbs.add_parser("claim", parents=[scoped], help="claim a pending task")
    claim.add_argument("id", type=int)

    transition = verbs.add_parser("transition", parents=[scoped], help="move a task along one edge of its FSM")
    transition.add_argument("id", type=int)
    transition.add_argument("--to", required=True, help="claimed, engineering, built, reviewing, completed or revising "
                                                        "(as the reviews call for), arbitrating, failed, integrated")
    transition.add_argument("--payload", default="{}", help='JSON, e.g. {"buildStatus": "clean", "commitSha": "abc123"}')

    review = verbs.add_parser("review", parents=[scoped], help="post a reviewer's verdict and findings")
    review.add_argument("id", type=int)
    review.add_argument("--cycle", type=int, required=True, help="the cycle reviewed: the task's current one, from 0")
    review.add_argument("--role", required=True)
    review.add_argument("--verdict", required=True, choices=[v.value for v in Verdict])
    review.add_argument("--markdown-file", type=Path, help="the review's full text")
    review.add_argument("--finding", action="append", default=[],
                        help='JSON: {"severity": "BLOCKING", "title": ..., "filePath": ..., "line": ...}')

    rule = verbs.add_parser("rule", parents=[scoped], help="post an arbitrator's ruling")
    rule.add_argument("id", type=int)
    rule.add_argument("--trigger", required=True, help=" or ".join(t.value for t in Trigger))
    rule.add_argument("--ruling", required=True, help=", ".join(r.value for r in Ruling))
    rule.add_argument("--markdown-file", type=Path, required=True, help="the ruling's reasoning")
    rule.add_argument("--upheld", type=int, help="(rule) the finding that must be addressed")
    rule.add_argument("--retired", type=int, help="(rule) the finding that must not be")
    rule.add_argument("--rationale", help="(rule) why")

    reset = verbs.add_parser("reset", parents=[scoped], help="(operator) start a finished task's new epoch")
    reset.add_argument("id", type=int)

    listed = verbs.add_parser("list", parents=[scoped], help="the project's tasks (--status arbitrating: an arbitrator's work)")
    listed.add_argument("--status", help="only the tasks in this status")
    listed.add_argument("--after", type=int, help="wait for this position instead of the ledger's head (0: for nothing)")
    show = verbs.add_parser("show", parents=[scoped], help="a task, its reviews or its arbitrations")
    show.add_argument("id", type=int)
    show.add_argument("--after", type=int, help="wait for this position instead of the ledger's head (0: for nothing)")
    shown = show.add_mutually_exclusive_group()
    shown.add_argument("--reviews", type=int, metavar="CYCLE", help="the reviews of one cycle")
    shown.add_argument("--arbitrations", action="store_true", help="every ruling, oldest first")
    shown.add_argument("--addendum", metavar="TRIGGER", help="the addendum of a rule ruling")


def command_from(args: argparse.Namespace) -> Command:
    project = _project(args)
    match args.verb:
        case "create":
            return CreateTask(project_id=project, title=args.title, plan_path=args.plan,
                              review_cycle_budget=args.budget, reviewer_roles=args.reviewer_role)
        case "claim":
            return ClaimTask(project_id=project, task_id=args.id)
        case "transition":
            # Typed as the service decodes it: the command is signed as the service re-encodes it.
            body = {"projectId": project, "taskId": args.id, "to": args.to, "payload": _json(args.payload, "--payload")}
            return _converted(TransitionTask, body, "--to or --payload")
        case "review":
            findings = [_converted(FindingInput, _json(text, "--finding"), "--finding") for text in args.finding]
            markdown = read_text(args.markdown_file, "--markdown-file") if args.markdown_file else ""
            return PostReview(project_id=project, task_id=args.id, cycle=args.cycle, reviewer_role=args.role,
                              verdict=Verdict(args.verdict), raw_markdown=markdown, findings=findings)
        case "rule":
            resolution = None
            if args.upheld is not None or args.retired is not None:
                resolution = ResolutionInput(upheld_finding_id=args.upheld or 0, retired_finding_id=args.retired or 0,
                                             rationale=args.rationale or "")
            return PostRuling(project_id=project, task_id=args.id, trigger=args.trigger, ruling=args.ruling,
                              ruling_markdown=read_text(args.markdown_file, "--markdown-file"),
                              contradiction_resolution=resolution)
        case "reset":
            return ResetTask(project_id=project, task_id=args.id)
    raise UsageError(f"unknown verb {args.verb}")


def query_from(args: argparse.Namespace) -> tuple[str, dict] | None:
    if args.verb == "list":
        return "task.list", {"project_id": _project(args)} | ({"status": args.status} if args.status else {})
    if args.verb != "show":
        return None
    fields = {"task_id": args.id, "project_id": _project(args)}
    if args.reviews is not None:
        return "task.reviews", fields | {"cycle": args.reviews}
    if args.arbitrations:
        return "task.arbitrations", fields
    if args.addendum:
        return "task.addendum", fields | {"trigger": args.addendum}
    return "task.show", fields


SUMMARIES = {
    "TaskIdIssued": lambda event: {"id": event["number"]},
    "ReviewPosted": lambda event: {"runId": event["originator_version"],
                                   "findingIds": [finding["id"] for finding in event["findings"]]},
    "RulingPosted": lambda event: {"runId": event["originator_version"], "taskId": int(natural_key(event["originator_id"]))},
}


def _project(args: argparse.Namespace) -> str:
    if not args.project:
        raise UsageError("--project (or ATHENAEUM_PROJECT) names the task's project")
    return args.project


def _json(text: str, option: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as error:
        raise UsageError(f"{option}: not JSON: {error}") from error
    if not isinstance(value, dict):
        raise UsageError(f"{option}: a JSON object")
    return value


def _converted(kind: type, value: dict, option: str):  # type: ignore[no-untyped-def]
    try:
        return msgspec.convert(value, type=kind)
    except msgspec.ValidationError as error:
        raise UsageError(f"{option}: {error}") from error
