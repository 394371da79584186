"""Audit throughput against the raw replay of the same stream, measured in the same run.

    python -m bench.audit            # 200,000 events
    python -m bench.audit --quick    # 20,000 events

The history is real: quorum proposals opened and acked to acceptance through the command
handler, each command signed by its sender's registered key and stored with its events and its
signature; and the same history again, its senders bound to no key and its commands unsigned
(taken on their word, as a deployment that authenticates nobody takes them). The audit verifies
every signature, decides every stored command again, folds every aggregate and rebuilds every
view; the baseline only reads the messages (a raw nats-py ordered consumer). Targets: at least
0.5x re-running the commands (the unsigned history), 0.4x with the signatures checked.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.families import fold_of
from athenaeum.events.commands import Command
from athenaeum.events.fleet_commands import RegisterAgent
from athenaeum.events.quorum_commands import AckProposal, ProposeQuorum
from athenaeum.services.audit.auditor import Audit
from athenaeum.services.commands.credentials import ASSERTED, Credential, signed
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.replies import Reply
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.identity.keys import key_pair, new_seed, public_key
from athenaeum.services.jetstream.factory import stream_config
from athenaeum.services.runtime.nats_server import NatsServer

from bench.baselines import raw_replay_rate
from bench.store import rate, report, stream_env

ELECTORATE = [f"agent-{n}" for n in range(1, 10)]
HUMAN, PROPOSER = "ada", "proposer"
T0 = datetime(2026, 11, 30, tzinfo=timezone.utc)
AT_ONCE = 4  # proposals filled side by side: each elector has up to four open at once


async def fill(url: str, stream: str, events: int, signing: bool = True) -> int:
    """Proposals of nine electors, each acked to acceptance through the command handler: ten
    commands and 11 events apiece, every command stored with its events as the service does.
    Each signed by its sender's key, or (``signing=False``) by no one, its sender bound to none
    (but the human, whose every command is signed: she registers the others)."""
    store = await JetStreamCommandStore.open([url], stream_config(stream, 1, immutable=True), fold_of)
    handler = CommandHandler(store, clock=lambda: T0)
    keys = {name: key_pair(new_seed()) for name in (HUMAN, PROPOSER, *ELECTORATE)}

    def credential(command: Command, actor: str) -> Credential:
        return signed(keys[actor], store.ledger_id, command, actor) if signing or actor == HUMAN else ASSERTED

    for name, key in keys.items():  # the human first, on the empty roster (no key to sign with yet); then the rest, by her
        command = RegisterAgent(name=name, human=name == HUMAN, public_key=public_key(key)
                                if signing or name == HUMAN else None, command_id=f"register-{name}")
        assert (await handler.send(command, HUMAN, credential(command, HUMAN) if name != HUMAN else ASSERTED)).ok

    async def send(command: Command, actor: str) -> Reply:
        return await handler.send(command, actor, credential(command, actor))

    async def proposal(number: int) -> int:
        proposal_id = f"{number:08X}"
        opened = ProposeQuorum(text="Adopt", electorate=ELECTORATE, threshold=9, deadline=T0 + timedelta(days=1),
                               proposal_id=proposal_id, command_id=f"open-{proposal_id}")
        replies = [await send(opened, PROPOSER)]
        for agent in ELECTORATE:
            replies.append(await send(AckProposal(proposal_id=proposal_id, command_id=f"ack-{proposal_id}"), agent))
        assert all(reply.ok for reply in replies), [reply.error for reply in replies if not reply.ok]
        return len(ELECTORATE) + 2

    written, number = 0, 0
    while written < events:
        written += sum(await asyncio.gather(*(proposal(number + n) for n in range(AT_ONCE))))
        number += AT_ONCE
    await store.close()
    return written


def audited(server: NatsServer, size: int, signing: bool) -> tuple[int, int, float, float, float]:
    """A history filled, then audited: its events, the HARD findings, the audit's rate, and a
    raw read's before it and after it."""
    env = stream_env(server)
    count = asyncio.run(fill(server.url, env["ATHENAEUM_STREAM"], size, signing))
    app = AthenaeumApplication(env=env)
    subjects = f"{env['ATHENAEUM_STREAM']}.>"
    # Read raw before the audit and after it: the baseline is their mean, and both are shown
    # (one raw read alone varies by a third from run to run on a shared machine).
    before = asyncio.run(raw_replay_rate(server.url, subjects, count))
    audit = Audit(app)
    audit_rate = rate(count, audit.run)
    app.close()
    after = asyncio.run(raw_replay_rate(server.url, subjects, count))
    return count, audit.report.summary["HARD"], audit_rate, before, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20,000 events instead of 200,000")
    args = parser.parse_args()
    size = 20_000 if args.quick else 200_000
    with tempfile.TemporaryDirectory() as workdir, NatsServer(store_dir=Path(workdir) / "nats") as server:
        for signing, name, target in ((False, "audit (commands unsigned)", "(target >= 0.5x)"),
                                      (True, "audit (every command signed)", "(target >= 0.4x)")):
            count, hard, audit_rate, before, after = audited(server, size, signing)
            print(f"(a stream of {count:,} events; the audit found {hard} HARD findings; raw reads {before:,.0f} "
                  f"before it and {after:,.0f} after)")
            report(name, audit_rate, "ev/s", "raw ordered consumer", (before + after) / 2, target)


if __name__ == "__main__":
    main()
