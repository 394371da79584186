"""``athenaeum key accounts``: for a deployment's own NATS servers (compose's), the accounts
configuration they include, their cluster's routes with the one credential a route must show,
and the services' and the auditor's keys, in a directory kept as secrets. The embedded server
needs none of it: ``serve`` keeps its own up to date, and has no cluster port."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Sequence
from pathlib import Path

from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates.fleet import Fleet
from athenaeum.events.fleet import FLEET_ID
from athenaeum.services.cli.args import UsageError
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.identity.accounts import AUDITOR_KEY, SERVICE_KEY, admitted, ledger_accounts, service_keys
from athenaeum.services.identity.keys import KeyProblem, verifier, write_seed
from athenaeum.services.jetstream.factory import stream_config

ACCOUNTS_FILE = "accounts.conf"
CLUSTER_FILE = "cluster.conf"  # included in each node's ``cluster`` block (deploy/nats.conf)
ROUTE_SECRET = "route.secret"  # the routes' password, made once: every node must keep agreeing on it
COMPOSE_ROUTES = ("nats-1:6222", "nats-2:6222", "nats-3:6222")
_ROUTE = re.compile(r"[A-Za-z0-9.-]+:[0-9]{1,5}")


def write_accounts(out: Path, url: str | None, admit: list[str], stream: str) -> str:
    """Write ``out/accounts.conf`` admitting the keys the roster at ``url`` binds (when given)
    and the public keys ``admit`` (the humans ``serve --humans NAME=KEY`` is to record, before
    any roster); the keys are made once. What was written, in a line."""
    for key in admit:
        try:
            verifier(key)
        except KeyProblem as problem:
            raise UsageError(f"--admit: {problem}") from None
    try:
        service, auditor = service_keys(out)
    except KeyProblem as problem:
        raise UsageError(f"--out: {problem}") from None
    roster = asyncio.run(_roster(url, out / SERVICE_KEY, stream)) if url else None
    agents = admitted(roster) | frozenset(admit)
    path, staged = out / ACCOUNTS_FILE, out / f"{ACCOUNTS_FILE}.new"
    staged.write_text(ledger_accounts(service, auditor, stream, agents).config())
    staged.replace(path)  # a server reloading never reads half of it
    return (f"wrote {path}, admitting {len(agents)} principals' keys; the services connect with {out / SERVICE_KEY}, "
            f"auditors with {out / AUDITOR_KEY}")


async def _roster(url: str, key: Path, stream: str) -> Fleet | None:
    store = await JetStreamCommandStore.open(url.split(","), stream_config(stream, 1, immutable=True), fold_of,
                                             key=key, create=False)
    try:
        return await store.load(FLEET_ID)
    finally:
        await store.close()


def write_cluster(out: Path, routes: Sequence[str]) -> str:
    """Write ``out/cluster.conf``: the credential a node asks of every route, and the routes to
    the nodes (``HOST:PORT``) showing it, so that a server that merely reaches the cluster port
    cannot join and publish into the ledger's account. What was written, in a line."""
    for route in routes:
        if not _ROUTE.fullmatch(route):
            raise UsageError(f"--routes: {route!r} is not HOST:PORT")
    secret = out / ROUTE_SECRET
    if not secret.exists():
        try:
            write_seed(secret, secrets.token_hex(32).encode())
        except KeyProblem as problem:
            raise UsageError(f"--out: {problem}") from None
    password = secret.read_text().strip()
    urls = ", ".join(f"nats-route://route:{password}@{route}" for route in routes)
    path, staged = out / CLUSTER_FILE, out / f"{CLUSTER_FILE}.new"
    staged.write_text("# Written by athenaeum key accounts: the routes' credential, and the routes showing it.\n"
                      f'authorization {{ user: "route", password: "{password}" }}\nroutes: [{urls}]\n')
    staged.chmod(0o600)
    staged.replace(path)
    return f"wrote {path}: routes to {', '.join(routes)}, each showing the password in {secret}"
