"""``athenaeum import`` of original canon pages: their consensus blocks checked by line (the
readers alone, on the files), then imported as found through a real serve, written back byte
for byte, continued live (read, endorsed, approved), and warned of by the audit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from athenaeum.services.importing.run import records
from tests.services.conftest import Served, until
from tests.services.importing.test_ratification_import import LATER, imported
from tests.services.importing.trees import PAGE, page

AUTHORED = "contributed | 2026-05-15 | rev: v2"
ACCEPTED = "accepted | 2026-05-16 | rev: v2"
PENDING = "pending | rev: v2"
# The file's lines: 1 ---, 2 rev, 3 lifecycle, 4 consensus:, then one per entry from line 5.
FIRST_ENTRY = 5


def findings_of(root: Path) -> dict[str, set[tuple[str, int | None]]]:
    found, _, _ = records([root])
    return {record.key: {(f.code, f.line) for f in record.findings} for record in found}


def test_a_page_accepted_while_an_agent_is_pending_and_an_endorsement_of_an_older_rev(tmp_path: Path) -> None:
    page(tmp_path, "canon/rules.md", {"alice": AUTHORED, "bob": "accepted | 2026-05-14 | rev: v1", "carol": PENDING},
         lifecycle="accepted")
    found = findings_of(tmp_path)["canon/rules.md"]
    assert ("stale_revision", FIRST_ENTRY + 1) in found
    assert ("consensus_pending", FIRST_ENTRY + 2) in found


def test_canon_claimed_without_every_agent_and_entries_that_say_nothing_usable(tmp_path: Path) -> None:
    page(tmp_path, "canon/rules.md", {"alice": AUTHORED, "Bob Smith": ACCEPTED, "carol": "reviewed | 2026-05-16 | rev: v2",
                                      "dave": "disputed | 2026-05-16 | rev: v2", "erin": "accepted | rev: v3"},
         lifecycle="canonical")
    found = findings_of(tmp_path)["canon/rules.md"]
    assert ("invalid", FIRST_ENTRY + 1) in found  # names no agent
    assert ("consensus_incomplete", FIRST_ENTRY + 2) in found  # carol only reviewed
    assert ("invalid", FIRST_ENTRY + 3) in found  # a dispute naming no section
    assert ("invalid", FIRST_ENTRY + 4) in found  # a rev the page never had
    [record], _, _ = records([tmp_path])
    assert [s.agent for s in record.command.standings] == ["alice", "carol"]  # the unusable ones left out


def test_a_bad_lifecycle_is_reported_and_nothing_imported(tmp_path: Path) -> None:
    page(tmp_path, "canon/rules.md", {"alice": AUTHORED}, lifecycle="approved")
    [record], _, _ = records([tmp_path])
    assert record.command is None and record.becomes is None
    assert {(f.code, f.line) for f in record.findings} == {("invalid", 3)}


def test_the_wikis_log_is_known_and_a_page_without_a_consensus_block_is_unknown(tmp_path: Path) -> None:
    page(tmp_path, "canon/rules.md", {"alice": AUTHORED})
    (tmp_path / "wiki" / "index.md").write_text("# Index\n")
    (tmp_path / "wiki" / "log.md").write_text("---\ntier: episodic\n---\n\n# Log\n")
    found, unknown, logs = records([tmp_path / "wiki"])  # the wiki itself given: the same page ids
    assert [(r.key, r.becomes, r.status) for r in found] == [("canon/rules.md", "PageImported", "working")]
    assert unknown == [tmp_path / "wiki" / "index.md"]
    assert [(log.path, log.findings) for log in logs] == [(tmp_path / "wiki" / "log.md", [])]


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    root = tmp_path / "wiki-repo"
    page(root, "canon/rules.md", {"alice": AUTHORED, "bob": ACCEPTED, "carol": PENDING})
    # Accepted while dave is pending: the original audit's C4.
    page(root, "concepts/trace.md", {"alice": AUTHORED, "dave": PENDING}, lifecycle="accepted",
         content="# Trace\n\nEvery decision leaves one.\n")
    return root


def test_import_then_replay_gives_the_pages_back_byte_for_byte(served: Served, wiki: Path, tmp_path: Path) -> None:
    dry = served.run("import", str(wiki), "--dry-run", "--json", actor="ada")
    assert dry.returncode == 1, dry.stderr  # there were findings
    at = {(f["code"], f["at"]) for r in json.loads(dry.stdout)["records"] for f in r["findings"]}
    assert at == {("consensus_pending", f"{wiki}/wiki/concepts/trace.md:{FIRST_ENTRY + 1}")}
    first = imported(served, wiki)
    assert [r["outcome"].split(" at ")[0] for r in first["records"]] == ["recorded", "recorded"], first
    moved = tmp_path / "moved"
    shutil.copytree(wiki, moved)
    assert [r["outcome"] for r in imported(served, moved)["records"]] == ["unchanged", "unchanged"]
    shown = json.loads(served.run("page", "show", "concepts/trace.md", "--json").stdout)
    assert (shown["rev"], shown["lifecycle"], shown["author"]) == (2, "accepted", "alice")
    out = tmp_path / "out"
    replayed = served.run("replay", "--until", LATER, "--out", str(out))
    assert replayed.returncode == 0, replayed.stderr
    for path in (wiki / "wiki").rglob("*.md"):
        assert (out / "wiki" / path.relative_to(wiki / "wiki")).read_bytes() == path.read_bytes(), path
    findings = json.loads(served.run("audit", "--json").stdout)["findings"]
    assert not [f for f in findings if f["severity"] == "HARD"], findings
    warned = {(f["code"], f["id"]) for f in findings if f["severity"] == "WARN"}
    assert ("imported_consensus_pending", "concepts/trace.md") in warned


def test_an_imported_page_is_endorsed_and_approved_live(served: Served, wiki: Path, tmp_path: Path) -> None:
    imported(served, wiki)
    for agent in ("bob", "carol"):
        served.enrol(agent)
    premature = served.run("page", "approve", "canon/rules.md", "--level", "canonical", actor="ada")
    assert premature.returncode == 1 and "consensus_incomplete" in premature.stderr  # carol is pending
    early = served.run("page", "endorse", "canon/rules.md", "--status", "accepted", "--session", "s1", actor="carol")
    assert early.returncode == 1 and "not_read_in_session" in early.stderr
    assert served.run("page", "read", "canon/rules.md", "--session", "s1", actor="carol").returncode == 0
    endorsed = served.run("page", "endorse", "canon/rules.md", "--status", "accepted", "--session", "s1", actor="carol")
    assert endorsed.returncode == 0, endorsed.stderr
    shown = json.loads(served.run("page", "show", "canon/rules.md", "--json").stdout)
    assert {agent: s["status"] for agent, s in shown["consensus"].items()} == {
        "alice": "contributed", "bob": "accepted", "carol": "accepted"}
    approved = served.run("page", "approve", "canon/rules.md", "--level", "canonical", actor="ada")
    assert approved.returncode == 0, approved.stderr
    until(lambda: json.loads(served.run("page", "show", "canon/rules.md", "--json").stdout),
          lambda s: s["lifecycle"] == "canonical")
    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    written = (out / "wiki" / "canon" / "rules.md").read_text()
    assert "lifecycle: canonical" in written and "carol: \"accepted |" in written and written.endswith(PAGE)
    findings = json.loads(served.run("audit", "--json").stdout)["findings"]
    assert not [f for f in findings if f["severity"] == "HARD"], findings  # the approval recomputes as recorded


def test_the_originals_own_lifecycles_notes_and_pages_no_consensus_was_begun_on(served: Served, tmp_path: Path) -> None:
    # An acceptance tester's: the protocol's own ``contributed (added section 4)``, a dormant
    # agent with no rev, ``draft`` and ``deprecated`` (its checker's lifecycles) and a page with
    # a lifecycle but no rev (which its checker only warns of) were findings, and left out.
    root = tmp_path / "wiki-repo"
    page(root, "concepts/Trace.md", {"agent-s": "accepted | 2026-04-29 | rev: v3",
                                     "agent-e": "contributed (added section 4) | 2026-04-29 | rev: v3",
                                     "agent-d": "dormant"}, rev="v3")
    page(root, "workflows/Old-Flow.md", {"agent-s": "contributed | 2026-04-01 | rev: v1"}, rev="v1",
         lifecycle="deprecated")
    fleet = root / "wiki" / "entities" / "Fleet.md"
    fleet.parent.mkdir(parents=True)
    fleet.write_text("---\ntitle: Fleet\nlifecycle: draft\ntier: semantic\n---\n\n# Fleet\n\nThe agents and their hosts.\n")
    dry = served.run("import", str(root), "--dry-run", "--json", actor="ada")
    assert dry.returncode == 0, dry.stdout
    report = json.loads(dry.stdout)["records"]
    assert {(r["id"], r["status"]) for r in report} == {
        ("concepts/Trace.md", "working"), ("workflows/Old-Flow.md", "deprecated"), ("entities/Fleet.md", "draft")}
    assert all(r["outcome"].startswith("recorded") for r in imported(served, root)["records"])
    shown = json.loads(served.run("page", "show", "entities/Fleet.md", "--json").stdout)
    assert (shown["rev"], shown["lifecycle"], shown["scope"]) == (1, "draft", "descriptive")
    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    for path in (root / "wiki").rglob("*.md"):
        assert (out / "wiki" / path.relative_to(root / "wiki")).read_bytes() == path.read_bytes(), path
    served.enrol("agent-e")  # so that its standing is listed when the page is rendered
    assert served.run("page", "read", "concepts/Trace.md", "--session", "s1", actor="agent-r").returncode == 0
    endorsed = served.run("page", "endorse", "concepts/Trace.md", "--status", "reviewed", "--session", "s1",
                          actor="agent-r")
    assert endorsed.returncode == 0, endorsed.stderr
    assert served.run("replay", "--until", LATER, "--out", str(tmp_path / "after")).returncode == 0
    written = (tmp_path / "after" / "wiki" / "concepts" / "Trace.md").read_text()
    assert 'agent-e: "contributed (added section 4) | 2026-04-29 | rev: v3"' in written, written
