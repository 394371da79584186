"""``athenaeum quorum ...``: quorum verbs, from arguments to command Structs."""

from __future__ import annotations

import argparse
import re

from athenaeum.events import natural_key
from athenaeum.events.commands import Command
from athenaeum.events.quorum import CoordinatorDecision, Preset
from athenaeum.events.quorum_commands import AckProposal, BreakTie, NackProposal, OverrideProposal, ProposeQuorum
from athenaeum.services.cli.listing import add_list_verb, list_query
from athenaeum.services.cli.args import UsageError, agents, moment, within

_DECISIONS = [decision.value for decision in CoordinatorDecision]
_THRESHOLD = re.compile(r"([0-9]+)(?:/([0-9]+))?")


NAMES = ("quorum",)


def add_verbs(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    quorum = subparsers.add_parser("quorum", help="k-of-n ACK/NACK proposals to the fleet")
    verbs = quorum.add_subparsers(dest="verb", required=True, metavar="VERB")

    propose = verbs.add_parser("propose", parents=[common], help="put a proposal to an electorate")
    propose.add_argument("--text", required=True)
    propose.add_argument("--electorate", required=True, help="a,b,c")
    propose.add_argument("--threshold", help="K, or K/N with N the electorate's size (this or --preset is needed)")
    propose.add_argument("--preset", choices=[p.value for p in Preset],
                         help="advisory 5/9, blocking 7/9, scaled to the electorate (--threshold wins over it)")
    deadline = propose.add_mutually_exclusive_group()
    deadline.add_argument("--deadline", help="ISO 8601 time (default: in 24h)")
    deadline.add_argument("--deadline-in", help="e.g. 24h, 2d, 30m")
    propose.add_argument("--veto", action="store_true", help="any NACK rejects (emergency veto)")
    propose.add_argument("--coordinator", help="breaks ties, may veto and override")
    propose.add_argument("--id", dest="proposal_id", type=str.upper, help="8 hex characters, any case (default: generated)")

    ack = verbs.add_parser("ack", parents=[common], help="ACK a proposal")
    ack.add_argument("proposal_id", metavar="ID", type=str.upper)

    nack = verbs.add_parser("nack", parents=[common], help="NACK a proposal (reason COORDINATOR_VETO vetoes)")
    nack.add_argument("proposal_id", metavar="ID", type=str.upper)
    nack.add_argument("--reason", required=True)

    tiebreak = verbs.add_parser("tiebreak", parents=[common], help="(coordinator) decide a tie")
    tiebreak.add_argument("proposal_id", metavar="ID", type=str.upper)
    tiebreak.add_argument("--decision", required=True, choices=_DECISIONS)

    override = verbs.add_parser("override", parents=[common], help="(coordinator) decide while voting is open")
    override.add_argument("proposal_id", metavar="ID", type=str.upper)
    override.add_argument("--decision", required=True, choices=_DECISIONS)
    override.add_argument("--reason", required=True)

    add_list_verb(verbs, common, "proposals", ["open", "awaiting-coordinator", "accepted", "rejected", "vetoed", "expired"])
    show = verbs.add_parser("show", parents=[common], help="where a proposal stands, votes and all")
    show.add_argument("proposal_id", metavar="ID", type=str.upper, help="8 hex characters, any case")
    show.add_argument("--after", type=int, help="wait for this position instead of the ledger's head (0: for nothing)")
    show.add_argument("--announcement", action="store_true", help="print the fleet channel announcement")


def command_from(args: argparse.Namespace) -> Command:
    match args.verb:
        case "propose":
            if args.threshold is None and args.preset is None:
                raise UsageError("--threshold K[/N] or --preset advisory|blocking says how many ACKs accept")
            threshold, total = _threshold(args.threshold)
            return ProposeQuorum(
                text=args.text,
                electorate=agents(args.electorate),
                threshold=threshold,
                total=total,
                preset=Preset(args.preset) if args.preset else None,
                deadline=moment(args.deadline, "--deadline"),
                deadline_in=within(args.deadline_in, "--deadline-in"),  # from the service's clock, not this machine's
                veto_on_nack=args.veto,
                coordinator=args.coordinator,
                proposal_id=args.proposal_id,
            )
        case "ack":
            return AckProposal(proposal_id=args.proposal_id)
        case "nack":
            return NackProposal(proposal_id=args.proposal_id, reason=args.reason)
        case "tiebreak":
            return BreakTie(proposal_id=args.proposal_id, decision=CoordinatorDecision(args.decision))
        case "override":
            return OverrideProposal(
                proposal_id=args.proposal_id, decision=CoordinatorDecision(args.decision), reason=args.reason
            )
    raise UsageError(f"unknown verb {args.verb}")


def query_from(args: argparse.Namespace) -> tuple[str, dict] | None:
    if args.verb == "list":
        return list_query("quorum", args)
    if args.verb != "show":
        return None
    return ("quorum.announcement" if args.announcement else "quorum.show"), {"proposal_id": args.proposal_id}


SUMMARIES = {
    "ProposalOpened": lambda event: {
        "proposal_id": natural_key(event["originator_id"]),
        "threshold": event["threshold"],
        "total": event["total"],
        "deadline": event["deadline"],
    },
}


def _threshold(text: str | None) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    match = _THRESHOLD.fullmatch(text)
    if match is None:
        raise UsageError(f"--threshold: {text!r} is not K or K/N (whole numbers, like 5 or 5/9)")
    return int(match.group(1)), int(match.group(2)) if match.group(2) else None
