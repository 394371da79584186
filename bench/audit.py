"""Audit throughput against the raw replay of the same stream, measured in the same run.

    python -m bench.audit            # 200,000 events
    python -m bench.audit --quick    # 20,000 events

The history is real: quorum proposals opened and acked to acceptance by the rules themselves,
appended straight through the recorder. The audit re-runs the rules on every command, folds
every aggregate and rebuilds every view; the baseline only reads the messages (a raw nats-py
ordered consumer). Target: at least 0.3x.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from athenaeum.aggregates import quorum
from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.quorum_state import evolve
from athenaeum.aggregates.rules import Context
from athenaeum.aggregates.state import fold
from athenaeum.services.audit.auditor import Audit
from athenaeum.services.runtime.nats_server import NatsServer
from bench.baselines import raw_replay_rate
from bench.store import rate, report, stream_env

ELECTORATE = [f"agent-{n}" for n in range(1, 10)]
T0 = datetime(2026, 11, 30, tzinfo=timezone.utc)
project = fold(evolve)


def fill(app: AthenaeumApplication, events: int) -> int:
    """Proposals of nine electors, each acked to acceptance: 11 events apiece."""
    written, proposal, pending = 0, 0, []
    while written < events:
        now = T0 + timedelta(seconds=proposal)
        context = Context(actor="proposer", now=now, command_id=f"open-{proposal}")
        history = quorum.open_proposal(None, context, proposal_id=f"{proposal:08X}", text="Adopt", electorate=ELECTORATE,
                                       threshold=9, deadline=now + timedelta(days=1))
        for agent in ELECTORATE:
            state = project(None, history)
            history += quorum.ack(state, Context(actor=agent, now=now, command_id=f"ack-{proposal}-{agent}"))
        pending += history
        written += len(history)
        proposal += 1
        if len(pending) >= 990:
            app.recorder.insert_events([app.mapper.to_stored_event(e) for e in pending])
            pending = []
    if pending:
        app.recorder.insert_events([app.mapper.to_stored_event(e) for e in pending])
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20,000 events instead of 200,000")
    args = parser.parse_args()
    size = 20_000 if args.quick else 200_000
    with tempfile.TemporaryDirectory() as workdir, NatsServer(store_dir=Path(workdir) / "nats") as server:
        env = stream_env(server)
        app = AthenaeumApplication(env=env)
        count = fill(app, size)

        raw_rate = asyncio.run(raw_replay_rate(server.url, f"{env['ATHENAEUM_STREAM']}.ev.>", count))
        audit = Audit(app)
        audit_rate = rate(count, audit.run)
        app.close()
        hard = audit.report.summary["HARD"]
        print(f"(a stream of {count:,} events; the audit found {hard} HARD findings)")
        report("audit (rules, folds, views)", audit_rate, "ev/s", "raw ordered consumer", raw_rate, "(target >= 0.3x)")


if __name__ == "__main__":
    main()
