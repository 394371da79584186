"""``athenaeum ratify ...``: ratification verbs, from arguments to command Structs."""

from __future__ import annotations

import argparse
from pathlib import Path

from athenaeum.events.commands import Command
from athenaeum.events.ratification import AtomRef, Caveat, Decision, DissentItem, HumanChoice, Mode, Note, Resolution
from athenaeum.events.ratification_commands import (
    CancelRatification,
    CastVote,
    InitRatification,
    RecordHumanDecision,
    SplitAtom,
)
from athenaeum.services.cli.listing import add_list_verb, list_query
from athenaeum.services.cli.args import UsageError, agents, moment, read_text, within


NAMES = ("ratify",)


def add_verbs(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    ratify = subparsers.add_parser("ratify", help="attest an immutable artifact as a roster")
    verbs = ratify.add_subparsers(dest="verb", required=True, metavar="VERB")

    init = verbs.add_parser("init", parents=[common], help="freeze an artifact for a roster to ratify")
    init.add_argument("topic")
    init.add_argument("--roster", required=True, help="a,b,c")
    source = init.add_mutually_exclusive_group(required=True)
    source.add_argument("--artifact", type=Path, help="file whose exact bytes are frozen")
    source.add_argument("--text", help="the artifact inline")
    init.add_argument("--mode", choices=[m.value for m in Mode], default=Mode.STANDARD.value)
    window = init.add_mutually_exclusive_group()
    window.add_argument("--expires-in", help="e.g. 72h, 14d, 30m (default 72h)")
    window.add_argument("--expires-at", help="ISO 8601 time")
    init.add_argument("--supersedes")
    init.add_argument("--sha256", help="fail unless the artifact has this SHA-256")

    vote = verbs.add_parser("vote", parents=[common], help="SIGN or DISSENT")
    vote.add_argument("topic")
    vote.add_argument("--sha256", required=True, help="the frozen artifact's SHA-256 you attest")
    choice = vote.add_mutually_exclusive_group(required=True)
    choice.add_argument("--sign", action="store_true")
    choice.add_argument("--dissent", action="store_true")
    vote.add_argument("--atom", action="append", default=[], help="SECTION::ANCHOR::OBJECTION[::RESOLUTION]")

    decide = verbs.add_parser("decide", parents=[common], help="(human) decide a decomposed ratification")
    decide.add_argument("topic")
    decide.add_argument("--decision", required=True, choices=[c.value for c in HumanChoice])
    decide.add_argument("--note", action="append", default=[], help="A1=TEXT")
    decide.add_argument("--caveat", action="append", default=[], help="A1=verifier:CMD or A1=ticket:ID")
    decide.add_argument("--atom", action="append", default=[], help="an atom to decompose further")

    split = verbs.add_parser("split", parents=[common], help="(merge writer) split an atom after decompose-further")
    split.add_argument("topic")
    split.add_argument("--atom", required=True)
    split.add_argument("--into", action="append", required=True, help="SECTION::ANCHOR::OBJECTION[::RESOLUTION]")

    cancel = verbs.add_parser("cancel", parents=[common], help="(initiator or human) cancel while open")
    cancel.add_argument("topic")

    add_list_verb(verbs, common, "ratifications", ["open", "pending-human", "ratified", "rejected", "canceled"])
    show = verbs.add_parser("show", parents=[common], help="where a ratification stands (votes stay blind)")
    show.add_argument("topic")
    show.add_argument("--after", type=int, help="wait for this position instead of the ledger's head (0: for nothing)")
    show.add_argument("--render", choices=["ratified", "decomposition", "log", "manifest"], help="print a record")


def command_from(args: argparse.Namespace) -> Command:
    match args.verb:
        case "init":
            artifact = read_text(args.artifact, "--artifact") if args.artifact else args.text
            return InitRatification(
                topic=args.topic,
                roster=agents(args.roster),
                artifact=artifact,
                mode=Mode(args.mode),
                expires_at=moment(args.expires_at, "--expires-at"),
                expires_in=within(args.expires_in, "--expires-in"),  # from the service's clock, not this machine's
                sha256=args.sha256,
                artifact_origin=str(args.artifact) if args.artifact else "inline",
                supersedes=args.supersedes,
            )
        case "vote":
            dissent = [_dissent_item(text, "--atom") for text in args.atom]
            return CastVote(
                topic=args.topic,
                sha256=args.sha256,
                decision=Decision.SIGN if args.sign else Decision.DISSENT,
                dissent=dissent,
            )
        case "decide":
            return RecordHumanDecision(
                topic=args.topic,
                decision=HumanChoice(args.decision),
                notes=[Note(*_pair(text, "--note")) for text in args.note],
                caveats=[_caveat(text) for text in args.caveat],
                atoms=args.atom,
            )
        case "split":
            return SplitAtom(topic=args.topic, atom=args.atom, into=[_dissent_item(t, "--into") for t in args.into])
        case "cancel":
            return CancelRatification(topic=args.topic)
    raise UsageError(f"unknown verb {args.verb}")


def query_from(args: argparse.Namespace) -> tuple[str, dict] | None:
    """The read-model query a verb asks, if it is a query."""
    if args.verb == "list":
        return list_query("ratification", args)
    if args.verb != "show":
        return None
    if args.render:
        return "ratification.render", {"topic": args.topic, "record": args.render}
    return "ratification.show", {"topic": args.topic}


# The facts scripts need from a reply's events, lifted to its top level.
SUMMARIES = {
    "ArtifactFrozen": lambda event: {
        "topic": event["originator_id"],
        "artifact_sha256": event["artifact_sha256"],
        "expires_at": event["expires_at"],
    },
}


def _dissent_item(text: str, option: str) -> DissentItem:
    parts = text.split("::")
    if len(parts) not in (3, 4):
        raise UsageError(f"{option}: {text!r} is not SECTION::ANCHOR::OBJECTION[::RESOLUTION]")
    resolution = parts[3] if len(parts) == 4 else Resolution.REWRITE.value
    try:
        proposed = Resolution(resolution)
    except ValueError as error:
        choices = ", ".join(r.value for r in Resolution)
        raise UsageError(f"{option}: resolution {resolution!r} is not one of {choices}") from error
    return DissentItem(atom=AtomRef(section=parts[0], anchor=parts[1]), objection=parts[2], proposed_resolution=proposed)


def _pair(text: str, option: str) -> tuple[str, str]:
    atom, separator, value = text.partition("=")
    if not separator or not atom:
        raise UsageError(f"{option}: {text!r} is not ATOM=VALUE")
    return atom, value


def _caveat(text: str) -> Caveat:
    atom, value = _pair(text, "--caveat")
    kind, separator, detail = value.partition(":")
    if not separator or kind not in ("verifier", "ticket"):
        raise UsageError(f"--caveat: {text!r} is not A1=verifier:CMD or A1=ticket:ID")
    return Caveat(atom=atom, **{kind: detail})
