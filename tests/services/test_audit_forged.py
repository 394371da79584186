"""The audit never crashes: history forged as an operator holding the services' key could
write it (events of the right tag holding nonsense, one family's events on another's subject,
events out of order, records with odd contexts, huge values, a cut ledger) is reported HARD
where it lies, and ``audit``, ``replay``, ``export`` and ``verify-export`` each answer with
findings or a line, never a traceback. Reads of an aggregate pass over what no event can be."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec

from athenaeum.aggregates.context import Context
from athenaeum.aggregates.ratification import FAMILY, sha256_of
from athenaeum.aggregates.rules import Stamp
from athenaeum.events import Event, family_id
from athenaeum.events.ratification import ArtifactFrozen, Decision, Mode, VoteCast
from athenaeum.events.ratification_commands import CastVote
from athenaeum.events.page import PageInitialized, Scope
from athenaeum.events.thread import OpenQuestionAdded
from athenaeum.services.jetstream.log import TOPIC
from athenaeum.services.jetstream.positions import VERSION
from athenaeum.services.jetstream.subjects import StreamSubjects
from tests.services.conftest import Served
from tests.services.test_audit import TEXT, forge, hard
from tests.services.test_ledger_guard import as_operator, audited, nats_alone, publish

SUBJECTS = StreamSubjects("ATHENAEUM")
FAR = datetime(9999, 12, 31, 23, 59, tzinfo=timezone.utc)  # one minute more and a time no longer adds up


def cli(served: Served, *args: str, actor: str = "alice") -> dict[str, Any]:
    done = served.run(*args, "--json", actor=actor)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    return json.loads(done.stdout)


def answered(served: Served, *args: str) -> tuple[int, dict[str, Any]]:
    """An auditor's verb, as JSON; never a traceback."""
    done = served.run(*args, "--json")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def put(served: Served, aggregate_id: str, version: int, event: Event | bytes, tag: str | None = None) -> int:
    """``event`` (or bytes) as version ``version`` of ``aggregate_id``, straight onto the ledger."""
    payload = event if isinstance(event, bytes) else msgspec.json.encode(event)
    tag = tag or (event.tag if isinstance(event, Event) else "VoteCast")
    return publish(served, SUBJECTS.aggregate(aggregate_id), payload, {TOPIC: tag, VERSION: str(version)})


def stamp(aggregate_id: str, version: int, at: datetime | None = None) -> Stamp:
    return Stamp(aggregate_id, version, Context(actor="mallory", now=at or datetime.now(timezone.utc), command_id="x"))


def some_history(served: Served, tmp_path: Path) -> None:
    """A ratification, a page, and a task whose reviewer recorded a verdict."""
    cli(served, "ratify", "init", "adr-50", "--roster", "alice,bob", "--text", TEXT)
    text = tmp_path / "p.md"
    text.write_text("# P\n")
    cli(served, "page", "init", "wiki/p.md", "--file", str(text))
    number = str(cli(served, "task", "create", "--title", "t", "--project", "web", actor="ops")["id"])
    for to, payload in (("claimed", "{}"), ("engineering", "{}"), ("built", '{"buildStatus": "clean", "commitSha": "abc123"}'),
                        ("reviewing", "{}"), ("reviewing", '{"reviewerRole": "security", "verdict": "approve"}')):
        verb = ("claim", number) if to == "claimed" else ("transition", number, "--to", to, "--payload", payload)
        cli(served, "task", *verb, "--project", "web", actor="engineer")


def test_forged_history_of_every_odd_kind_is_reported_where_it_lies(ledger: Served, tmp_path: Path) -> None:
    some_history(ledger, tmp_path)
    forged = {
        # Nonsense that decodes: a vote open until the end of time, and an aggregate's
        # first event that is another family's, on its own subject.
        put(ledger, "adr-far", 1, stamp("adr-far", 0)(
            ArtifactFrozen, initiator="mallory", artifact="x", artifact_sha256=sha256_of("x"), artifact_origin="",
            roster=("mallory",), mode=Mode.STANDARD, expires_at=FAR)): "no_command",
        put(ledger, family_id("thread", "t-odd"), 1, stamp(family_id("thread", "t-odd"), 0)(
            VoteCast, agent="mallory", decision=Decision.SIGN, artifact_sha256="0" * 64)): "no_command",
        # A vote before its ratification was opened, and a time with no time zone.
        put(ledger, "adr-early", 1, stamp("adr-early", 0)(
            VoteCast, agent="bob", decision=Decision.SIGN, artifact_sha256="0" * 64)): "no_command",
        put(ledger, "adr-50", 2, msgspec.json.encode(stamp("adr-50", 1)(
            VoteCast, agent="bob", decision=Decision.SIGN, artifact_sha256=sha256_of(TEXT))).replace(b"+00:00", b"")
            .replace(b"Z\"", b"\"")): "undecodable",
        # A huge value, and a page whose name no file can have.
        put(ledger, family_id("thread", "t-huge"), 1, stamp(family_id("thread", "t-huge"), 0)(
            OpenQuestionAdded, oq_id="OQ-1", text="?" * 600_000, by="mallory")): "no_command",
        put(ledger, family_id("page", "nul\x00.md"), 1, stamp(family_id("page", "nul\x00.md"), 0)(
            PageInitialized, author="mallory", content="x", content_sha256=sha256_of("x"),
            scope=Scope.DESCRIPTIVE)): "no_command",
    }
    vote = CastVote(topic="adr-50", sha256=sha256_of(TEXT), decision=Decision.SIGN, command_id="odd")

    def alice_votes(state: Any) -> list[Event]:
        return FAMILY.decide(state, vote, Context(actor="alice", now=datetime.now(timezone.utc), command_id="odd"))

    # A record whose context no command had: the fleet read far past the ledger's end.
    odd = forge(ledger, alice_votes, "adr-50", vote, "alice", as_of_position=10**12)
    forged[odd] = "context_differs"
    code, report = answered(ledger, "audit")
    found = {(finding["position"], finding["code"]) for finding in hard(report)}
    assert code == 1 and set(forged.items()) <= found, (forged, found)
    assert "audit_failed" not in {finding["code"] for finding in report["findings"]}, report
    code, _ = answered(ledger, "audit", "--until", str(max(forged)))
    assert code == 1
    replayed = ledger.run("replay", "--until", "9999-12-31T00:00:00Z", "--out", str(tmp_path / "records"))
    assert replayed.returncode == 0 and "Traceback" not in replayed.stderr, replayed.stderr
    assert "(not written, a name no file can have: wiki/nul\x00.md)" in replayed.stdout, replayed.stdout
    assert (tmp_path / "records" / "tasks").is_dir()  # the task with a verdict has its records
    export = tmp_path / "ledger.jsonl"
    export.write_text(ledger.run("export").stdout)
    # Offline, the proofs and the digests, and the whole ledger audited again from the lines alone.
    code, report = answered(ledger, "verify-export", str(export))
    verified = {(finding["position"], finding["code"]) for finding in hard(report)}
    assert code == 1 and (odd, "unsigned") in verified and set(forged.items()) <= verified, report


def test_an_export_mangled_anyhow_fails_verification_with_findings(ledger: Served, tmp_path: Path) -> None:
    cli(ledger, "ratify", "init", "adr-51", "--roster", "alice", "--text", TEXT)
    lines = ledger.run("export").stdout.splitlines()
    for name, mangled in {
        "start": [json.dumps({"export": []}), *lines[1:]],
        "digest": [json.dumps({"export": {"sha256": "not hex", "count": 0}}), *lines[1:]],
        "subject": [lines[0], json.dumps(json.loads(lines[1]) | {"subject": "nodots"}), *lines[2:]],
        "garbage": [lines[0], "[1, 2]", "null", '"x"', *lines[1:]],
    }.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(mangled) + "\n")
        code, report = answered(ledger, "verify-export", str(path))
        assert code == 1 and report["summary"]["HARD"], (name, report)


def test_a_page_read_passes_over_what_no_event_can_be_on_its_subject(served: Served, tmp_path: Path) -> None:
    text = tmp_path / "p.md"
    text.write_text("# P\n")
    cli(served, "page", "init", "wiki/p.md", "--file", str(text))
    page_id = family_id("page", "p.md")
    bad = [put(served, page_id, 2, b"\x00 not an event", tag="PageRevised"),
           put(served, page_id, 2, stamp("adr-52", 1)(VoteCast, agent="bob", decision=Decision.SIGN,
                                                      artifact_sha256="0" * 64))]  # a vote stored as the page's
    read = cli(served, "page", "read", "wiki/p.md", "--session", "s1", actor="bob")
    shown = cli(served, "page", "show", "wiki/p.md", "--after", str(read["position"]), actor="bob")
    assert shown["author"] == "alice" and shown["consensus"]["bob"]["status"] == "pending", shown
    code, report = answered(served, "audit", "--humans", "ada")
    assert code == 1 and [(f["code"], f["position"]) for f in hard(report)] == [
        ("undecodable", bad[0]), ("misplaced_event", bad[1])], report


def test_a_cut_ledger_is_audited_replayed_and_exported_without_a_traceback(ledger: Served, tmp_path: Path) -> None:
    cli(ledger, "ratify", "init", "adr-53", "--roster", "alice,bob", "--text", TEXT)
    cli(ledger, "quorum", "propose", "--text", "x", "--electorate", "alice,bob", "--threshold", "2", "--id", "0A1B2C3E")
    cli(ledger, "quorum", "ack", "0A1B2C3E", actor="alice")
    as_operator(ledger.url, ledger.service_key, "UPDATE", max_msgs_per_subject=1)
    assert ledger.process.wait(timeout=30) == 3  # serve refuses a cut ledger
    with nats_alone(ledger.data_dir) as server:
        code, report = audited(ledger.data_dir, server.url)
        assert code == 1 and "entries_missing" in {f["code"] for f in hard(report)}
        assert "audit_failed" not in {finding["code"] for finding in report["findings"]}, report
        options = ("--data-dir", str(ledger.data_dir), "--nats", server.url)
        replayed = ledger.run("replay", "--until", "9999-01-01T00:00:00Z", "--out", str(tmp_path / "r"), *options)
        assert replayed.returncode == 0 and "Traceback" not in replayed.stderr, replayed.stderr
        export = tmp_path / "cut.jsonl"
        export.write_text(ledger.run("export", *options).stdout)
    code, report = answered(ledger, "verify-export", str(export))
    # What is cut shows in a checkpoint that no longer matches, if one was written before the
    # cut, and in signatures whose signers' keys went with the roster's earlier events.
    assert code == 1 and {"checkpoint_mismatch", "bad_signature"} & {f["code"] for f in hard(report)}, report


def test_a_failure_no_check_foresaw_is_a_finding_at_its_entry(ledger: Served, monkeypatch: Any) -> None:
    from athenaeum.aggregates.application import AthenaeumApplication
    from athenaeum.services.audit import auditor
    from athenaeum.services.audit.auditor import Audit

    cli(ledger, "ratify", "init", "adr-54", "--roster", "alice,bob", "--text", TEXT)
    voted = cli(ledger, "ratify", "vote", "adr-54", "--sha256", sha256_of(TEXT), "--sign")
    cli(ledger, "thread", "open", "t54", "--context", "c", "--target", "1,1,1", "--body", "b")
    folds = auditor.fold_of

    def failing(aggregate_id: str) -> Any:  # a fold with a bug on one aggregate's history
        fold = folds(aggregate_id)
        return (lambda state, events: {}["no such key"]) if aggregate_id == "adr-54" else fold

    monkeypatch.setattr(auditor, "fold_of", failing)
    app = AthenaeumApplication(env={"PERSISTENCE_MODULE": "athenaeum.services.jetstream", "ATHENAEUM_NATS_URL": ledger.url,
                                    "ATHENAEUM_NATS_KEY": str(ledger.service_key)})
    try:
        report = Audit(app, humans=frozenset({"ada"})).run()
    finally:
        app.close()
    failed = [f for f in report.findings if f.code == "audit_failed"]
    assert {(f.family, f.id) for f in failed} == {("ratification", "adr-54")} and len(failed) == 2, report
    assert failed[-1].position == voted["position"] and "folding its VoteCast: KeyError('no such key')" in failed[-1].message
    assert not [f for f in report.findings if f.family == "thread"]  # and the rest is audited as ever
