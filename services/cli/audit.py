"""``athenaeum audit | replay | export | verify-export``: what auditors run. They read the
stream itself, not the services' answers."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import msgspec
from eventsourcing.persistence import OperationalError, ProgrammingError

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.services.identity.accounts import auditor_key
from athenaeum.services.audit import export as ledger_export
from athenaeum.services.audit.auditor import Audit
from athenaeum.services.audit.bucket_check import BucketCheck
from athenaeum.services.audit.checkpoints import Anchors
from athenaeum.services.audit.digest import SHA256_TEXT
from athenaeum.services.audit.findings import Report
from athenaeum.services.audit.kept_outside import Expected, KeptOutside, every_message
from athenaeum.services.cli import output
from athenaeum.services.cli.args import UsageError, position, slugs
from athenaeum.services.cli.progress import progress
from athenaeum.services.views.read_models import ReadModelStore

NAMES = ("audit", "replay", "export", "verify-export")
STDIN = "-"


def add_verbs(subparsers: argparse._SubParsersAction, reader: argparse.ArgumentParser,
              json_option: argparse.ArgumentParser) -> None:
    """``reader``: where the ledger is (data dir, NATS); ``json_option``: for the verbs that
    answer with more than the records they write."""
    audit = subparsers.add_parser("audit", parents=[reader, json_option],
                                  help="replay the ledger and check it against the rules")
    audit.add_argument("--until", help="a position, or an ISO 8601 time")
    audit.add_argument("--family", dest="only_family", choices=["ratification", "quorum", "thread", "page", "task", "fleet", "ledger",
                                            "views"], help="report only this family's findings (the whole ledger is replayed)")
    audit.add_argument("--humans", default=os.environ.get("ATHENAEUM_HUMANS", ""),
                       help="human principals, for a ledger from before serve recorded its humans (default $ATHENAEUM_HUMANS)")
    audit.add_argument("--read-models", help="the live views to compare (default: the data dir's SQLite)")
    audit.add_argument("--expect", action="append", default=[], metavar="POSITION:DIGEST",
                       help="a digest of the ledger through a position, from your own records (an export's last line, "
                            "a checkpoint): a ledger that shows another, or ends before it, is HARD (repeatable)")

    replay = subparsers.add_parser("replay", parents=[reader, json_option],
                                   help="write every aggregate's records as of a point")
    replay.add_argument("--until", help="a position, or an ISO 8601 time (default: the ledger's last entry)")
    replay.add_argument("--out", required=True, type=Path, help="a new or empty directory for the records")
    replay.add_argument("--humans", default=os.environ.get("ATHENAEUM_HUMANS", ""),
                        help="human principals, for a ledger from before serve recorded its humans (default $ATHENAEUM_HUMANS)")

    export = subparsers.add_parser("export", parents=[reader], help="the ledger as JSON Lines, on stdout")
    export.add_argument("--since", type=position, default=1, help="the first position to export (from 1)")
    export.add_argument("--until", help="a position, or an ISO 8601 time")

    verify = subparsers.add_parser("verify-export", parents=[json_option],
                                   help="check an export against its checkpoints, offline")
    verify.add_argument("file", nargs="?", default=STDIN, help="the export (default, or -: stdin, as from athenaeum export | ...)")


def run(args: argparse.Namespace, url: str | None, data_dir: Path) -> int:
    """The verb's exit code: 0 clean, 1 any HARD finding, 2 usage, 3 unreachable. What an
    auditor runs answers with a line, never a traceback: a failure the verb itself did not
    foresee (it reports what history holds as findings) stops it with its words, and 1."""
    try:
        return _run(args, url, data_dir)
    except (UsageError, OperationalError, ProgrammingError, BrokenPipeError):
        raise  # said as for every verb; a reader that stopped early (``| head``) is no failure
    except Exception as error:  # noqa: BLE001
        print(f"athenaeum: {args.family} stopped: {error!r}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, url: str | None, data_dir: Path) -> int:
    if args.family == "verify-export":
        if args.file == STDIN:
            if sys.stdin.isatty():  # nothing piped: waiting on a terminal would look like a hang
                raise UsageError("verify-export reads the export from a file, or from a pipe: "
                                 "athenaeum export | athenaeum verify-export")
            findings, entries = ledger_export.verify(sys.stdin.buffer)
        else:
            try:
                with Path(args.file).open("rb") as lines:
                    findings, entries = ledger_export.verify(lines)
            except OSError as error:
                raise UsageError(f"cannot read {args.file}: {error.strerror}") from error
        return _show(Report(findings=findings, entries=entries), args.json)
    until = _point(getattr(args, "until", None))
    expected = [_expected(text) for text in getattr(args, "expect", [])]
    if args.family == "replay" and args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        # Files of a later point left beside this one's would show states that never were.
        raise UsageError(f"--out: {args.out} is not an empty directory; replay writes one point in time into a new one")
    with _ledger(url, data_dir) as app:
        if args.family == "export":
            position, moment = (until, None) if isinstance(until, int) else (None, until)
            # On a terminal the lines themselves show how far it got; a bar only when they go elsewhere.
            with progress("exporting", app.recorder.last_position() - args.since + 1, shown=not sys.stdout.isatty()) as done:
                for count, line in enumerate(ledger_export.export(app, since=args.since, until=position,
                                                                  until_time=moment)):
                    sys.stdout.buffer.write(line)
                    if count % ledger_export.READ_BATCH == 0:
                        done(count)
            return 0
        humans = slugs(args.humans, "--humans")
        if args.family == "replay":
            from athenaeum.services.audit.replay import replay

            try:
                with progress("replaying", app.recorder.last_position()) as done:
                    report = replay(app, args.out, humans, until, progress=done)
            except OSError as error:
                raise UsageError(f"--out: cannot write the records under {args.out}: {error.strerror}") from error
            if args.json:
                print(msgspec.json.encode({"ok": True, "wrote": str(report), "out": str(args.out)}).decode())
            else:
                print(f"wrote {report} to {args.out}")
            return 0
        live = _live_views(args.read_models, data_dir)
        bucket = BucketCheck.read(app) if until is None else None  # before the replay: it then reads every entry written
        snapshots = app.factory.snapshots_recorder()  # type: ignore[attr-defined]
        outside = KeptOutside(expected + _anchors(app, data_dir, live),
                              every_message(snapshots.select_messages) if snapshots else (), app.mapper)
        position, moment = (until, None) if isinstance(until, int) else (None, until)
        with progress("auditing", app.recorder.last_position()) as done:
            audit = Audit(app, humans=humans, live=live, family=args.only_family, progress=done, outside=outside,
                          bucket=bucket)
            report = audit.run(until_position=position, until_time=moment)
        return _show(report, args.json)


def _expected(text: str) -> Expected:
    position, _, digest = text.partition(":")
    if not position.isdigit() or int(position) < 1 or not SHA256_TEXT.fullmatch(digest):
        raise UsageError(f"--expect: {text!r} is not POSITION:DIGEST (a position from 1, and 64 lowercase hex digits)")
    return Expected(int(position), digest, f"--expect {text}")


def _anchors(app: AthenaeumApplication, data_dir: Path, live: ReadModelStore | None) -> list[Expected]:
    """The ledger's anchors: kept by serve in the data dir and in the read models."""
    try:
        kept = Anchors(app.recorder.log.stream, data_dir, live).kept()  # type: ignore[attr-defined]
    except ValueError as unreadable:
        raise UsageError(str(unreadable)) from None
    return [Expected(anchor.position, anchor.sha256, f"the anchor in {where}") for where, anchor in kept]


def _point(text: str | None) -> int | datetime | None:
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as error:
        raise UsageError(f"--until: {text!r} is neither a position nor an ISO 8601 time") from error
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


@contextmanager
def _ledger(url: str | None, data_dir: Path) -> Iterator[AthenaeumApplication]:
    assert url is not None, "every verb but verify-export is given the deployment's URL"
    env = {"PERSISTENCE_MODULE": "athenaeum.services.jetstream", "ATHENAEUM_NATS_URL": url,
           "ATHENAEUM_CREATE_STREAM": "n"}  # an auditor reads the ledger, and writes nothing
    # As the auditor the embedded server admits, unless $ATHENAEUM_NATS_KEY names another.
    if not os.environ.get("ATHENAEUM_NATS_KEY") and (key := auditor_key(data_dir / "nats")) is not None:
        env["ATHENAEUM_NATS_KEY"] = str(key)
    if stream := os.environ.get("ATHENAEUM_STREAM"):
        env["ATHENAEUM_STREAM"] = stream
    app = AthenaeumApplication(env=env)
    try:
        yield app
    finally:
        app.close()


def _live_views(url: str | None, data_dir: Path) -> ReadModelStore | None:
    default = data_dir / "views.sqlite"
    if not url and not default.exists():
        return None
    try:
        return ReadModelStore(url or str(default), create=False)
    except ValueError as error:
        raise UsageError(f"--read-models: {error}") from error


def _show(report: Report, as_json: bool) -> int:
    if as_json:
        print(msgspec.json.encode({"findings": report.findings, "summary": report.summary}).decode())
    else:
        summary = report.summary
        aggregates = f", {summary['events']:,} events in {summary['aggregates']:,} aggregates" if summary["aggregates"] else ""
        print(f"{summary['entries']:,} entries{aggregates}: "
              f"{summary['HARD']} HARD, {summary['WARN']} WARN, {summary['INFO']} INFO")
        for finding in report.findings:
            where = f"@{finding.position}" if finding.position is not None else ""
            print(output.shown(f"  {finding.severity:<4} {finding.code:<24} {finding.family:<12} {finding.id}{where}: "
                               f"{finding.message}"))
    return 1 if report.summary["HARD"] else 0
