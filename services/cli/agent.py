"""``athenaeum agent ...`` and ``athenaeum key new``: the fleet roster and principals' keys.

Keys live in ``<data-dir>/keys/NAME.nk``; registering a principal without ``--public-key``
makes its key pair there (or uses the one already there), so ``--as NAME`` then signs with it.
"""

from __future__ import annotations

import argparse
import sys
import secrets
from pathlib import Path

from athenaeum.events.commands import Command
from athenaeum.events.fleet_commands import IssueToken, RegisterAgent, RevokeAgent, RevokeToken, RotateKey
from athenaeum.services.cli.listing import add_list_verb, list_query
from athenaeum.services.cli.args import UsageError, agent
from athenaeum.services.cli.nats_accounts import COMPOSE_ROUTES
from athenaeum.services.commands.credentials import token_sha256
from athenaeum.services.identity.keys import (
    KeyProblem, key_pair, key_path, new_seed, public_key, read_key, verifier, write_seed,
)

NAMES = ("agent",)
NEW, OLD = ".new", ".old"  # a key until the ledger took it; the one a rotation replaced, kept
SUMMARIES: dict = {}


def add_verbs(subparsers: argparse._SubParsersAction, common: argparse.ArgumentParser,
              data_dir_option: argparse.ArgumentParser) -> None:
    key = subparsers.add_parser("key", help="principals' key pairs (Ed25519 nkeys), on this machine")
    key_verbs = key.add_subparsers(dest="verb", required=True, metavar="VERB")
    new = key_verbs.add_parser("new", parents=[data_dir_option],
                               help="make NAME's key pair in <data-dir>/keys/NAME.nk and print its public key")
    new.add_argument("name")
    new.add_argument("--out", type=Path, help="write the seed here instead")
    accounts = key_verbs.add_parser(
        "accounts", parents=[data_dir_option],
        help="write the NATS accounts configuration (and the services' keys) for a deployment's own servers")
    accounts.add_argument("--out", type=Path, required=True, help="the directory kept as the deployment's secrets")
    accounts.add_argument("--nats", help="admit every key the roster of the ledger there binds (URL[,URL...])")
    accounts.add_argument("--admit", action="append", default=[], metavar="PUBLIC_KEY",
                          help="admit this public key too (a human's, before the ledger records it); repeatable")
    accounts.add_argument("--routes", default=",".join(COMPOSE_ROUTES), metavar="HOST:PORT[,...]",
                          help="the cluster's nodes, for its cluster.conf (default: compose's three)")

    roster = subparsers.add_parser("agent", help="the fleet roster: principals and their keys")
    verbs = roster.add_subparsers(dest="verb", required=True, metavar="VERB")
    register = verbs.add_parser("register", parents=[common],
                                help="register a principal with its public key (by a human, or anyone on an empty roster)")
    register.add_argument("name")
    register.add_argument("--human", action="store_true", help="a human principal, who decides")
    register.add_argument("--public-key", help="its public nkey (U...); default: make its key pair in <data-dir>/keys")
    rotate = verbs.add_parser("rotate-key", parents=[common], help="bind a principal to a new key (itself or a human)")
    rotate.add_argument("name")
    rotate.add_argument("--public-key", help="the new public nkey; default: a new key pair in <data-dir>/keys/NAME.nk, "
                                             "once the ledger took it (the old one kept as NAME.nk.old)")
    revoke = verbs.add_parser("revoke", parents=[common], help="end a principal's key (itself or a human)")
    revoke.add_argument("name")
    revoke.add_argument("--reason", default="")
    add_list_verb(verbs, common, "the fleet's principals", ["active", "dormant", "human", "revoked"], involved=False)
    token = verbs.add_parser("token", parents=[common],
                             help="issue an HTTP bearer token for an agent, shown once (itself or a human)")
    token.add_argument("name")
    token.add_argument("--revoke", metavar="TOKEN", help="end this token instead")


def new_key(args: argparse.Namespace, data_dir: Path) -> str:
    """``key new``: the public key of the pair it wrote (where the seed went is said on stderr,
    so ``$(athenaeum key new NAME)`` is the key alone)."""
    agent(args.name, "NAME")
    path = args.out or key_path(data_dir, args.name)
    seed = new_seed()
    try:
        write_seed(path, seed)
    except KeyProblem as problem:
        raise UsageError(str(problem)) from None
    print(f"athenaeum: {args.name}'s seed is in {path}", file=sys.stderr)
    return public_key(key_pair(seed))


def command_from(args: argparse.Namespace) -> Command:
    agent(args.name, "NAME")
    match args.verb:
        case "register":
            return RegisterAgent(name=args.name, human=args.human, public_key=_key(args, rotating=False))
        case "rotate-key":
            return RotateKey(name=args.name, public_key=_key(args, rotating=True))
        case "revoke":
            return RevokeAgent(name=args.name, reason=args.reason)
        case "token" if args.revoke:
            return RevokeToken(name=args.name, token_sha256=token_sha256(args.revoke))
        case "token":
            args.new_token = secrets.token_urlsafe(32)
            return IssueToken(name=args.name, token_sha256=token_sha256(args.new_token))
    raise UsageError(f"unknown verb {args.verb}")


def unrepeatable(args: argparse.Namespace) -> str | None:
    """Why the command cannot be sent again as it was, if so: a token is made for each run (a
    key pair is not: an earlier try's, whose answer was lost, goes again)."""
    if args.verb == "token" and not args.revoke:
        return ("a new token is made for each run, so no run sends this one again; one issued with a lost reply "
                "is known to nobody: run it again for another")
    return None


def _key(args: argparse.Namespace, rotating: bool) -> str:
    """The public key given, checked; else the pair in <data-dir>/keys/NAME.nk; else (none
    there, or a rotation) a new pair in NAME.nk.new, which ``finished`` puts in place once the
    ledger took it. A NAME.nk.new already there is an earlier try's, whose answer was lost: the
    same key goes again, so a command that did land is not locked out of its key."""
    if args.public_key is not None:
        try:
            verifier(args.public_key)
        except KeyProblem as problem:
            raise UsageError(f"--public-key: {problem}") from None
        return args.public_key
    path = key_path(args.data_dir, args.name)
    pending = path.with_name(path.name + NEW)
    try:
        if path.exists() and not rotating:
            return public_key(read_key(path))
        if not pending.exists():
            write_seed(pending, new_seed())
        args.pending_key = pending
        return public_key(read_key(pending))
    except KeyProblem as problem:
        raise UsageError(str(problem)) from None


def finished(args: argparse.Namespace, accepted: bool) -> str | None:
    """After the ledger answered: a key pair made for the command takes its place (the one a
    rotation ended kept beside it) or, refused, is removed; a token issued is shown, once (the
    ledger keeps only its SHA-256). What to tell the user, if anything."""
    if accepted and (token := getattr(args, "new_token", None)) is not None:
        print(token)
        return f"{args.name}'s bearer token (above) is shown only now: send it as Authorization: Bearer <token>"
    pending = getattr(args, "pending_key", None)
    if pending is None:
        return None
    if not accepted:
        pending.unlink(missing_ok=True)
        return None
    path = key_path(args.data_dir, args.name)
    if path.exists():
        path.replace(path.with_name(path.name + OLD))
    pending.replace(path)
    return f"{args.name}'s key is in {path}"


def query_from(args: argparse.Namespace) -> tuple[str, dict] | None:
    return list_query("agent", args) if args.verb == "list" else None
