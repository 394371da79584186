"""Who may connect to the embedded nats-server, and what each may reach (DESIGN.md §11).

The services' account (``LEDGER``) owns JetStream: the ledger, its snapshots and timers, the
views bucket. Its users are the services' key, with every right, and the auditor's, which may
read the ledger and the bucket and write nothing. Agents and humans are nkey users of
``AGENTS``, an account without JetStream: they reach only the command and query services
``LEDGER`` exports, imported with ``share: true`` so that the server stamps every request with
``Nats-Request-Info`` naming the caller's key, and the bucket's changes as a stream, to read;
each receives only the replies to its own inbox prefix (``inbox_prefix``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import nkeys

from athenaeum.aggregates.fleet import Fleet
from athenaeum.services.identity.keys import (
    KeyProblem, inbox_prefix, new_seed, public_key, read_key, verifier, write_seed,
)
from athenaeum.services.views.bucket import bucket_of

LEDGER_ACCOUNT = "LEDGER"
AGENTS_ACCOUNT = "AGENTS"
SERVICE_KEY = "service.nk"  # in the embedded server's directory, beside its store
AUDITOR_KEY = "auditor.nk"
REQUEST_INFO_HEADER = "Nats-Request-Info"
# What agents may ask: the commands, the queries, and the ledger's id that signatures name.
SERVICES_EXPORTED = ("athenaeum.cmd.>", "athenaeum.query.>", "athenaeum.ledger")


def service_keys(directory: Path) -> tuple[nkeys.KeyPair, nkeys.KeyPair]:
    """The services' and the auditor's key pairs in ``directory``, made on the first start."""
    for path in (directory / SERVICE_KEY, directory / AUDITOR_KEY):
        if not path.exists():
            write_seed(path, new_seed())
    return read_key(directory / SERVICE_KEY), read_key(directory / AUDITOR_KEY)


def auditor_key(directory: Path) -> Path | None:
    """The auditor's seed file of the embedded server in ``directory``, if it made one."""
    path = directory / AUDITOR_KEY
    return path if path.exists() else None


def caller_key(request_info: str | None) -> str | None:
    """The public key of the agent the server says sent a request (``None``: not an agent's
    request, which only the services' own account can send)."""
    if request_info is None:
        return None
    try:
        info = json.loads(request_info)
    except ValueError:
        info = None
    user = info.get("user") if isinstance(info, dict) else None
    # Stamped by the server on every request that crossed the import: one without a user key
    # proves nobody, and is refused as another actor's would be.
    return user if isinstance(user, str) else ""


def admitted(roster: Fleet | None) -> frozenset[str]:
    """The keys the roster binds now: every principal's, but a revoked one's."""
    if roster is None:
        return frozenset()
    return frozenset(key for name in roster.keys if (key := roster.key_of(name)) is not None)


def ledger_accounts(service: nkeys.KeyPair, auditor: nkeys.KeyPair, stream: str, agents: frozenset[str]) -> Accounts:
    """The accounts of a deployment whose ledger is ``stream``: its streams and its views bucket."""
    bucket = bucket_of(stream)
    return Accounts(service=public_key(service), auditor=public_key(auditor), agents=agents,
                    streams=(stream, f"{stream}_SNAPSHOTS", f"KV_{bucket}"), bucket=bucket)


@dataclass(frozen=True)
class Accounts:
    service: str  # public keys
    auditor: str
    agents: frozenset[str]
    streams: tuple[str, ...]  # the ledger's streams an auditor reads: events, snapshots, the views bucket's
    bucket: str  # the views bucket, whose changes agents may watch

    def config(self) -> str:
        reads = _read_only(self.auditor, self.streams)
        # A key the roster binds but the server could not take (malformed, or one of the
        # services' own) would make it refuse the whole configuration: such a key is left out.
        agents = sorted(key for key in self.agents if key not in (self.service, self.auditor) and _is_user_key(key))
        exports = [{"service": subject} for subject in SERVICES_EXPORTED] + [{"stream": f"$KV.{self.bucket}.>"}]
        imports = [{"service": {"account": LEDGER_ACCOUNT, "subject": subject}, "share": True}
                   for subject in SERVICES_EXPORTED]
        imports.append({"stream": {"account": LEDGER_ACCOUNT, "subject": f"$KV.{self.bucket}.>"}})
        accounts = {
            LEDGER_ACCOUNT: {
                "jetstream": "enabled",
                "users": [{"nkey": self.service}, {"nkey": self.auditor, "permissions": reads}],
                "exports": exports,
            },
            AGENTS_ACCOUNT: {"users": [{"nkey": key, "permissions": self._agent(key)} for key in agents],
                             "imports": imports},
        }
        # The configuration format reads JSON as it is.
        return f"accounts: {json.dumps(accounts, indent=2)}\n"

    def _agent(self, key: str) -> dict[str, object]:
        """An agent's rights in the account it shares with the others: to send requests to the
        services, and to receive its own replies and the views' changes, nothing else. It
        could otherwise see another's vote on its way (or its reply) and answer it itself."""
        return {"publish": {"allow": list(SERVICES_EXPORTED)},
                "subscribe": {"allow": [f"{inbox_prefix(key)}.>", f"$KV.{self.bucket}.>"]}}


def _is_user_key(key: str) -> bool:
    try:
        verifier(key)
    except KeyProblem:
        return False
    return True


def _read_only(key: str, streams: Iterable[str]) -> dict[str, object]:
    """An auditor's rights: stream information, (batched) direct gets and message gets on
    ``streams`` (the views bucket's stream takes no direct gets, as nats-py makes it), the
    queries, and nothing that changes anything: no publish onto their subjects, no update,
    purge or delete, no consumer (one could deliver the ledger onto any subject, the command
    service's among them)."""
    # Any stream's information: a mistyped name is then told "no such stream", not silence.
    allow = ["$JS.API.INFO", "$JS.API.STREAM.INFO.*", *SERVICES_EXPORTED[1:]]
    for stream in streams:
        allow += [f"$JS.API.STREAM.MSG.GET.{stream}", f"$JS.API.DIRECT.GET.{stream}", f"$JS.API.DIRECT.GET.{stream}.>"]
    # Its own inbox only: the services' replies (their reads' among them) are not its to see.
    return {"publish": {"allow": allow}, "subscribe": {"allow": [f"{inbox_prefix(key)}.>"]}}

