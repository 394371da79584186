"""What must hold after every fault: each acknowledged command is in the ledger exactly once,
the views show what the ledger holds, and the audit finds nothing HARD."""

from __future__ import annotations

import json
from collections import Counter

from athenaeum.services.client import SyncClient
from tests.faults.load import Key, Load, Sent, shared_proposal
from tests.services.conftest import Served, until


def commands_in(export: str) -> Counter[Key]:
    """How many times the ledger holds each command, by who sent it and its id: a command's
    record is on its first event, or on its marker (``athenaeum export``'s ``command``)."""
    held: Counter[Key] = Counter()
    for line in export.splitlines():
        entry = json.loads(line)
        record = entry.get("command")
        if record is not None and entry.get("kind") in ("event", "marker"):
            held[(record["actor"], record["command"]["command_id"])] += 1
    return held


def assert_the_ledger_holds_what_was_acknowledged(served: Served, load: Load, sent: Sent) -> None:
    every_command_was_answered(load, sent)
    views_reach_the_ledger(served, load)
    each_acknowledged_command_is_held_once(served, load, sent)
    the_audit_compares_the_views_and_finds_nothing_hard(served)


# A command answered after so long waited on the fault: unfaulted, they take milliseconds.
# (A paused leader's commands may simply wait for the next one's election, and be answered
# within the client's timeout, never sent again.)
FAULT_FELT = 1.0


def every_command_was_answered(load: Load, sent: Sent) -> None:
    """Acknowledged, each (none refused by a rule, none given up on), and some only when sent
    again or after waiting out the fault."""
    assert not sent.unanswered and not sent.refused, (sent.unanswered, sent.refused)
    assert len(sent.acknowledged) == load.total
    assert sent.repeats > 0 or sent.longest_wait >= FAULT_FELT, (
        f"the fault came and went without the load noticing (no command sent again, none waited "
        f"more than {sent.longest_wait:.2f}s)")


def each_acknowledged_command_is_held_once(served: Served, load: Load, sent: Sent) -> None:
    export = served.run("export")
    assert export.returncode == 0, export.stderr
    held = {key: count for key, count in commands_in(export.stdout).items() if key[0] in load.agents}
    assert {key: held.get(key, 0) for key in sent.acknowledged} == dict.fromkeys(sent.acknowledged, 1)
    assert set(held) == set(sent.acknowledged)  # and nothing the load was not told of


def the_audit_compares_the_views_and_finds_nothing_hard(served: Served) -> None:
    audit = served.run("audit", "--json")
    report = json.loads(audit.stdout)
    hard = [finding for finding in report["findings"] if finding["severity"] == "HARD"]
    assert audit.returncode == 0 and hard == [], hard or audit.stderr
    # Views are compared only where they reach the ledger's last event (else an INFO says so).
    assert not [finding for finding in report["findings"] if finding["code"] == "views_not_compared"], report


def views_reach_the_ledger(served: Served, load: Load) -> None:
    """A read waits for the views to reach the ledger's head: each round's shared proposal is
    accepted there, with every agent's vote."""
    first = sorted(load.agents)[0]
    with SyncClient(served.url, first, seed=load.agents[first]) as client:
        for round_number in range(load.rounds):
            # A read the views could not answer in time is "unavailable": asked again, as a client would.
            answer = until(lambda: client.query("quorum.show", proposal_id=shared_proposal(round_number)),
                           lambda answer: answer["ok"], timeout=30)
            assert answer["ok"], answer
            shown = answer["result"]
            assert (shown["status"], sorted(shown["acks"])) == ("accepted", sorted(load.agents)), answer
