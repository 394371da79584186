"""From discussion to canon through ``athenaeum serve`` and the CLI, as agents and a human drive it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.services.conftest import Served

PAGE = "wiki/canon/rules.md"  # named from the repository's root; its id is its path inside wiki/
PAGE_ID = "canon/rules.md"


def ok(served: Served, *args: str, actor: str) -> dict:
    done = served.run(*args, "--json", actor=actor)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def refused(served: Served, *args: str, actor: str) -> str:
    done = served.run(*args, "--json", actor=actor)
    assert done.returncode == 1, done.stdout + done.stderr
    return json.loads(done.stdout)["error"]["code"]


def check(served: Served, agent: str, after: int) -> list[tuple[str, str, str]]:
    items = ok(served, "check", "--after", str(after), actor=agent)["items"]
    return [(item["kind"], item["id"], item["action"]) for item in items]


def test_a_discussion_becomes_canon(served: Served, tmp_path: Path) -> None:
    # ada: registered as human, with a key in the data dir, by serve's --humans at its first start.
    assert refused(served, "agent", "register", "ada", "--human", actor="ada") == "already_exists"
    for agent in ("alice", "bob", "carol"):
        ok(served, "agent", "register", agent, actor="ada")
    assert refused(served, "agent", "register", "mallory", actor="bob") == "not_human"

    # Open, three agents contribute with evaluations.
    ok(served, "thread", "open", "canon-rules", "--context", "How do pages become canon?", "--target", "1,1,1",
       "--body", "Humans approve.", "--question", "Who approves?", "--participant", "bob", "--participant", "carol",
       actor="alice")
    bob = ok(served, "thread", "contribute", "canon-rules", "--eval", "0.4,0.3,0.2", "--ref", "1",
             "--body", "After two thirds accept.", actor="bob")
    assert check(served, "carol", bob["position"]) == [("thread", "canon-rules", "contribute")]
    assert check(served, "bob", bob["position"]) == []
    assert refused(served, "thread", "contribute", "canon-rules", "--eval", "0.1,0.1,0.1", "--body", "again",
                   actor="bob") == "self_evaluation"
    assert refused(served, "thread", "contribute", "canon-rules", "--body", "no scores", actor="carol") == (
        "missing_last_eval")
    assert refused(served, "thread", "contribute", "canon-rules", "--eval", "0.1,0.1,0.1", "--ref", "1",
                   "--body", "x", actor="carol") == "bad_eval_ref"
    ok(served, "thread", "contribute", "canon-rules", "--eval", "0.3,0.3,0.3", "--body", "And 14 days.", actor="carol")

    # Close under target; a human refuses; reopen; close again; recognize.
    assert refused(served, "thread", "close", "canon-rules", "--eval", "0.2,0.2,0.2", "--current", "0.9,0.8,0.6",
                   "--summary", "s", "--page", PAGE, "--patch-summary", "p", actor="alice") == "current_mismatch"
    closed = ok(served, "thread", "close", "canon-rules", "--eval", "0.2,0.2,0.2", "--current", "0.9,0.8,0.7",
                "--summary", "Two thirds and 14 days", "--page", PAGE, "--patch-summary", "Add the rule",
                actor="alice")
    assert check(served, "ada", closed["position"]) == [("thread", "canon-rules", "recognize")]
    assert refused(served, "thread", "contribute", "canon-rules", "--eval", "0.1,0.1,0.1", "--body", "late",
                   actor="bob") == "thread_closed"
    refusal = ok(served, "thread", "refuse", "canon-rules", "--reason", "under target", actor="ada")
    assert refusal["events"][0]["deficits"] == {"N": 0.1, "C": 0.2, "R": 0.3}
    ok(served, "thread", "reopen", "canon-rules", "--eval", "0.1,0.1,0.1", "--reason", "premature",
       "--discovery", "Dormant agents", actor="bob")
    assert refused(served, "thread", "reopen", "canon-rules", "--eval", "0.1,0.1,0.1", "--reason", "again",
                   "--discovery", "d", actor="carol") == "reopen_exhausted"
    ok(served, "thread", "contribute", "canon-rules", "--eval", "0.3,0.3,0.3", "--body", "Sixty days.", actor="carol")
    ok(served, "thread", "close", "canon-rules", "--eval", "0.2,0.2,0.2", "--current", "1.5,1.4,1.3",
       "--summary", "Two thirds, 14 days, dormant after 60", "--page", PAGE, "--patch-summary", "Add the rule",
       actor="alice")
    assert refused(served, "thread", "recognize", "canon-rules", actor="bob") == "not_human"
    recognized = ok(served, "thread", "recognize", "canon-rules", actor="ada")
    assert [e["type"] for e in recognized["events"]] == ["ClosureRecognized", "ThreadCrystallized", "PageInitialized"]
    assert recognized["events"][2]["actor"] == "alice" and recognized["events"][2]["crystallized_from"] == "canon-rules"

    shown = ok(served, "thread", "show", "canon-rules", "--after", str(recognized["position"]), actor="bob")
    assert shown["status"] == "crystallized" and shown["current"] == {"N": 1.5, "C": 1.4, "R": 1.3}
    assert [(c["n"], c["under_target"], c["reopened"]) for c in shown["closures"]] == [(4, True, True), (7, False, False)]
    assert [e["type"] for e in shown["entries"]] == [
        "contribution", "contribution", "contribution", "closure", "reopen", "contribution", "closure"]
    rendered = served.run("thread", "show", "canon-rules", "--render", actor="bob").stdout
    assert "## Context" in rendered and "OQ-1: Who approves?" in rendered and "last_eval: entry 006" in rendered

    # Agents read and endorse; an edit stales them; they re-read and re-endorse; a human approves.
    page = ok(served, "page", "show", PAGE, "--after", str(recognized["position"]), actor="bob")
    assert page["consensus"]["alice"]["status"] == "contributed" and page["consensus"]["bob"]["status"] == "pending"
    assert check(served, "bob", recognized["position"]) == [("page", PAGE_ID, "review")]
    assert refused(served, "page", "endorse", PAGE, "--status", "accepted", "--session", "s1", actor="bob") == (
        "not_read_in_session")
    for agent in ("bob", "carol"):
        ok(served, "page", "read", PAGE, "--session", "s1", actor=agent)
        assert ("page", PAGE_ID, "approve") not in check(served, "ada", recognized["position"])
        endorsed = ok(served, "page", "endorse", PAGE, "--status", "accepted", "--session", "s1", actor=agent)
    assert check(served, "ada", endorsed["position"]) == [("page", PAGE_ID, "approve")]  # ready now, no waiting
    new = tmp_path / "rules.md"
    new.write_text("# rules\n\nA page rewritten from the top.\n")
    edited = ok(served, "page", "edit", PAGE, "--file", str(new), actor="carol")
    assert [e["type"] for e in edited["events"]] == ["PageRevised", "EndorsementStaled", "EndorsementStaled"]
    assert check(served, "bob", edited["position"]) == [("page", PAGE_ID, "review")]
    assert refused(served, "page", "approve", PAGE, "--level", "canonical", actor="ada") == "consensus_incomplete"
    assert refused(served, "page", "endorse", PAGE, "--status", "accepted", "--session", "s1", actor="bob") == (
        "not_read_in_session")
    for agent in ("alice", "bob"):
        ok(served, "page", "read", PAGE, "--session", "s2", actor=agent)
        ok(served, "page", "endorse", PAGE, "--status", "accepted", "--session", "s2", actor=agent)
    assert refused(served, "page", "approve", PAGE, "--level", "canonical", actor="bob") == "not_human"
    approved = ok(served, "page", "approve", PAGE, "--level", "canonical", actor="ada")
    assert approved["events"][0]["active_agents"] == ["alice", "bob", "carol"]
    block = served.run("page", "show", PAGE, "--render", "consensus", "--after", str(approved["position"]),
                       actor="bob").stdout
    assert block.splitlines()[:3] == ["rev: v2", "lifecycle: canonical", "consensus:"]
    assert block.splitlines()[3].startswith('  alice: "accepted | ') and block.rstrip().endswith('| rev: v2"')


def test_a_dispute_waits_for_a_human_registered_as_one(served: Served, tmp_path: Path) -> None:
    for agent in ("alice", "bob"):
        ok(served, "agent", "register", agent, actor="ada")  # ada is human by serve's --humans
    ok(served, "agent", "register", "hana", "--human", actor="ada")
    text = tmp_path / "p.md"
    text.write_text("# P\n\nOne claim.\n")
    ok(served, "page", "init", "wiki/p.md", "--file", str(text), actor="alice")
    assert refused(served, "page", "lifecycle", "wiki/p.md", "--to", "accepted", "--reason", "r", actor="bob") == (
        "actor_mismatch")
    assert refused(served, "page", "lifecycle", "wiki/p.md", "--to", "accepted", "--reason", "r", actor="alice") == (
        "consensus_pending")  # bob has not looked at it
    ok(served, "page", "read", "wiki/p.md", "--session", "s1", actor="bob")
    ok(served, "page", "endorse", "p.md", "--status", "reviewed", "--session", "s1", actor="bob")
    moved = ok(served, "page", "lifecycle", "wiki/p.md", "--to", "accepted", "--reason", "ready", actor="alice")
    assert ok(served, "page", "show", "wiki/p.md", "--after", str(moved["position"]), actor="bob")["lifecycle"] == (
        "accepted")
    assert refused(served, "page", "dispute", "wiki/p.md", "--section", " ", actor="bob") == "invalid"
    disputed = ok(served, "page", "dispute", "wiki/p.md", "--section", "One claim", "--thread", "p-claims", actor="bob")
    assert check(served, "hana", disputed["position"]) == [("page", "p.md", "resolve")]
    block = served.run("page", "show", "wiki/p.md", "--render", "consensus", actor="hana").stdout
    assert '  bob: "disputed | section: One claim | thread: dialogue/p-claims | ' in block
    resolved = ok(served, "page", "resolve", "wiki/p.md", "--agent", "bob", "--decision", "keep it",
                  "--thread", "p-claims", actor="hana")
    # Resolved, and the author contributed: every agent stands behind the page, so it can be approved.
    assert check(served, "hana", resolved["position"]) == [("page", "p.md", "approve")]
    block = served.run("page", "show", "wiki/p.md", "--render", "consensus", actor="hana").stdout
    assert '  bob: "accepted (user decision: dialogue/p-claims#' in block
