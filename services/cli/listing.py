"""``athenaeum <family> list``: a page of a family's records, filtered, with a cursor to the next
(see ``queries.lists``)."""

from __future__ import annotations

import argparse

from athenaeum.services.cli.args import UsageError, agent

DEFAULT_LIMIT = 50


def add_list_verb(verbs: argparse._SubParsersAction, common: argparse.ArgumentParser, what: str,
                  statuses: list[str], involved: bool = True) -> None:
    """``list`` among ``verbs``; ``involved``: whether --mine and --awaiting mean anything here."""
    listed = verbs.add_parser("list", parents=[common], help=f"{what}, a page at a time")
    listed.add_argument("--status", choices=statuses, help="only those in this status")
    if involved:
        listed.add_argument("--mine", action="store_true", help="only those you (--as) take part in")
        listed.add_argument("--awaiting", metavar="AGENT", help="only those waiting on this agent")
    listed.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"rows at most (default {DEFAULT_LIMIT})")
    listed.add_argument("--cursor", help="start after this key: the 'next' a page ended with")
    listed.add_argument("--after", type=int, help="wait for this position instead of the ledger's head (0: for nothing)")


def list_query(family: str, args: argparse.Namespace) -> tuple[str, dict]:
    """The ``<family>.list`` query the arguments ask."""
    fields: dict = {"limit": args.limit}
    if not 1 <= args.limit <= 1000:
        raise UsageError("--limit: from 1 to 1000 rows")
    for name in ("status", "cursor"):
        if getattr(args, name, None) is not None:
            fields[name] = getattr(args, name)
    if getattr(args, "mine", False):
        if not args.actor:
            raise UsageError("--mine: --as AGENT (or ATHENAEUM_AGENT) names whose")
        fields["mine"] = agent(args.actor, "--as")
    if getattr(args, "awaiting", None) is not None:
        fields["awaiting"] = agent(args.awaiting, "--awaiting")
    return f"{family}.list", fields
