"""``athenaeum quorum ...`` driven through ``athenaeum serve`` as agents drive it."""

from __future__ import annotations

import asyncio
import json
import threading

import nats

from athenaeum.events.quorum_commands import ProposeQuorum
from athenaeum.services.client import SyncClient
from tests.services.conftest import Served, until

NINE = ",".join(f"agent-{i}" for i in range(1, 10))


def propose(served: Served, *options: str, actor: str = "alice") -> dict:
    done = served.run("quorum", "propose", "--text", "Adopt the ledger", *options, "--json", actor=actor)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def show(served: Served, proposal_id: str, after: int | None = None) -> dict:
    extra = ["--after", str(after)] if after is not None else []
    return json.loads(served.run("quorum", "show", proposal_id, *extra, "--json").stdout)


def vote(served: Served, proposal_id: str, agent: str, nack: str | None = None) -> dict:
    verb = ["nack", proposal_id, "--reason", nack] if nack else ["ack", proposal_id]
    return json.loads(served.run("quorum", *verb, "--json", actor=agent).stdout)


def test_advisory_five_of_nine_accepts_at_the_fifth_ack(served: Served) -> None:
    opened = propose(served, "--electorate", NINE, "--preset", "advisory")
    pid = opened["proposal_id"]
    assert (opened["threshold"], opened["total"], len(pid)) == (5, 9, 8) and opened["deadline"] and opened["position"]
    for i in range(1, 5):
        vote(served, pid, f"agent-{i}")
    assert show(served, pid)["status"] == "open"
    fifth = vote(served, pid, "agent-5")
    assert [e["type"] for e in fifth["events"]] == ["ProposalAcked", "ProposalAccepted"]
    shown = show(served, pid, after=fifth["position"])
    assert shown["status"] == "accepted" and shown["acks"] == [f"agent-{i}" for i in range(1, 6)]
    late = vote(served, pid, "agent-6")
    assert late["error"]["code"] == "not_open"


def test_blocking_seven_of_nine_rejects_once_out_of_reach(served: Served) -> None:
    pid = propose(served, "--electorate", NINE, "--preset", "blocking")["proposal_id"]
    vote(served, pid, "agent-1", nack="not yet")
    vote(served, pid, "agent-2", nack="needs tests")
    third = vote(served, pid, "agent-3", nack="no")  # six left, seven needed
    shown = show(served, pid, after=third["position"])
    assert (shown["status"], shown["reason"], shown["threshold"]) == ("rejected", "threshold-unreachable", 7)
    assert shown["nacks"][1] == {"agent": "agent-2", "reason": "needs tests"}


def test_veto_rejects_on_one_nack_and_a_nack_needs_a_reason(served: Served) -> None:
    pid = propose(served, "--electorate", "bob,carol", "--threshold", "1/2", "--veto")["proposal_id"]
    blank = served.run("quorum", "nack", pid, "--reason", " ", "--json", actor="bob")
    assert blank.returncode == 1 and json.loads(blank.stdout)["error"] == {
        "code": "invalid", "message": "reason must not be empty", "field": "reason"}
    nacked = vote(served, pid, "bob", nack="unsafe")
    assert show(served, pid, after=nacked["position"])["reason"] == "veto-on-nack"


def test_the_coordinator_vetoes_and_nobody_else_can(served: Served) -> None:
    pid = propose(served, "--electorate", "bob,carol", "--threshold", "2", "--coordinator", "heimdallr")["proposal_id"]
    impostor = served.run("quorum", "nack", pid, "--reason", "COORDINATOR_VETO", "--json", actor="bob")
    assert impostor.returncode == 1 and json.loads(impostor.stdout)["error"]["code"] == "not_coordinator"
    vetoed = vote(served, pid, "heimdallr", nack="COORDINATOR_VETO")
    shown = show(served, pid, after=vetoed["position"])
    assert (shown["status"], shown["decided_by"]) == ("vetoed", "heimdallr")


def test_a_tie_waits_for_the_coordinator_who_breaks_it(served: Served) -> None:
    pid = propose(served, "--electorate", "bob,carol", "--threshold", "2/2", "--coordinator", "heimdallr")["proposal_id"]
    vote(served, pid, "bob")
    tied = vote(served, pid, "carol", nack="prefer the old way")
    assert [e["type"] for e in tied["events"]] == ["ProposalNacked", "TieDeclared"]
    waiting = json.loads(served.run("check", "--after", str(tied["position"]), "--json", actor="heimdallr").stdout)
    assert waiting["items"] == [{"kind": "quorum", "id": pid, "action": "tiebreak", "deadline": None}]
    assert show(served, pid)["status"] == "awaiting-coordinator"
    assert json.loads(served.run("quorum", "tiebreak", pid, "--decision", "accept", "--json",
                                 actor="bob").stdout)["error"]["code"] == "not_coordinator"
    broken = json.loads(served.run("quorum", "tiebreak", pid, "--decision", "accept", "--json",
                                   actor="heimdallr").stdout)
    assert show(served, pid, after=broken["position"])["status"] == "accepted"


def test_the_coordinator_overrides_an_open_proposal(served: Served) -> None:
    pid = propose(served, "--electorate", NINE, "--preset", "advisory", "--coordinator", "heimdallr")["proposal_id"]
    done = served.run("quorum", "override", pid, "--decision", "reject", "--reason", "superseded", "--json",
                      actor="heimdallr")
    shown = show(served, pid, after=json.loads(done.stdout)["position"])
    assert (shown["status"], shown["reason"], shown["overridden"]) == ("rejected", "superseded", True)


def test_a_proposal_expires_by_a_real_schedule(served: Served) -> None:
    for agent in ("alice", "bob", "carol"):  # registered first: within the window bob only votes
        served.enrol(agent)
    # The window leaves room for bob's vote, a process of its own, on a busy machine.
    pid = propose(served, "--electorate", "bob,carol", "--threshold", "2", "--deadline-in", "10s")["proposal_id"]
    assert vote(served, pid, "bob")["ok"]
    shown = until(lambda: show(served, pid), lambda shown: shown["status"] != "open", timeout=30)
    assert (shown["status"], shown["acks"]) == ("expired", ["bob"])
    checked = json.loads(served.run("check", "--json", actor="carol").stdout)
    assert checked["items"] == []


def test_check_lists_the_electors_who_have_not_voted(served: Served) -> None:
    opened = propose(served, "--electorate", "bob,carol", "--threshold", "2")
    voted = vote(served, opened["proposal_id"], "bob")
    bob = json.loads(served.run("check", "--after", str(voted["position"]), "--json", actor="bob").stdout)
    carol = json.loads(served.run("check", "--json", actor="carol").stdout)
    assert bob["items"] == []
    assert carol["items"] == [
        {"kind": "quorum", "id": opened["proposal_id"], "action": "vote", "deadline": opened["deadline"]}]


def test_bad_proposals_are_refused_and_nothing_is_written(served: Served) -> None:
    def refused(*options: str) -> dict:
        done = served.run("quorum", "propose", "--text", "x", *options, "--json")
        assert done.returncode == 1, done.stdout + done.stderr
        return json.loads(done.stdout)["error"]

    assert refused("--electorate", "bob,carol", "--threshold", "2/3")["field"] == "total"
    assert refused("--electorate", "bob,carol", "--threshold", "3")["field"] == "threshold"
    assert refused("--electorate", "bob,bob", "--threshold", "1")["field"] == "electorate"
    assert refused("--electorate", "bob", "--threshold", "1", "--id", "abcd12z4")["field"] == "proposal_id"
    assert refused("--electorate", "bob", "--threshold", "1", "--deadline", "2020-01-01T00:00:00Z")["field"] == (
        "deadline")
    propose(served, "--electorate", "bob", "--threshold", "1", "--id", "C0FFEE00")
    assert refused("--electorate", "bob", "--threshold", "1", "--id", "C0FFEE00")["code"] == "already_exists"
    usage = served.run("quorum", "propose", "--text", "x", "--electorate", "bob")
    assert usage.returncode == 2 and "--threshold" in usage.stderr
    assert served.run("quorum", "show", "DEADBEEF", "--json").returncode == 1


def test_the_announcement_and_a_long_text_warning(served: Served) -> None:
    text = "Adopt the ledger. " * 30
    done = served.run("quorum", "propose", "--text", text, "--electorate", NINE, "--preset", "advisory",
                      "--deadline", "2030-01-02T03:04:05Z", "--id", "00C0FFEE", "--json")
    assert done.returncode == 0 and "short-form" in done.stderr and json.loads(done.stdout)["warnings"]
    shown = served.run("quorum", "show", "00C0FFEE", "--announcement", "--after", str(json.loads(done.stdout)["position"]))
    assert shown.stdout == (f"[QUORUM:00C0FFEE] {text}\nThreshold: 5/9\nDeadline: 2030-01-02T03:04:05Z\n"
                            "Reply: ACK 00C0FFEE or NACK 00C0FFEE <reason>\n")


def test_a_retried_proposal_opens_one_proposal(served: Served) -> None:
    url = served.url
    command = ProposeQuorum(text="Once", electorate=["bob"], threshold=1, command_id="retry-me")
    with SyncClient(url, "alice", seed=served.enrol("alice")) as client:
        first, again = client.send(command), client.send(command)
    assert first.ok and again.ok and first.position == again.position and bytes(first.events) == bytes(again.events)


def test_a_second_tool_watching_the_kv_key_sees_its_changes_in_order(served: Served) -> None:
    url = served.url
    pid = "5EE0A11F"
    seen: list[dict] = []
    watching, opened, finished = threading.Event(), threading.Event(), threading.Event()

    async def watch() -> None:
        nc = await nats.connect(url, nkeys_seed=str(served.service_key))  # a tool of the services
        kv = await nc.jetstream().key_value("athenaeum-views")
        watcher = await kv.watch(f"fleet/quorum/{pid}", include_history=True)
        watching.set()
        async for entry in watcher:
            if entry is None or entry.value is None:
                continue
            seen.append(json.loads(entry.value))
            opened.set()
            if seen[-1]["status"] != "open" or len(seen) > 10:
                break
        await nc.close()
        finished.set()

    tool = threading.Thread(target=asyncio.run, args=(watch(),), daemon=True)
    tool.start()
    assert watching.wait(20)
    propose(served, "--electorate", "bob,carol,dave", "--threshold", "2", "--id", pid)
    assert opened.wait(20)  # else the projector may write the opening and bob's ACK as one change
    vote(served, pid, "bob")
    vote(served, pid, "carol", nack="too soon")
    vote(served, pid, "dave")
    assert finished.wait(20)
    # The key's values in ledger order, from the opening to the acceptance; the bucket writes a
    # key's latest value, so one coming right after another (the deciding ACK and the acceptance
    # it caused, one command) may replace it unseen.
    states = [(len(s["acks"]), len(s["nacks"]), s["status"]) for s in seen]
    every = [(0, 0, "open"), (1, 0, "open"), (1, 1, "open"), (2, 1, "open"), (2, 1, "accepted")]
    assert states[0] == every[0] and states[-1] == every[-1]
    assert states == [state for state in every if state in states]  # in order, none made up
    assert seen[0]["proposer"] == "alice" and seen[-1]["result"]["reason"] == "threshold-reached"
