"""``athenaeum import`` of original ratification folders, end to end through the CLI against a
real serve: the dry run reports the broken rules by file and line and writes nothing; the
import records history as found, round-trips through ``replay``, adds nothing the second time,
continues live, and the audit reports what the originals broke as WARN, nothing HARD."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import nats
import pytest

from athenaeum.services.runtime.ledger_shape import configured_ledger
from tests.services.conftest import ATHENAEUM, Served, until
from tests.services.importing.trees import SHA, dissent, ratification

LATER = "2200-01-01T00:00:00Z"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    # Open: alice signed; bob attested another sha (void); carol has not voted.
    ratification(root, "adr-7", ["alice", "bob", "carol"],
                 {"alice": {}, "bob": {"artifact_sha256": "0" * 64, "timestamp": "2026-05-15T11:00:00Z"}})
    # Ratified without carol's SIGN and without a human decision; dave is on no roster.
    ratification(root, "adr-8", ["alice", "carol"], {"alice": {}, "dave": {"decision": "DISSENT",
                                                                           "dissent": dissent()}}, status="ratified")
    (root / "README.md").write_text("not a record\n")
    return root


def imported(served: Served, tree: Path, *options: str) -> dict:
    done = served.run("import", str(tree), "--json", *options, actor="ada")
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_a_dry_run_reports_each_broken_rule_by_file_and_line_and_writes_nothing(served: Served, tree: Path) -> None:
    done = served.run("import", str(tree), "--dry-run", "--json", actor="ada")
    assert done.returncode == 1, done.stderr  # there were findings
    report = json.loads(done.stdout)
    at = {(f["code"], f["at"].removeprefix(str(tree) + "/")) for r in report["records"] for f in r["findings"]}
    assert ("sha_mismatch", ".athenaeum/adr-7/bob.vote.yaml:2") in at
    assert ("not_rostered", ".athenaeum/adr-8/dave.vote.yaml:1") in at
    assert ("invalid", ".athenaeum/adr-8/manifest.yaml") in at  # ratified without every SIGN
    assert report["unknown"] == [str(tree / "README.md")]
    assert not report["written"]
    shown = served.run("ratify", "show", "adr-7", "--json")
    assert shown.returncode == 1 and "not_found" in shown.stdout


def test_a_clean_tree_dry_runs_with_exit_0(served: Served, tmp_path: Path) -> None:
    ratification(tmp_path / "clean", "adr-9", ["alice", "bob"], {"alice": {}})
    done = served.run("import", str(tmp_path / "clean"), "--dry-run", actor="ada")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "becomes RatificationImported (open)" in done.stdout


def test_a_tree_whose_every_record_cannot_be_imported_exits_1_and_writes_nothing(served: Served,
                                                                                  tmp_path: Path) -> None:
    root = tmp_path / "broken"
    ratification(root, "adr-5", ["alice"], {}, expires_at="not a time")  # an essential field unusable
    ratification(root, "adr-6", ["alice"], {}, status="unheard-of")
    for dry_run in (["--dry-run"], []):
        done = served.run("import", str(root), *dry_run, actor="ada")
        assert done.returncode == 1, done.stdout + done.stderr
        assert done.stdout.count("cannot be imported") == 2, done.stdout  # the findings, as before
        assert "none of the 2 records found can be imported" in done.stderr, done.stderr
    shown = served.run("ratify", "show", "adr-5", "--json")
    assert shown.returncode == 1 and "not_found" in shown.stdout


def test_a_path_that_does_not_exist_is_a_usage_error_and_nothing_is_written(served: Served, tree: Path,
                                                                          tmp_path: Path) -> None:
    missing = tmp_path / "no-such-repo"
    for dry_run in (["--dry-run"], []):
        done = served.run("import", str(tree), str(missing), *dry_run, actor="ada")
        assert done.returncode == 2, done.stdout + done.stderr
        assert str(missing) in done.stderr and "no such file or directory" in done.stderr
    shown = served.run("ratify", "show", "adr-7", "--json")  # the tree beside it was not imported either
    assert shown.returncode == 1 and "not_found" in shown.stdout
    # A file that is there but of no known layout is listed as unknown, not refused.
    listed = served.run("import", str(tree / "README.md"), "--dry-run", "--json", actor="ada")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["unknown"] == [str(tree / "README.md")]


def test_import_then_replay_gives_the_original_files_back_byte_for_byte(served: Served, tree: Path,
                                                                         tmp_path: Path) -> None:
    first = imported(served, tree)
    assert [r["outcome"].split(" at ")[0] for r in first["records"]] == ["recorded", "recorded"]
    again = imported(served, tree)  # the same commands: answered as the first time, nothing appended
    assert [r["outcome"] for r in again["records"]] == [r["outcome"] for r in first["records"]]
    moved = tmp_path / "moved"
    shutil.copytree(tree, moved)
    assert [r["outcome"] for r in imported(served, moved)["records"]] == ["unchanged", "unchanged"]
    out = tmp_path / "out"
    replayed = served.run("replay", "--until", LATER, "--out", str(out))
    assert replayed.returncode == 0, replayed.stderr
    for topic in ("adr-7", "adr-8"):
        original = tree / ".athenaeum" / topic
        for path in original.iterdir():
            assert (out / ".athenaeum" / topic / path.name).read_bytes() == path.read_bytes(), path.name
    audit = served.run("audit", "--json")
    findings = json.loads(audit.stdout)["findings"]
    assert not [f for f in findings if f["severity"] == "HARD"], findings
    warned = {(f["code"], f["id"]) for f in findings if f["severity"] == "WARN"}
    assert {("imported_sha_mismatch", "adr-7"), ("imported_not_rostered", "adr-8")} <= warned


def test_an_imported_open_ratification_takes_its_remaining_votes_and_tallies(served: Served, tree: Path,
                                                                             tmp_path: Path) -> None:
    imported(served, tree)
    show = json.loads(served.run("ratify", "show", "adr-7", "--json").stdout)
    assert show["status"] == "open" and show["voted"] == ["alice"]  # bob's void vote does not count
    again = served.run("ratify", "vote", "adr-7", "--sha256", SHA, "--sign", actor="alice")
    assert again.returncode == 1 and "already_voted" in again.stderr
    for agent in ("bob", "carol"):
        voted = served.run("ratify", "vote", "adr-7", "--sha256", SHA, "--sign", actor=agent)
        assert voted.returncode == 0, voted.stderr
    show = until(lambda: json.loads(served.run("ratify", "show", "adr-7", "--json").stdout),
                 lambda s: s["status"] == "ratified")
    assert show["tally"]["signs"] == ["alice", "bob", "carol"]
    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    folder = out / ".athenaeum" / "adr-7"
    assert "status: ratified" in (folder / "manifest.yaml").read_text()
    assert "| alice | 2026-05-15T10:00:00Z |" in (folder / "ratified.md").read_text()  # the imported vote's time
    assert (folder / "artifact.md").read_bytes() == (tree / ".athenaeum" / "adr-7" / "artifact.md").read_bytes()
    log = (folder / "log.md").read_text()
    assert log.startswith((tree / ".athenaeum" / "adr-7" / "log.md").read_text()) and "RATIFIED: all-SIGN" in log


def test_an_imported_ratification_past_its_expiry_is_tallied_by_the_timer(served: Served, tmp_path: Path) -> None:
    ratification(tmp_path / "old", "adr-10", ["alice", "bob"], {"alice": {}}, expires_at="2026-05-18T09:00:00Z")
    assert imported(served, tmp_path / "old")["records"][0]["outcome"].startswith("recorded")
    show = until(lambda: json.loads(served.run("ratify", "show", "adr-10", "--json").stdout),
                 lambda s: s["status"] != "open")
    assert show["status"] == "pending-human" and show["tally"]["abstentions"] == ["bob"]


RECORDS = 5000  # enough to be interrupted while sending, not after


def ledger_size(served: Served) -> int:
    """How many messages the ledger's stream holds."""
    async def size() -> int:
        nc = await nats.connect(served.url, nkeys_seed=str(served.service_key))
        try:
            return (await nc.jetstream().stream_info(configured_ledger()[0])).state.messages
        finally:
            await nc.close()

    return asyncio.run(size())


def test_an_import_interrupted_by_ctrl_c_says_so_in_one_line_and_goes_on_when_run_again(served: Served,
                                                                                       tmp_path: Path) -> None:
    # An acceptance tester's: Ctrl-C gave a KeyboardInterrupt traceback (from the reading workers too).
    tree = tmp_path / "tree"
    for number in range(RECORDS):
        ratification(tree, f"adr-{number}", ["alice"], {"alice": {}}, status="ratified")
    served.enrol("alice")

    def exported() -> int:
        lines = [json.loads(line) for line in served.run("export").stdout.splitlines()]
        return sum(line.get("tag") == "RatificationImported" for line in lines)

    env = {k: v for k, v in os.environ.items() if k != "ATHENAEUM_NATS_URL"}
    before = ledger_size(served)
    importing = subprocess.Popen([*ATHENAEUM, "import", str(tree), "--as", "ada", "--data-dir", str(served.data_dir)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # Read straight from the ledger, in milliseconds: a CLI read takes long enough for the import to end.
        assert until(lambda: ledger_size(served), lambda size: size > before, 60) > before, "nothing imported in a minute"
        assert importing.poll() is None, "the import ended before it could be interrupted: give it a larger tree"
        importing.send_signal(signal.SIGINT)
        _, said = importing.communicate(timeout=60)
    finally:
        if importing.poll() is None:
            importing.kill()
    assert importing.returncode == 130 and "Traceback" not in said, said
    assert [line for line in said.splitlines() if line.strip()] == [
        "athenaeum: interrupted; run it again to go on: what it sent before applies once"], said
    again = served.run("import", str(tree), actor="ada")
    assert again.returncode == 0, again.stderr
    assert exported() == RECORDS  # each record once, the interrupted import's and the second's together
