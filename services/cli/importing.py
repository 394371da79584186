"""``athenaeum import [PATH...] [--postgres URL]``: the original tools' records (their folders,
the arbitrator's task tables), reported, then recorded as history."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import msgspec

from athenaeum.aggregates.rules import Invalid, require_schedulable
from athenaeum.events.commands import Command
from athenaeum.services.cli import output
from athenaeum.services.cli.args import UsageError, agent, agents, moment
from athenaeum.services.cli.progress import progress
from athenaeum.services.commands.replies import Reply
from athenaeum.services.importing import report
from athenaeum.services.importing.quorum_file import OpenProposals
from athenaeum.services.importing.run import TreeReading, send_all

NAMES = ("import",)
SUMMARIES: dict = {}
DONE, FINDINGS, REFUSED = 0, 1, 1


def add_verbs(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    verb = subparsers.add_parser("import", parents=[common], help="import the original tools' records as history")
    verb.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="where to look for the original layouts")
    verb.add_argument("--postgres", metavar="URL",
                      help="the original arbitrator's PostgreSQL database, whose task tables to import")
    verb.add_argument("--electorate", metavar="A,B,C",
                      help="who may vote on the open quorum proposals imported (their scratchpads name nobody); "
                           "without it an open one is reported and not imported")
    verb.add_argument("--deadline", metavar="TIME",
                      help="when the open quorum proposals imported close (ISO 8601); default: a day after each "
                           "one's opened_at")
    verb.add_argument("--dry-run", action="store_true",
                      help="report what each record becomes and the rules it breaks; write nothing "
                           "(exit 1 when there are findings)")


def query_from(args: argparse.Namespace) -> None:
    return None


def command_from(args: argparse.Namespace) -> None:
    return None  # the records are read by ``read_only`` and each sent by ``write``


def read_only(args: argparse.Namespace) -> int | None:
    """The dry run's report and exit code; None when the records are to be written."""
    if not args.paths and args.postgres is None:
        raise UsageError("import: give a PATH to look under, or --postgres URL, or both")
    # A path that is not there is a mistyped argument, not an empty history: importing "nothing"
    # from it would pass silently. (A file there of no known layout is listed as unknown.)
    missing = [str(path) for path in args.paths if not path.exists()]
    if missing:
        raise UsageError(f"PATH: {', '.join(missing)}: no such file or directory; nothing is imported")
    electorate = None if args.electorate is None else [agent(name, "--electorate") for name in agents(args.electorate)]
    if electorate is not None and (not electorate or len(set(electorate)) != len(electorate)):
        raise UsageError("--electorate: name each agent once, at least one")
    open_ones = OpenProposals(electorate, _schedulable(moment(args.deadline, "--deadline")))
    args.reading = TreeReading(args.paths, args.postgres, open_ones)
    if not args.dry_run:
        return None  # each record is read as the ones before it are sent
    args.found = list(args.reading)
    _show(args, None)
    return FINDINGS if _nothing_importable(args.found) or report.findings(args.found, args.reading.logs) else DONE


def _schedulable(deadline: datetime | None) -> datetime | None:
    """``--deadline`` as the rules take it: a time the timer can meet, else a usage error
    before anything is read."""
    if deadline is None:
        return None
    try:
        return require_schedulable(deadline, "--deadline")
    except Invalid as refusal:
        raise UsageError(f"{refusal.message}; nothing is imported") from None


def write(args: argparse.Namespace, send_together: Callable[[list[Command]], list[Reply]]) -> int:
    reading = args.reading
    with progress("importing", len(reading)) as advance:
        outcomes = send_all(reading, send_together, advance)
    args.found = reading.read
    _show(args, outcomes)
    refused = any(outcome and outcome.startswith("refused") for outcome in outcomes)
    return REFUSED if _nothing_importable(args.found) or refused else DONE


def _nothing_importable(found: list[report.Record]) -> bool:
    """Records were found and none of them can be imported: a failure, said on stderr, not
    the success an empty import of nothing would be (a tree of no record exits 0)."""
    if not found or any(record.command is not None for record in found):
        return False
    print(f"import: none of the {len(found)} records found can be imported (see their findings); "
          "nothing is written", file=sys.stderr)
    return True


def _show(args: argparse.Namespace, outcomes: list[str | None] | None) -> None:
    if args.json:
        print(msgspec.json.encode(report.as_json(args.found, args.reading.unknown, args.reading.logs,
                                                 outcomes)).decode())
        return
    for line in report.as_text(args.found, args.reading.unknown, args.reading.logs):
        print(output.shown(line))  # file names and texts as found: on a terminal, no control character obeyed
    for line in report.outcome_lines(args.found, outcomes or []):
        print(output.shown(line))
