"""``athenaeum import`` of original dialogue threads: broken histories reported by file and
line, imported as found, written back byte for byte, and continued live."""

from __future__ import annotations

import json
from pathlib import Path

from tests.services.conftest import Served, until
from tests.services.importing.test_ratification_import import LATER, imported
from tests.services.importing.trees import page, thread

V = {"N": 0.5, "C": 0.5, "R": 0.5}
CLOSE = {"type": "closure", "current_at_close": {"N": 1.0, "C": 1.0, "R": 1.0},
         "proposed_crystallization": {"canon_pages": ["Trace.md"], "patch_summary": "add a soft state"}}


def test_a_thread_reopened_twice_and_a_wrong_sum_are_reported_by_file_and_line(served: Served, tmp_path: Path) -> None:
    root = tmp_path / "wiki-repo"
    thread(root, "canon-rules", [{"author": "alice"}, {"author": "bob", "v": V},
                                 {"author": "carol", "v": V} | CLOSE | {"current_at_close": {"N": 2, "C": 1, "R": 1}},
                                 {"author": "alice", "v": V, "type": "reopen", "reason": "new case"},
                                 {"author": "bob", "v": V, "type": "reopen", "reason": "again"}])
    done = served.run("import", str(root), "--dry-run", "--json", actor="ada")
    assert done.returncode == 1, done.stderr
    [record] = json.loads(done.stdout)["records"]
    at = {(f["code"], f["at"].split("canon-rules/")[1]) for f in record["findings"]}
    assert ("current_mismatch", "entries/003-carol.md:13") in at
    assert ("reopen_exhausted", "entries/005-bob.md:3") in at


def test_an_imported_thread_round_trips_and_continues(served: Served, tmp_path: Path) -> None:
    root = tmp_path / "wiki-repo"
    folder = thread(root, "canon-rules", [{"author": "alice"}, {"author": "bob", "v": V}])
    records = imported(served, root)["records"]
    assert records[0]["outcome"].startswith("recorded"), records
    contributed = served.run("thread", "contribute", "canon-rules", "--body", "A third view.", "--axis", "C",
                             "--eval", "0.5,0.5,0.5", actor="carol")
    assert contributed.returncode == 0, contributed.stderr
    shown = until(lambda: json.loads(served.run("thread", "show", "canon-rules", "--json").stdout),
                  lambda s: len(s["entries"]) == 3)
    assert shown["current"] == {"N": 1.0, "C": 1.0, "R": 1.0}  # the imported evaluation counts
    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    written = out / "wiki" / "agents" / "dialogue" / "canon-rules"
    for path in folder.rglob("*.md"):
        assert (written / path.relative_to(folder)).read_bytes() == path.read_bytes(), path
    assert (written / "entries" / "003-carol.md").exists()
    audit = json.loads(served.run("audit", "--json").stdout)
    assert not [f for f in audit["findings"] if f["severity"] == "HARD"], audit["findings"]



def test_evaluations_of_entries_the_thread_lacks_are_reported_and_imported_as_found(served: Served, tmp_path: Path) -> None:
    # An acceptance tester's: such a thread took the projector down, its view never made, every
    # later entry failing too and the audit HARD (projector_failed).
    root = tmp_path / "wiki-repo"
    thread(root, "canon-rules", [{"author": "alice", "last_eval": {"ref": "000-x.md", "v": V}},
                                 {"author": "bob", "v": V, "ref": "000-nobody.md"},
                                 {"author": "carol", "v": V, "ref": "the-first-one"}])
    dry = served.run("import", str(root), "--dry-run", "--json", actor="ada")
    [record] = json.loads(dry.stdout)["records"]
    at = {(f["code"], f["at"].split("canon-rules/")[1].partition(":")[0]) for f in record["findings"]}
    assert {("bad_eval_ref", "entries/001-alice.md"), ("bad_eval_ref", "entries/002-bob.md"),
            ("bad_eval_ref", "entries/003-carol.md")} <= at, record["findings"]
    assert imported(served, root)["records"][0]["outcome"].startswith("recorded")
    contributed = served.run("thread", "contribute", "canon-rules", "--body", "On.", "--axis", "C",
                             "--eval", "0.5,0.5,0.5", actor="alice")
    assert contributed.returncode == 0, contributed.stderr
    shown = until(lambda: json.loads(served.run("thread", "show", "canon-rules", "--json").stdout),
                  lambda s: len(s.get("entries", [])) == 4)
    assert shown["status"] == "open"
    audit = json.loads(served.run("audit", "--json").stdout)
    assert not [f for f in audit["findings"] if f["severity"] == "HARD"], audit["findings"]

LOG = """---
tier: episodic
---

# Log

The dialogue threads' entries, oldest first.

- 2026-05-11T09:00:00Z dialogue/canon-rules: entry 001-alice.md (contribution) by alice
- 2026-05-12T09:00:00Z dialogue/canon-rules: entry 002-bob.md (closure) by carol
- 2026-05-13T09:00:00Z dialogue/canon-rules: entry 003-carol.md (contribution) by carol
- 2026-05-14T09:00:00Z dialogue/soft-state: entry 001-dave.md (contribution) by dave
- 2026-05-15T09:00:00Z crystallized dialogue/canon-rules into [[canon/rules.md]] and [[Trace]]
"""


def test_the_wikis_log_is_checked_line_by_line_against_its_threads_and_pages(served: Served, tmp_path: Path) -> None:
    root = tmp_path / "wiki-repo"
    thread(root, "canon-rules", [{"author": "alice"}, {"author": "bob", "v": V}])
    page(root, "canon/rules.md", {"alice": "contributed | 2026-05-15 | rev: v2"})
    (root / "wiki" / "log.md").write_text(LOG)
    done = served.run("import", str(root), "--dry-run", "--json", actor="ada")
    assert done.returncode == 1, done.stderr  # the log's findings are findings
    report = json.loads(done.stdout)
    assert not [f for r in report["records"] for f in r["findings"]]  # the thread and page are sound
    [log] = report["logs"]
    at = sorted((f["at"].removeprefix(str(root / "wiki") + "/"), f["code"], f["message"]) for f in log["findings"])
    assert [(where, code) for where, code, _ in at] == [
        ("log.md:10", "invalid"), ("log.md:10", "invalid"),  # 002-bob.md is bob's contribution
        ("log.md:11", "not_found"),  # the thread has no entry 3
        ("log.md:12", "not_found"),  # no thread soft-state
        ("log.md:13", "not_found"),  # no page Trace (canon/rules.md is there)
    ], at
    assert "is a closure; its file says contribution" in at[0][2] + at[1][2]
    assert report["findings"] == 5
    shown = served.run("thread", "show", "canon-rules", "--json")
    assert shown.returncode == 1  # a dry run writes nothing


def test_the_log_replay_writes_is_read_back_without_findings(served: Served, tmp_path: Path) -> None:
    root = tmp_path / "wiki-repo"
    thread(root, "canon-rules", [{"author": "alice"}, {"author": "bob", "v": V}, {"author": "carol", "v": V}])
    assert imported(served, root)["records"][0]["outcome"].startswith("recorded")
    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    done = served.run("import", str(out / "wiki"), "--dry-run", "--json", actor="ada")
    assert done.returncode == 0, done.stdout
    [log] = json.loads(done.stdout)["logs"]
    assert log == {"path": str(out / "wiki" / "log.md"), "findings": []}
    assert (out / "wiki" / "log.md").read_text().count("dialogue/canon-rules: entry") == 3


SIGNATURE = bytes(range(256))  # crystallized.sig: a detached signature, not text
SETTLED_LOG = """# Log

- 2026-05-11T09:00 dialogue/signature-protocol: entry 001-agent-a.md (contribution) by Agent A
## [2026-05-13] crystallize | [[Trace]] updated; [[Layers]] proposed, see [[Trace#Signer]]
"""


def test_settled_and_archival_threads_and_the_logs_wikilinks_are_read_as_the_original_writes_them(
        served: Served, tmp_path: Path) -> None:
    # An acceptance tester's: meta.yaml's status was never read (a crystallized thread came back
    # awaiting recognition), an archival thread was refused, crystallized.md and .sig were listed
    # unknown, the log's [[Layers]] was not found (the checker finds a page by its stem), and the
    # replayed log named 001-Agent A.md.
    root = tmp_path / "wiki-repo"
    done = thread(root, "signature-protocol", [{"author": "Agent A"}, {"author": "Agent L", "v": V},
                                               {"author": "Agent E", "v": V} | CLOSE], status="crystallized",
                  crystallization={"signed_by": "User", "signature": None, "canon_pages": ["Trace.md"]})
    (done / "crystallized.md").write_text("# Crystallized\n\nUser recognised closure 3: [[Trace]].\n")
    (done / "crystallized.sig").write_bytes(SIGNATURE)
    thread(root, "soft-state", [{"author": "alice"}, {"author": "bob", "v": V} | CLOSE | {"current_at_close": V}],
           status="closed-without-crystallization")
    archival = thread(root, "old-wrap", [{"author": "Agent L"}])
    (archival / "meta.yaml").write_text("slug: old-wrap\nstatus: crystallized\nmigration_mode: archival\n"
                                        "participants: [Agent L]\n")
    (archival / "entries" / "001-agent-l.md").write_text("# Historical text of the old thread\n\nAgent L: ...\n")
    page(root, "concepts/Trace.md", {"alice": "contributed | 2026-05-15 | rev: v2"})
    page(root, "concepts/memory/Layers.md", {"alice": "contributed | 2026-05-15 | rev: v2"}, lifecycle="proposal")
    (root / "wiki" / "log.md").write_text(SETTLED_LOG)
    dry = served.run("import", str(root), "--dry-run", "--json", actor="ada")
    assert dry.returncode == 0, dry.stdout
    report = json.loads(dry.stdout)
    assert {r["id"]: r["status"] for r in report["records"] if r["family"] == "thread"} == {
        "signature-protocol": "crystallized", "soft-state": "closed-without-crystallization", "old-wrap": "crystallized"}
    assert report["unknown"] == [], report["unknown"]
    assert all(r["outcome"].startswith("recorded") for r in imported(served, root)["records"])
    shown = json.loads(served.run("thread", "show", "signature-protocol", "--json").stdout)
    assert (shown["status"], shown["crystallization"]["signed_by"]) == ("crystallized", "User")
    again = served.run("thread", "recognize", "signature-protocol", actor="ada")
    assert again.returncode == 1 and "thread_not_closed" in again.stderr  # no closure awaits a decision
    assert json.loads(served.run("thread", "show", "soft-state", "--json").stdout)["status"] == \
        "closed-without-crystallization"
    continued = served.run("thread", "contribute", "old-wrap", "--body", "On.", "--axis", "C", "--eval", "0.5,0.5,0.5",
                           actor="carol")
    assert continued.returncode == 1 and "thread_closed" in continued.stderr  # historical text, continued by nobody
    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    dialogue = root / "wiki" / "agents" / "dialogue"
    for path in dialogue.rglob("*"):
        if path.is_file():
            assert (out / path.relative_to(root)).read_bytes() == path.read_bytes(), path
    assert "entry 001-agent-a.md (contribution) by Agent A" in (out / "wiki" / "log.md").read_text()
    audit = json.loads(served.run("audit", "--json").stdout)
    assert not [f for f in audit["findings"] if f["severity"] == "HARD"], audit["findings"]
