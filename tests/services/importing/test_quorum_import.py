"""``athenaeum import`` of grove's quorum scratchpads (``fleet/quorum/<id>``), end to end
through the CLI against a real serve: the dry run names each broken rule by file and line and
writes nothing; closed proposals are recorded as history, an open one continues live (its
electors vote, it resolves); replay writes each scratchpad back; a second import adds nothing;
the audit warns."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from athenaeum.events.imported import SourceFile
from athenaeum.events.quorum import ImportedStatus
from athenaeum.events.quorum_commands import ImportProposal
from athenaeum.services.client import SyncClient
from tests.services.conftest import Served, until
from tests.services.importing.test_ratification_import import LATER, imported
from tests.services.importing.trees import scratchpad

RESULT = {"status": "accepted", "closed_at": "2026-05-01T12:00:00Z"}
ELECTORATE = ("--electorate", "alice,bob,carol", "--deadline", "2099-01-01T00:00:00Z")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "fleet-repo"
    scratchpad(root, "A1B2C3D4", ["alice", "bob"], [], status="accepted", result=RESULT)  # as the rules would have it
    # carol NACKed, and the original's substring match counted her NACK as an ACK too.
    scratchpad(root, "B1B2C3D4", ["alice", "carol"], [{"agent": "carol", "reason": "not before the audit"}],
               threshold=3, status="expired", result={"status": "expired"})
    # Accepted on one ACK of three.
    scratchpad(root, "C1B2C3D4", ["alice"], [], threshold=3, status="accepted")
    # Open, one ACK of the two it needs: continues live.
    scratchpad(root, "D1B2C3D4", ["alice"], [], threshold="2/3")
    return root


def test_a_dry_run_names_each_broken_rule_by_file_and_line(served: Served, tree: Path) -> None:
    done = served.run("import", str(tree), "--dry-run", "--json", actor="ada")
    assert done.returncode == 1, done.stderr
    by_key = {r["key"]: r for r in json.loads(done.stdout)["records"]}
    assert [by_key[f"quorum:{p}1B2C3D4"]["becomes"] for p in "ABCD"] == ["ProposalImported"] * 3 + [None]
    assert not by_key["quorum:A1B2C3D4"]["findings"]
    at = {(f["code"], f["at"].removeprefix(str(tree) + "/fleet/quorum/")) for r in by_key.values()
          for f in r["findings"]}
    assert ("already_voted", "B1B2C3D4:7") in at  # carol's ACK line: counted as her NACK
    assert ("invalid", "C1B2C3D4:9") in at  # the status line: accepted on 1 of 3
    [open_one] = by_key["quorum:D1B2C3D4"]["findings"]
    assert open_one["code"] == "invalid" and "--electorate" in open_one["message"], open_one
    shown = served.run("quorum", "show", "A1B2C3D4", "--json")
    assert shown.returncode == 1 and "not_found" in shown.stdout  # nothing written


def test_imported_proposals_are_history_and_an_open_one_continues_live(served: Served, tree: Path,
                                                                        tmp_path: Path) -> None:
    first = imported(served, tree, *ELECTORATE)
    assert all(r["outcome"].startswith("recorded") for r in first["records"]), first
    again = imported(served, tree, *ELECTORATE)  # the same commands, answered as the first time
    assert [r["outcome"] for r in again["records"]] == [r["outcome"] for r in first["records"]]

    closed = json.loads(served.run("quorum", "show", "B1B2C3D4", "--json").stdout)
    assert closed["status"] == "expired" and closed["acks"] == ["alice"] and closed["nacks"][0]["agent"] == "carol"
    refused = served.run("quorum", "ack", "B1B2C3D4", actor="bob")
    assert refused.returncode == 1 and "not_open" in refused.stderr + refused.stdout
    twice = served.run("quorum", "ack", "D1B2C3D4", actor="alice")  # alice's imported ACK counts
    assert twice.returncode == 1 and "already_voted" in twice.stderr + twice.stdout
    acked = served.run("quorum", "ack", "D1B2C3D4", actor="bob")
    assert acked.returncode == 0, acked.stderr
    live = until(lambda: json.loads(served.run("quorum", "show", "D1B2C3D4", "--json").stdout),
                 lambda s: s["status"] != "open")
    assert live["status"] == "accepted" and live["acks"] == ["alice", "bob"]

    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    for proposal in ("A1B2C3D4", "B1B2C3D4", "C1B2C3D4"):  # nothing since: byte for byte
        original = tree / "fleet" / "quorum" / proposal
        assert (out / "fleet" / "quorum" / proposal).read_bytes() == original.read_bytes(), proposal
    written = json.loads((out / "fleet" / "quorum" / "D1B2C3D4").read_text())
    original = json.loads((tree / "fleet" / "quorum" / "D1B2C3D4").read_text())
    assert written == original | {"acks": ["alice", "bob"], "status": "accepted", "result": written["result"]}
    assert written["result"]["status"] == "accepted"
    audit = json.loads(served.run("audit", "--json").stdout)
    assert not [f for f in audit["findings"] if f["severity"] == "HARD"], audit["findings"]
    warned = {(f["code"], f["id"]) for f in audit["findings"] if f["severity"] == "WARN"}
    assert {("imported_already_voted", "B1B2C3D4"), ("imported_invalid", "C1B2C3D4")} <= warned, warned


def test_an_open_proposal_without_a_deadline_closes_a_day_after_its_opening(served: Served, tmp_path: Path) -> None:
    scratchpad(tmp_path / "old", "E1B2C3D4", ["alice"], [], threshold=2)  # opened 2026-05-01: long past
    records = imported(served, tmp_path / "old", "--electorate", "alice,bob,carol")["records"]
    assert records[0]["outcome"].startswith("recorded"), records
    shown = until(lambda: json.loads(served.run("quorum", "show", "E1B2C3D4", "--json").stdout),
                  lambda s: s["status"] != "open")
    assert shown["status"] == "expired" and shown["deadline"] == "2026-05-02T09:00:00Z"


def test_a_deadline_past_what_the_timer_can_meet_is_refused_naming_the_field_and_nothing_is_written(
        served: Served, tmp_path: Path) -> None:
    root = tmp_path / "far"
    scratchpad(root, "E1B2C3D4", ["alice"], [])
    for dry_run in (["--dry-run"], []):  # refused at the edge, before anything is read
        done = served.run("import", str(root), "--electorate", "alice,bob,carol",
                          "--deadline", "9999-12-31T00:00:00Z", *dry_run, actor="ada")
        assert done.returncode == 2, done.stdout + done.stderr
        assert "--deadline 9999-12-31" in done.stderr and "must fall before 2200 UTC" in done.stderr, done.stderr
    # A scratchpad opened at the calendar's end: its default window is refused by the reader.
    scratchpad(root, "F1B2C3D4", ["alice"], [], opened_at="9999-12-31T12:00:00Z")
    dry = served.run("import", str(root), "--electorate", "alice,bob,carol", "--dry-run", "--json", actor="ada")
    assert dry.returncode == 1, dry.stderr
    by_key = {r["key"]: r for r in json.loads(dry.stdout)["records"]}
    assert by_key["quorum:F1B2C3D4"]["becomes"] is None
    [far] = by_key["quorum:F1B2C3D4"]["findings"]
    assert far["code"] == "invalid" and "must fall before 2200 UTC" in far["message"], far
    # Every command with a deadline: refused by the rules, the field named, nothing written.
    refused = {
        ("quorum", "propose", "--text", "Adopt", "--electorate", "alice", "--threshold", "1",
         "--deadline", "9999-12-31T00:00:00Z", "--json"): "deadline",
        ("ratify", "init", "adr-99", "--roster", "alice", "--text", "# ADR\n", "--expires-at", "9999-12-31T00:00:00Z",
         "--json"): "expires_at",
    }
    for verb, field in refused.items():
        done = served.run(*verb)
        assert done.returncode == 1, done.stdout + done.stderr
        error = json.loads(done.stdout)["error"]
        assert error["code"] == "invalid" and error["field"] == field and "before 2200 UTC" in error["message"], error
    # The command itself, as any importer could send it past the CLI: the rules refuse it too.
    far = ImportProposal(proposal_id="E1B2C3D4", source="fleet/quorum/E1B2C3D4", proposer="alice", text="Adopt",
                         electorate=["alice", "bob"], threshold=1, deadline=datetime(9999, 12, 31, tzinfo=timezone.utc),
                         opened_at=datetime(2026, 5, 1, tzinfo=timezone.utc), status=ImportedStatus.OPEN,
                         files=[SourceFile(name="E1B2C3D4", content=b"{}")])
    with SyncClient(served.url, "ada", seed=served.enrol("ada")) as client:
        reply = client.send(far)
    assert not reply.ok and reply.error is not None and reply.error.field == "deadline", reply
    shown = served.run("quorum", "show", "E1B2C3D4", "--json")
    assert shown.returncode == 1 and "not_found" in shown.stdout


def test_a_resolved_proposal_whose_result_is_elsewhere_or_a_text_is_no_finding(served: Served, tmp_path: Path) -> None:
    # grove's skill: "Write result to KB when resolved" — the scratchpad may keep none, or a line.
    root = tmp_path / "soil"
    scratchpad(root, "E1B2C3D4", ["alice", "bob"], [], status="accepted")
    scratchpad(root, "F1B2C3D4", ["alice", "bob"], [], status="accepted", result="accepted 2/2")
    done = served.run("import", str(root), "--dry-run", "--json", actor="ada")
    assert done.returncode == 0, done.stdout + done.stderr
    records = json.loads(done.stdout)["records"]
    assert [(r["becomes"], r["findings"]) for r in records] == [("ProposalImported", [])] * 2
