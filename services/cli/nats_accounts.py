"""``athenaeum key accounts``: for a deployment's own NATS servers (compose's), the accounts
configuration they include, and the services' and the auditor's keys, in a directory kept as
secrets. The embedded server needs none of it: ``serve`` keeps its own up to date."""

from __future__ import annotations

import asyncio
from pathlib import Path

from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates.fleet import Fleet
from athenaeum.events.fleet import FLEET_ID
from athenaeum.services.cli.args import UsageError
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.identity.accounts import AUDITOR_KEY, SERVICE_KEY, admitted, ledger_accounts, service_keys
from athenaeum.services.identity.keys import KeyProblem, verifier
from athenaeum.services.jetstream.factory import stream_config

ACCOUNTS_FILE = "accounts.conf"


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
