"""The readers alone, on the files: what cannot be imported is said, by file and line, and
nothing is guessed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from athenaeum.services.importing.folder_files import MAX_FILE
from athenaeum.services.importing.run import TreeReading, records
from tests.services.importing.trees import dissent, page, ratification, scratchpad, thread


def findings_of(root: Path) -> dict[str, set[tuple[str, str, int | None]]]:
    found, _, _ = records([root])
    return {record.key: {(f.code, f.file, f.line) for f in record.findings} for record in found}


def test_a_folder_without_its_manifest_is_reported_and_not_imported(tmp_path: Path) -> None:
    folder = ratification(tmp_path, "adr-7", ["alice", "bob"], {})
    (folder / "manifest.yaml").unlink()
    [record], _, _ = records([tmp_path])
    assert record.command is None and record.becomes is None
    assert ("invalid", "manifest.yaml", None) in {(f.code, f.file, f.line) for f in record.findings}


def test_yaml_that_does_not_parse_and_bytes_that_are_not_text_are_findings_at_their_place(tmp_path: Path) -> None:
    folder = ratification(tmp_path, "adr-7", ["alice", "bob"], {"alice": {}})
    (folder / "bob.vote.yaml").write_text("agent: bob\ndecision: [SIGN\n")
    (folder / "log.md").write_bytes(b"\xff\xfe not text\n")
    found = findings_of(tmp_path)["adr-7"]
    assert ("invalid", "bob.vote.yaml", 3) in found
    assert ("invalid", "log.md", None) in found


def test_a_dissent_vote_in_another_agents_file_and_a_vote_after_expiry(tmp_path: Path) -> None:
    ratification(tmp_path, "adr-7", ["alice", "bob"], {
        "alice": {"agent": "bob"},
        "bob": {"decision": "DISSENT", "dissent": dissent(), "timestamp": "2099-02-01T00:00:00Z"}})
    found = findings_of(tmp_path)["adr-7"]
    assert ("actor_mismatch", "alice.vote.yaml", 1) in found
    assert ("voting_closed", "bob.vote.yaml", 4) in found


def test_unknown_files_are_listed_beside_the_records(tmp_path: Path) -> None:
    folder = thread(tmp_path, "canon-rules", [{"author": "alice"}, {"author": "bob", "v": {"N": 1, "C": 1, "R": 1}}])
    (folder / "notes.txt").write_text("scratch\n")
    (tmp_path / "Makefile").write_text("all:\n")
    found, unknown, _ = records([tmp_path])
    assert [record.becomes for record in found] == ["ThreadImported"]
    assert unknown == [tmp_path / "Makefile", folder / "notes.txt"]


def test_an_entry_by_the_author_before_it_and_a_ref_to_another_entry(tmp_path: Path) -> None:
    v = {"N": 0.2, "C": 0.2, "R": 0.2}
    thread(tmp_path, "canon-rules", [{"author": "alice"}, {"author": "bob", "v": v},
                                     {"author": "bob", "v": v, "ref": "001-alice.md"}])
    found = findings_of(tmp_path)["canon-rules"]
    assert ("self_evaluation", "entries/003-bob.md", 4) in found
    assert ("bad_eval_ref", "entries/003-bob.md", 8) in found


def test_a_scratchpad_that_is_not_one_is_reported_by_line_and_not_imported(tmp_path: Path) -> None:
    pads = tmp_path / "fleet" / "quorum"
    pads.mkdir(parents=True)
    (pads / "A1B2C3D4").write_text('{\n  "proposal": "x",\n  "proposal": "y"\n}\n')  # a key twice
    (pads / "b1b2c3d4.json").write_text(json.dumps({"proposal": "x", "proposer": "heimdallr", "threshold": "2/3",
                                                    "acks": ["alice", "Bob"], "nacks": ["carol: too soon", "dave"],
                                                    "status": "awaiting-coordinator", "opened_at": "2026-05-01"},
                                                   indent=2))
    (pads / "NOTES.txt").write_text("not a scratchpad\n")
    found, unknown, _ = records([tmp_path])
    assert [(r.family, r.key, r.command) for r in found] == [("quorum", "A1B2C3D4", None), ("quorum", "b1b2c3d4", None)]
    assert unknown == [pads / "NOTES.txt"]
    findings = {record.key: {(f.code, f.line) for f in record.findings} for record in found}
    assert findings["A1B2C3D4"] == {("invalid", 3)}
    assert findings["b1b2c3d4"] == {
        ("invalid", None),  # not a proposal id: lowercase
        ("invalid", 7),  # Bob is no slug
        ("invalid", 11),  # dave's NACK gives no reason
        ("invalid", 13),  # a tie awaiting a coordinator nobody named
    }


def test_values_of_the_wrong_shape_and_times_past_the_calendar_are_findings(tmp_path: Path) -> None:
    # An acceptance tester's: a list or a map where one value is written, or a time that leaves the
    # calendar once in UTC, ended the whole read in a traceback.
    ratification(tmp_path, "adr-7", ["alice"], {}, mode=["fast"], status={"open": True},
                 expires_at="9999-12-31T23:30:00-01:00")
    ratification(tmp_path, "adr-8", ["alice", "bob"], {"alice": {"decision": ["SIGN"]},
                                                       "bob": {"timestamp": "0001-01-01T00:00:00+05:00"}},
                 status="pending-human")
    (tmp_path / ".athenaeum" / "adr-8" / "human-decision.yaml").write_text("topic: adr-8\ndecision: [reject]\n")
    found, _, _ = records([tmp_path])
    said = {record.key: {(f.code, f.file, f.message.split()[0]) for f in record.findings} for record in found}
    assert {("invalid", "manifest.yaml", field) for field in ("expires_at", "mode", "status")} <= said["adr-7"], said
    assert {("invalid", "alice.vote.yaml", "decision"), ("invalid", "bob.vote.yaml", "timestamp"),
            ("invalid", "human-decision.yaml", "decision")} <= said["adr-8"], said


def test_a_topic_folder_given_alone_is_read_as_the_ratification_it_is(tmp_path: Path) -> None:
    folder = ratification(tmp_path, "adr-7", ["alice", "bob"], {"alice": {}})
    [record], unknown, _ = records([folder])
    assert record.key == "adr-7" and record.command is not None and not unknown


def test_a_tree_read_in_worker_processes_is_read_as_here_in_its_order(tmp_path: Path) -> None:
    for number in range(3):
        ratification(tmp_path, f"adr-{number}", ["alice", "bob"], {"alice": {}, "bob": {"agent": "carol"}})
        folder = thread(tmp_path, f"thread-{number}", [{"author": "alice"}, {"author": "bob", "v": {"N": 1, "C": 1,
                                                                                                    "R": 1}}])
        (folder / "notes.txt").write_text("scratch\n")
    here, there = TreeReading([tmp_path], processes=0), TreeReading([tmp_path], processes=2)
    assert list(there) == list(here) and len(here.read) == 6
    assert there.unknown == here.unknown and len(here.unknown) == 3 and there.logs == here.logs


def test_links_fifos_and_files_too_large_are_never_read(tmp_path: Path) -> None:
    # An acceptance tester's: a vote linked to /etc/hostname was kept in the ledger, a FIFO hung
    # the import, a link to /dev/zero filled the memory.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.nk").write_text("SUAxxxx\n")
    tree = tmp_path / "tree"
    folder = ratification(tree, "adr-7", ["alice", "bob"], {"alice": {}})
    (folder / "bob.vote.yaml").symlink_to(outside / "secret.nk")
    os.mkfifo(folder / "carol.vote.yaml")
    (tree / ".athenaeum" / "adr-8").symlink_to(folder)
    thread_folder = thread(tree, "canon-rules", [{"author": "alice"}, {"author": "bob", "v": {"N": 1, "C": 1, "R": 1}}])
    os.mkfifo(thread_folder / "entries" / "003-carol.md")
    (tree / "fleet" / "quorum").mkdir(parents=True)
    (tree / "fleet" / "quorum" / "ABCD1235").symlink_to("/dev/zero")
    os.mkfifo(tree / "wiki" / "log.md")
    (tree / "wiki" / "concepts").mkdir()
    (tree / "wiki" / "concepts" / "Big.md").write_bytes(b"---\nrev: v1\nlifecycle: working\n---\n" + b"x" * (MAX_FILE + 1))
    found, unknown, logs = records([tree])
    by_key = {record.key: record for record in found}
    assert set(by_key) == {"adr-7", "canon-rules", "concepts/Big.md"} and not logs, (by_key, logs)
    assert "SUAxxxx" not in str(by_key["adr-7"].command) and by_key["canon-rules"].command is not None
    assert by_key["concepts/Big.md"].command is None
    assert any("not read" in f.message for f in by_key["concepts/Big.md"].findings)
    named = {str(path) for path in unknown}
    assert {str(folder / "bob.vote.yaml"), str(folder / "carol.vote.yaml"), str(thread_folder / "entries" / "003-carol.md"),
            *(str(tree / p) for p in (".athenaeum/adr-8", "fleet/quorum/ABCD1235", "wiki/log.md"))} <= named, named


def test_a_record_the_ledger_would_refuse_for_its_size_is_reported_not_sent(tmp_path: Path) -> None:
    # An acceptance tester's: the dry run said nothing, then the import was refused on the limits.
    folder = thread(tmp_path, "long", [{"author": "alice"}] + [
        {"author": ("bob", "alice")[n % 2], "v": {"N": 0.1, "C": 0.1, "R": 0.1}} for n in range(1001)])
    big = ratification(tmp_path, "adr-7", ["alice"], {"alice": {}})
    (big / "notes.md").write_bytes(b"x" * 1000)
    for n in range(2):
        (big / f"carol-{n}.vote.yaml").write_bytes(b"# " + b"x" * (MAX_FILE - 10) + b"\n")
    by_key = {record.key: record for record in records([tmp_path])[0]}
    assert by_key["long"].command is None and "more than the 1,000 a record holds" in by_key["long"].findings[-1].message
    assert folder.exists() and by_key["adr-7"].command is None
    assert "one message to the ledger holds" in by_key["adr-7"].findings[-1].message


def test_odd_files_an_acceptance_tester_wrote_are_findings_or_read_as_meant(tmp_path: Path) -> None:
    # A BOM (some editors write one) before front matter or JSON; an entry numbered `true`; an
    # empty meta.yaml; the same proposal in two files and the same page in two wikis, which the
    # ledger takes once (the dry run said nothing of these, then the import refused them).
    V = {"N": 0.5, "C": 0.5, "R": 0.5}
    with_bom = thread(tmp_path / "a", "bom", [{"author": "alice"}, {"author": "bob", "v": V}])
    for file in (with_bom / "thread.md", with_bom / "entries" / "002-bob.md"):
        file.write_bytes(b"\xef\xbb\xbf" + file.read_bytes())
    numbered = thread(tmp_path / "a", "numbered", [{"author": "alice"}])
    entry = numbered / "entries" / "001-alice.md"
    entry.write_text(entry.read_text().replace("n: 1\n", "n: true\n"))
    empty = thread(tmp_path / "a", "empty", [{"author": "alice"}])
    (empty / "meta.yaml").write_text("")
    for root in (tmp_path / "a", tmp_path / "b"):
        page(root, "concepts/Canon.md", {"alice": "accepted | 2026-05-16 | rev: v2"})
        scratchpad(root, "ABCD1234", ["alice"], [], status="accepted")
    pad = tmp_path / "a" / "fleet" / "quorum" / "ABCD1234"
    pad.write_bytes(b"\xef\xbb\xbf" + pad.read_bytes())
    found, _, _ = records([tmp_path / "a", tmp_path / "b"])
    by_ref: dict[str, list] = {}
    for record in found:
        by_ref.setdefault(record.ref, []).append(record)
    assert by_ref["thread:bom"][0].command is not None, by_ref["thread:bom"][0].findings
    assert by_ref["thread:numbered"][0].command is None and by_ref["thread:empty"][0].command is None
    assert any("meta.yaml is no map" in f.message for f in by_ref["thread:empty"][0].findings)
    for ref in ("page:concepts/Canon.md", "quorum:ABCD1234"):
        first, second = by_ref[ref]
        assert first.command is not None and second.command is None, (first, second)
        assert "is read already from" in second.findings[-1].message


def test_a_command_the_ledger_would_refuse_for_a_field_and_a_lone_surrogate_are_findings(tmp_path: Path) -> None:
    # A name past what the ledger takes was sent, then refused; a JSON escape of half a surrogate
    # pair ended the read in a traceback.
    long_name = "a" * 243  # entries/002-<it>.md: 258 characters, where a file name of the ledger has 255
    thread(tmp_path, "long-author", [{"author": "alice"}, {"author": long_name, "v": {"N": 1, "C": 1, "R": 1}}])
    scratchpad(tmp_path, "ABCD1234", ["alice"], [], status="accepted", proposal="half \ud800 a pair")
    (tmp_path / "fleet" / "quorum" / "ABCD1234").write_text(
        (tmp_path / "fleet" / "quorum" / "ABCD1234").read_text().replace("\ud800", "\\ud800"))
    by_key = {record.key: record for record in records([tmp_path])[0]}
    assert by_key["long-author"].command is None
    assert "the ledger would refuse its command" in by_key["long-author"].findings[-1].message
    assert by_key["ABCD1234"].command is None
    assert [(f.code, f.line) for f in by_key["ABCD1234"].findings] == [("invalid", 2)], by_key["ABCD1234"].findings


def test_a_record_is_named_by_the_id_it_is_imported_as_not_its_folder(tmp_path: Path) -> None:
    # An acceptance tester's: a folder whose manifest names another topic was reported under the
    # folder's name, so a second folder of that topic was not seen to be one.
    renamed = ratification(tmp_path, "adr-7", ["alice", "bob"], {"alice": {}}) / "manifest.yaml"
    renamed.write_text(renamed.read_text().replace("topic: adr-7", "topic: adr-8"))
    ratification(tmp_path, "adr-8", ["alice", "bob"], {"alice": {}})
    thread(tmp_path, "renamed", [{"author": "alice"}])
    opening = tmp_path / "wiki" / "agents" / "dialogue" / "renamed" / "thread.md"
    opening.write_text(opening.read_text().replace("slug: renamed", "slug: canon-rules"))
    found, _, _ = records([tmp_path])
    assert [(r.family, r.key, r.command is not None) for r in found] == [
        ("ratification", "adr-8", True), ("ratification", "adr-8", False), ("thread", "canon-rules", True)]
    assert "read already" in found[1].findings[-1].message
    assert any(f.file == "manifest.yaml" and "not the folder's name" in f.message for f in found[0].findings)
