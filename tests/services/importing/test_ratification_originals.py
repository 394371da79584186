"""``athenaeum import`` of what the original ratification tools really write (dancer's
``athenaeum`` and fleet-ratify's ``fleet_ratify.py``), end to end through the CLI against a real
serve: read without false findings, what breaks a rule found at its file and line, and written
back by ``replay`` where the tool that wrote it reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.services import originals
from tests.services.conftest import Served, until
from tests.services.importing.test_ratification_import import LATER, imported
from tests.services.importing.trees import SHA, fleet_ratify, ratification

FLEET_RATIFY = ("ATHENAEUM_FLEET_RATIFY",
                "plugins/skill-enhancers/grill-each-other/skills/fleet-ratify/scripts/fleet_ratify.py")


def dry_run(served: Served, tree: Path) -> tuple[int, dict]:
    done = served.run("import", str(tree), "--dry-run", "--json", actor="ada")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def findings(report: dict, tree: Path) -> set[tuple[str, str]]:
    return {(f["code"], f["at"].removeprefix(str(tree) + "/")) for r in report["records"] for f in r["findings"]}


def test_fleet_ratify_topics_are_read_and_replayed_under_its_own_folder(served: Served, tmp_path: Path) -> None:
    tree = tmp_path / "vault"
    fleet_ratify(tree, "plan", ["alice", "bob"], {"bob": None})
    ratification(tree, "adr-7", ["alice", "bob"], {})  # dancer's, beside it
    code, report = dry_run(served, tree)
    assert code == 0 and not report["unknown"], report
    assert sorted(r["key"] for r in report["records"]) == ["ratification:adr-7", "ratification:plan"]
    imported(served, tree)
    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    for path in (tree / ".fleet-ratify" / "plan").iterdir():
        assert (out / ".fleet-ratify" / "plan" / path.name).read_bytes() == path.read_bytes(), path.name
    assert not (out / ".athenaeum" / "plan").exists() and (out / ".athenaeum" / "adr-7" / "manifest.yaml").exists()
    assert originals.awaiting_fleet_ratify(out, "alice", ".fleet-ratify") == {"plan"}
    if (script := originals.original(FLEET_RATIFY)) is not None:
        done = subprocess.run([sys.executable, str(script), "check"], capture_output=True, text=True, timeout=60,
                              env={"AGENT_ID": "alice", "FLEET_RATIFY_VAULT_ROOT": str(out), "PATH": ""})
        assert "  - plan" in done.stdout.splitlines(), done.stdout + done.stderr


@pytest.mark.parametrize("reason", ["no", "yes", "off", "1.5", "breaks CI: see issue #12", "it's 'quoted': here"])
def test_an_objection_is_read_as_the_text_fleet_ratify_wrote(served: Served, tmp_path: Path, reason: str) -> None:
    tree = tmp_path / "vault"
    fleet_ratify(tree, "plan", ["alice", "bob"], {"alice": None, "bob": reason}, status="pending-human",
                 log=("[2026-05-15T10:00:01Z] alice | DECOMPOSED: ",))
    code, report = dry_run(served, tree)
    assert code == 0 and not findings(report, tree), report
    imported(served, tree)
    show = json.loads(served.run("ratify", "show", "plan", "--json").stdout)
    assert show["tally"]["dissents"] == ["bob"] and [a["objection"] for a in show["atoms"]] == [reason]


def test_an_objection_that_is_no_yaml_otherwise_is_still_a_finding(served: Served, tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    ratification(tree, "adr-7", ["alice", "bob"], {})
    (tree / ".athenaeum" / "adr-7" / "bob.vote.yaml").write_text(  # hand-written, not fleet-ratify's layout
        f"agent: bob\nartifact_sha256: {SHA}\ndecision: DISSENT\ntimestamp: 2026-05-15T10:00:00Z\ndissent:\n"
        "  - objection: breaks CI: see #12\n")
    code, report = dry_run(served, tree)
    assert code == 1 and ("invalid", ".athenaeum/adr-7/bob.vote.yaml:6") in findings(report, tree), report


def test_a_slug_yaml_reads_as_a_number_is_the_slug_written(served: Served, tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    ratification(tree, "2026", ["007", "on"], {"on": {}})
    for file in ("manifest.yaml", "on.vote.yaml"):  # as dancer writes them: unquoted
        path = tree / ".athenaeum" / "2026" / file
        path.write_text(path.read_text().replace("'", ""))
    code, report = dry_run(served, tree)
    assert code == 0 and not findings(report, tree), report


def test_dancers_design_and_reconcile_scaffolds_are_no_ratifications(served: Served, tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    ratification(tree, "adr-7", ["alice", "bob"], {})
    (design := tree / ".athenaeum" / "canon-design").mkdir()
    (design / "DESIGN.md").write_text("# canon-design\n\n<!-- Design doc placeholder. -->\n")
    (reconcile := tree / ".athenaeum" / "state-sync").mkdir()
    for name in ("claims.yaml.template", "grill-log.md", "diff.md"):
        (reconcile / name).write_text(f"# state-sync: {name}\n")
    code, report = dry_run(served, tree)
    assert code == 0, report
    assert [r["key"] for r in report["records"]] == ["ratification:adr-7"]
    assert report["unknown"] == sorted(str(path) for folder in (design, reconcile) for path in folder.iterdir())


def test_dancers_unfilled_sha_is_a_sha_mismatch_on_a_readable_manifest(served: Served, tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    folder = ratification(tree, "raw-open", ["neo", "kimi-mbp"], {})
    manifest = folder / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace(SHA, "<run: shasum -a 256 artifact.md>"))
    code, report = dry_run(served, tree)
    assert code == 1 and findings(report, tree) == {("sha_mismatch", ".athenaeum/raw-open/manifest.yaml:3")}, report
    assert "never computed" in report["records"][0]["findings"][0]["message"]
    assert report["records"][0]["becomes"] == "RatificationImported"


def test_dancers_a2a_task_and_drawings_are_kept_and_written_back(served: Served, tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    folder = ratification(tree, "adr-9", ["alice"], {"alice": {}}, status="ratified")
    task = {"id": "athenaeum-ratify-adr-9-0e0e6c74", "sessionId": "agent-1", "status": "submitted",
            "metadata": {"athenaeum_mode": "ratify", "topic": "adr-9"}, "artifacts": []}
    (folder / task["id"]).mkdir()
    (folder / task["id"] / "task.json").write_text(json.dumps(task, indent=2) + "\n")
    (folder / "ratified-artifact.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'><text>adr-9</text></svg>\n")
    (folder / "ratified-artifact.excalidraw").write_text('{"type": "excalidraw", "elements": []}\n')
    (folder / "athenaeum-ratify-adr-9-0e0e6c74" / "notes.txt").write_text("not dancer's\n")
    code, report = dry_run(served, tree)
    assert code == 0 and report["unknown"] == [str(folder / task["id"] / "notes.txt")], report
    imported(served, tree)
    out = tmp_path / "out"
    assert served.run("replay", "--until", LATER, "--out", str(out)).returncode == 0
    for name in (f"{task['id']}/task.json", "ratified-artifact.svg", "ratified-artifact.excalidraw"):
        assert (out / ".athenaeum" / "adr-9" / name).read_bytes() == (folder / name).read_bytes(), name


def test_a_tally_before_the_last_vote_and_before_expiry_is_a_finding_at_its_log_line(served: Served,
                                                                                      tmp_path: Path) -> None:
    tree = tmp_path / "vault"
    fleet_ratify(tree, "early", ["alice", "bob", "carol"], {"carol": None}, status="pending-human",
                 log=("[2026-05-15T10:00:01Z] carol | DECOMPOSED: ",))
    # At the last vote: fine.
    fleet_ratify(tree, "on-time", ["alice", "bob"], {"alice": None, "bob": None}, status="ratified",
                 log=("[2026-05-15T10:00:01Z] alice | RATIFIED: ",))
    code, report = dry_run(served, tree)
    assert code == 1 and findings(report, tree) == {("invalid", ".fleet-ratify/early/log.md:3")}, report


def test_dancers_failure_events_are_log_lines(served: Served, tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    folder = ratification(tree, "adr-7", ["alice", "bob"], {"alice": {}})
    with (folder / "log.md").open("a") as log:
        for event in ("PARSE-FAIL: bob.vote.yaml", "IDENTITY-COLLISION: bob", "SHA-MISMATCH: bob", "HUMAN-TIMEOUT: "):
            log.write(f"[2026-05-16T09:00:00Z] alice | {event}\n")
    code, report = dry_run(served, tree)
    assert code == 0 and not findings(report, tree), report


def test_a_sealed_vote_from_athenaeums_replay_is_a_vote_cast_and_never_a_sign(served: Served, tmp_path: Path) -> None:
    tree = tmp_path / "replayed"
    folder = ratification(tree, "adr-7", ["alice", "bob"], {})
    (folder / "alice.vote.yaml").write_text(  # as replay writes a vote cast before the tally
        "# Sealed: votes are blind until the tally, which reveals how this one was cast.\n"
        f"agent: alice\nartifact_sha256: {SHA}\ntimestamp: 2026-05-15T10:00:00Z\nsealed: true\n")
    code, report = dry_run(served, tree)
    assert code == 0 and not findings(report, tree), report
    imported(served, tree)
    assert json.loads(served.run("ratify", "show", "adr-7", "--json").stdout)["voted"] == ["alice"]
    again = served.run("ratify", "vote", "adr-7", "--sha256", SHA, "--sign", actor="alice")
    assert again.returncode == 1 and "already_voted" in again.stderr
    assert served.run("ratify", "vote", "adr-7", "--sha256", SHA, "--sign", actor="bob").returncode == 0
    show = until(lambda: json.loads(served.run("ratify", "show", "adr-7", "--json").stdout),
                 lambda s: s["status"] != "open")
    assert show["status"] == "pending-human" and show["tally"]["signs"] == ["bob"]  # alice's is no silent yes
