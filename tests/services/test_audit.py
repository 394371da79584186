"""Auditors: a clean history audits clean; history tampered with the way a privileged intruder
could (straight to the stream, past the command service) is a HARD finding at its position."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.context import Context
from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates import thread
from athenaeum.aggregates.ratification import FAMILY
from athenaeum.aggregates.ratification_state import evolve as ratification_evolve
from athenaeum.aggregates.rules import Stamp
from athenaeum.aggregates.state import fold
from athenaeum.events import Event, family_id
from athenaeum.events.commands import Command, CommandRecord
from athenaeum.events.ratification import AtomRef, Decision, DissentItem, Resolution, VoteCast
from athenaeum.events.ratification_commands import CastVote
from athenaeum.events.thread import EntryAppended, EntryKind, Evaluation, OpenQuestionAdded, ThreadReopened, Vector
from athenaeum.events.thread_commands import AskQuestion, ReopenThread
from athenaeum.services.commands.handler import fingerprint
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.routes import BY_COMMAND
from athenaeum.services.commands.store import CommandKey
from athenaeum.services.jetstream.factory import stream_config
from tests.services.conftest import Served

TEXT = "# ADR 20\n"


def history(served: Served) -> dict:
    """A little of everything, through the command service."""
    import hashlib

    sha = hashlib.sha256(TEXT.encode()).hexdigest()
    served.run("ratify", "init", "adr-20", "--roster", "alice,bob", "--text", TEXT)
    served.run("ratify", "vote", "adr-20", "--sha256", sha, "--sign")
    served.run("thread", "open", "t20", "--context", "c", "--target", "1,1,1", "--body", "b")
    served.run("thread", "contribute", "t20", "--eval", "0.5,0.5,0.5", "--body", "c", actor="bob")
    served.run("thread", "close", "t20", "--eval", "0.4,0.4,0.4", "--current", "0.9,0.9,0.9", "--summary", "s",
               "--page", "wiki/t.md", "--patch-summary", "p", actor="carol")
    served.run("thread", "reopen", "t20", "--eval", "0.1,0.1,0.1", "--reason", "r", "--discovery", "d")
    served.run("thread", "close", "t20", "--eval", "0.2,0.2,0.2", "--current", "1.2,1.2,1.2", "--summary", "s2",
               "--page", "wiki/t.md", "--patch-summary", "p2", actor="carol")
    served.run("thread", "recognize", "t20", actor="ada")  # the closer, carol, writes the page
    last = served.run("quorum", "propose", "--text", "x", "--electorate", "bob", "--threshold", "1", "--json")
    served.run("check", "--after", str(json.loads(last.stdout)["position"]))
    return {"sha": sha}


def audit(served: Served, *options: str) -> tuple[int, dict]:
    done = served.run("audit", "--humans", "ada", "--json", *options)
    return done.returncode, json.loads(done.stdout)


def intruder(served: Served) -> AthenaeumApplication:
    return AthenaeumApplication(env={"PERSISTENCE_MODULE": "athenaeum.services.jetstream", "ATHENAEUM_NATS_URL": served.url,
                                     "ATHENAEUM_NATS_KEY": str(served.service_key)})


def test_a_clean_history_audits_clean_and_its_export_verifies(ledger: Served, tmp_path: Path) -> None:
    history(ledger)
    code, report = audit(ledger)
    assert code == 0 and report["summary"]["HARD"] == 0 and report["summary"]["events"] > 10, report
    exported = ledger.run("export")
    path = tmp_path / "ledger.jsonl"
    path.write_text(exported.stdout)
    verified = ledger.run("verify-export", str(path), "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["summary"]["HARD"] == 0


def forge(served: Served, events: Callable[[Any], list[Event]], aggregate_id: str, command: Command,
          actor: str, **record: Any) -> int:
    """Append ``events`` (made from the aggregate's state) straight to the stream, past the
    command service, with a record of ``command`` as a forger writes it; their last position."""

    async def append() -> int:
        store = await JetStreamCommandStore.open([served.url], stream_config("ATHENAEUM", 1, immutable=True), fold_of,
                                                 key=served.service_key)
        try:
            appended = events(await store.load(aggregate_id))
            fields = {"route": BY_COMMAND[type(command)].name, "command": msgspec.Raw(msgspec.json.encode(command)),
                      "fingerprint": fingerprint(command), "actor": actor, "at": appended[0].timestamp,
                      "events": len(appended), "humans_configured": True} | record  # as serve --humans ada has it
            key = CommandKey(actor, aggregate_id, command.command_id or "")
            return await store.append(appended, CommandRecord(**fields), key)
        finally:
            await store.close()

    return asyncio.run(append())


def hard(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["severity"] == "HARD"]


def test_a_forged_event_that_no_command_appended(ledger: Served) -> None:
    facts = history(ledger)
    app = intruder(ledger)
    try:
        state = app.repository.get("adr-20", projector_func=fold(ratification_evolve))
        forged = Stamp("adr-20", state.version, Context(actor="bob", now=_now(), command_id="forged"))(
            VoteCast, agent="bob", decision=Decision.SIGN, artifact_sha256=facts["sha"])
        [recording] = app.save(forged)
    finally:
        app.close()
    code, report = audit(ledger)
    assert code == 1 and [f["code"] for f in hard(report)] == ["no_command"]
    assert hard(report)[0]["position"] == recording.notification.id


def test_a_forged_command_the_rules_refuse(ledger: Served) -> None:
    facts = history(ledger)
    vote = CastVote(topic="adr-20", sha256=facts["sha"], decision=Decision.SIGN, command_id="forged")

    def mallory_votes(state: Any) -> list[Event]:
        return [Stamp("adr-20", state.version, Context(actor="mallory", now=_now(), command_id="forged"))(
            VoteCast, agent="mallory", decision=Decision.SIGN, artifact_sha256=facts["sha"])]

    position = forge(ledger, mallory_votes, "adr-20", vote, "mallory")
    code, report = audit(ledger)
    assert code == 1 and [f["code"] for f in hard(report)] == ["rule_violation"]
    assert "not_rostered" in hard(report)[0]["message"] and hard(report)[0]["position"] == position


def test_a_forged_command_whose_events_are_not_what_it_decides(ledger: Served) -> None:
    facts = history(ledger)
    vote = CastVote(topic="adr-20", sha256=facts["sha"], decision=Decision.SIGN, command_id="forged")
    dissent = DissentItem(atom=AtomRef(section="s", anchor="a"), objection="o", proposed_resolution=Resolution.TICKET)

    def bob_dissents(state: Any) -> list[Event]:  # the record says he signed
        return list(FAMILY.decide(state, msgspec.structs.replace(vote, decision=Decision.DISSENT, dissent=[dissent]),
                                  Context(actor="bob", now=_now(), command_id="forged")))

    forge(ledger, bob_dissents, "adr-20", vote, "bob")
    code, report = audit(ledger)
    assert code == 1 and [f["code"] for f in hard(report)] == ["not_as_decided"]


def test_a_second_reopen_of_one_closure(ledger: Served) -> None:
    ledger.run("thread", "open", "t21", "--context", "c", "--target", "1,1,1", "--body", "b")
    ledger.run("thread", "contribute", "t21", "--eval", "0.5,0.5,0.5", "--body", "c", actor="bob")
    ledger.run("thread", "close", "t21", "--eval", "0.4,0.4,0.4", "--current", "0.9,0.9,0.9", "--summary", "s",
               "--page", "wiki/u.md", "--patch-summary", "p", actor="carol")
    reopened = ledger.run("thread", "reopen", "t21", "--eval", "0.1,0.1,0.1", "--reason", "r", "--discovery", "d",
                          "--json")
    ledger.run("check", "--after", str(json.loads(reopened.stdout)["position"]))
    thread_id = family_id("thread", "t21")
    again = ReopenThread(slug="t21", eval=Vector(0.1, 0.1, 0.1), reason="again", discovery="again", command_id="x")

    def reopened_twice(state: Any) -> list[Event]:
        stamp = Stamp(thread_id, state.version, Context(actor="bob", now=_now(), command_id="x"))
        entry = stamp(EntryAppended, n=state.last_n + 1, kind=EntryKind.REOPEN, author="bob", body="again",
                      last_eval=Evaluation(ref=state.last_n, v=Vector(0.1, 0.1, 0.1)), reason="again")
        return [entry, stamp(ThreadReopened, closure_n=3, reopen_n=state.last_n + 1, by="bob", reason="again")]

    forge(ledger, reopened_twice, thread_id, again, "bob")
    code, report = audit(ledger, "--family", "thread")
    assert code == 1 and [f["code"] for f in report["findings"]] == ["rule_violation"]
    assert "reopen_exhausted" in report["findings"][0]["message"]


def test_garbage_on_a_marker_or_tracking_subject_is_a_finding(ledger: Served) -> None:
    history(ledger)

    async def publish() -> None:
        nc = await nats.connect(ledger.url, nkeys_seed=str(ledger.service_key))
        await nc.request("ATHENAEUM.cmd.0123456789abcdef0123456789abcdef", b'{"garbage": true}', timeout=10)
        await nc.request("ATHENAEUM.trk.s.views", b"not tracking", timeout=10)
        await nc.request("ATHENAEUM.elsewhere", b"{}", timeout=10)
        await nc.close()

    asyncio.run(publish())
    code, report = audit(ledger)
    assert code == 1 and [f["code"] for f in hard(report)] == ["stray_marker", "malformed_tracking", "unknown_subject"]


def test_a_message_the_store_did_not_write_is_reported_and_followed_past(ledger: Served) -> None:
    history(ledger)

    async def forge() -> None:
        nc = await nats.connect(ledger.url, nkeys_seed=str(ledger.service_key))
        for headers in ({"Athenaeum-Version": "3"}, {"Athenaeum-Version": "x", "Athenaeum-Topic": "VoteCast"}):
            await nc.request("ATHENAEUM.ev.s.adr-20", b"{}", headers=headers, timeout=10)
        await nc.close()

    asyncio.run(forge())
    code, report = audit(ledger)
    assert code == 1 and [f["code"] for f in report["findings"] if f["severity"] == "HARD"] == ["unknown_tag"] * 2
    assert ledger.run("export").returncode == 0
    # The views move past it: a later command is still reflected.
    later = ledger.run("ratify", "init", "adr-21", "--roster", "alice", "--text", TEXT, "--json")
    shown = ledger.run("ratify", "show", "adr-21", "--after", str(json.loads(later.stdout)["position"]))
    assert shown.returncode == 0 and "adr-21" in shown.stdout


def test_auditors_write_nothing_a_mistyped_stream_or_a_used_out_directory_is_refused(
    ledger: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history(ledger)
    used = tmp_path / "records"
    assert ledger.run("replay", "--until", "5", "--out", str(used)).returncode == 0
    again = ledger.run("replay", "--until", "9", "--out", str(used))
    assert again.returncode == 2 and "not an empty directory" in again.stderr
    monkeypatch.setenv("ATHENAEUM_STREAM", "ATHENAEM")
    typo = ledger.run("audit")
    assert typo.returncode == 3 and "no stream ATHENAEM" in typo.stderr
    monkeypatch.delenv("ATHENAEUM_STREAM")
    assert ledger.run("audit", "--humans", "ada").returncode == 0  # and the mistyped stream was never created
    app = intruder(ledger)
    try:
        streams = app.factory.connection.run(app.factory.connection.client.stream_info("ATHENAEM"))
    finally:
        app.close()
    assert streams["error"]["err_code"] == 10059


def test_an_event_with_a_version_gap(ledger: Served) -> None:
    history(ledger)
    app = intruder(ledger)
    try:
        state = app.repository.get("adr-20", projector_func=fold(ratification_evolve))
        forged = Stamp("adr-20", state.version + 1, Context(actor="bob", now=_now(), command_id="gap"))(
            VoteCast, agent="bob", decision=Decision.SIGN, artifact_sha256="0" * 64)
        app.save(forged)
    finally:
        app.close()
    code, report = audit(ledger)
    assert code == 1 and "version_gap" in [f["code"] for f in report["findings"]]


def test_an_export_line_whose_event_is_not_its_payload_fails_verification(ledger: Served, tmp_path: Path) -> None:
    history(ledger)
    lines = ledger.run("export").stdout.splitlines()
    victim = next(i for i, line in enumerate(lines) if '"tag":"VoteCast"' in line)
    record = json.loads(lines[victim])
    record["event"]["decision"] = "DISSENT"  # the readable copy, not the hashed payload
    lines[victim] = json.dumps(record)
    path = tmp_path / "tampered.jsonl"
    path.write_text("\n".join(lines) + "\n")
    verified = ledger.run("verify-export", str(path), "--json")
    assert verified.returncode == 1 and json.loads(verified.stdout)["findings"][0]["code"] == "line_mismatch"


def test_a_command_edited_in_an_export_fails_verification(ledger: Served, tmp_path: Path) -> None:
    history(ledger)
    lines = ledger.run("export").stdout.splitlines()
    victim = next(i for i, line in enumerate(lines) if '"tag":"VoteCast"' in line)
    readable, stored = json.loads(lines[victim]), json.loads(lines[victim])
    readable["command"]["actor"] = "mallory"  # the decoded copy only
    record = json.loads(base64.b64decode(stored["headers"]["Athenaeum-Command"]))
    record["actor"] = "mallory"  # the stored bytes, and the copy with them
    stored["headers"]["Athenaeum-Command"] = base64.b64encode(json.dumps(record).encode()).decode()
    stored["command"] = record
    for name, line, code in (("readable", readable, "line_mismatch"), ("stored", stored, "checkpoint_mismatch")):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines[:victim] + [json.dumps(line)] + lines[victim + 1:]) + "\n")
        verified = ledger.run("verify-export", str(path), "--json")
        codes = [finding["code"] for finding in json.loads(verified.stdout)["findings"]]
        assert verified.returncode == 1 and code in codes, (name, codes)  # the signature no longer holds either


def test_an_export_line_that_misstates_where_it_starts_fails_verification(ledger: Served, tmp_path: Path) -> None:
    """Its commands are decided again when its digest starts from no entry, whatever it says of
    where it starts: a header saying "since 2" must not spare an edited command that check."""
    history(ledger)
    lines = ledger.run("export").stdout.splitlines()
    header = json.loads(lines[0])
    header["export"]["since"] = 2
    path = tmp_path / "misstated.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    verified = ledger.run("verify-export", str(path), "--json")
    codes = [finding["code"] for finding in json.loads(verified.stdout)["findings"]]
    assert verified.returncode == 1 and codes.count("start_mismatch") == 2, codes  # the header, and the first line
    assert "not_decided_again" not in codes
    refused = ledger.run("export", "--since", "0")
    assert refused.returncode == 2 and "--since: '0' is not a position" in refused.stderr
    header["export"]["since"] = 0  # as an export made before positions were checked could say
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    earlier = ledger.run("verify-export", str(path), "--json")
    assert earlier.returncode == 0, earlier.stdout


def test_a_corrupted_export_line_fails_verification_naming_its_checkpoint(ledger: Served, tmp_path: Path) -> None:
    history(ledger)
    lines = ledger.run("export").stdout.splitlines()
    victim = next(i for i, line in enumerate(lines) if '"tag":"VoteCast"' in line)
    record = json.loads(lines[victim])
    record["payload"] = record["payload"].replace('"SIGN"', '"DISSENT"')
    record["event"]["decision"] = "DISSENT"  # a careful forger keeps the line consistent
    lines[victim] = json.dumps(record)
    path = tmp_path / "tampered.jsonl"
    path.write_text("\n".join(lines) + "\n")
    verified = ledger.run("verify-export", str(path), "--json")
    findings = json.loads(verified.stdout)["findings"]
    assert verified.returncode == 1 and findings[0]["code"] == "checkpoint_mismatch"
    assert findings[0]["position"] > record["position"]


def test_an_export_missing_lines_fails_verification_however_many(ledger: Served, tmp_path: Path) -> None:
    history(ledger)
    lines = ledger.run("export").stdout.splitlines()
    for removed in (1, 2, 3):
        path = tmp_path / f"short-{removed}.jsonl"
        path.write_text("\n".join(lines[:1] + lines[1 + removed:]) + "\n")
        verified = ledger.run("verify-export", str(path), "--json")
        assert verified.returncode == 1, removed
        assert "checkpoint_mismatch" in [finding["code"] for finding in json.loads(verified.stdout)["findings"]]


def test_an_export_cut_short_or_not_an_export_fails_verification(ledger: Served, tmp_path: Path) -> None:
    history(ledger)
    lines = ledger.run("export").stdout.splitlines()
    cases = {"truncated": lines[:-3], "no_start": [], "end_mismatch": lines[:3] + lines[4:]}
    for expected, kept in cases.items():
        path = tmp_path / f"{expected}.jsonl"
        path.write_text("".join(line + "\n" for line in kept))
        verified = ledger.run("verify-export", str(path), "--json")
        assert verified.returncode == 1, expected
        assert expected in [finding["code"] for finding in json.loads(verified.stdout)["findings"]]


def test_an_audit_as_of_a_position_inside_a_command_takes_the_command_whole(ledger: Served) -> None:
    history(ledger)
    lines = [json.loads(line) for line in ledger.run("export").stdout.splitlines()]
    events = [line for line in lines if "event" in line]
    first = next(a for a, b in zip(events, events[1:]) if a["event"]["command_id"] == b["event"]["command_id"])
    code, report = audit(ledger, "--until", str(first["position"]))
    assert code == 0 and report["summary"]["HARD"] == report["summary"]["WARN"] == 0, report
    cut = [json.loads(line) for line in ledger.run("export", "--until", str(first["position"])).stdout.splitlines()]
    whole = [e["position"] for e in events if e["event"]["command_id"] == first["event"]["command_id"]]
    assert [line["position"] for line in cut if "position" in line][-len(whole):] == whole


def test_a_decision_on_the_fleet_as_the_views_lagged_is_re_checked_as_they_stood(ledger: Served, tmp_path: Path) -> None:
    from athenaeum.aggregates import page
    from athenaeum.events.page import CanonLevel
    from athenaeum.events.page_commands import ApprovePage
    from athenaeum.services.audit.auditor import Audit

    def run(*args: str, actor: str) -> dict:
        done = ledger.run(*args, "--json", actor=actor)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    for agent in ("alice", "bob"):
        run("agent", "register", agent, actor="ada")
    text = tmp_path / "p.md"
    text.write_text("# P\n")
    run("page", "init", "wiki/p.md", "--file", str(text), actor="alice")
    run("page", "read", "wiki/p.md", "--session", "s1", actor="bob")
    ready = run("page", "endorse", "wiki/p.md", "--status", "accepted", "--session", "s1", actor="bob")["position"]
    run("agent", "register", "dave", actor="ada")  # the views have not seen dave yet:
    app = intruder(ledger)
    try:
        as_they_stood = Audit(app, humans=frozenset({"ada"}))
        as_they_stood.run(until_position=ready)
    finally:
        app.close()
    page_id = family_id("page", "p.md")  # the page wiki/p.md
    approve = ApprovePage(page="wiki/p.md", level=CanonLevel.CANONICAL, command_id="lagged")
    context = Context(actor="ada", now=_now(), command_id="lagged", actor_is_human=True, humans_configured=True,
                      members=tuple(as_they_stood.members()), as_of_position=ready)
    forge(ledger, lambda state: page.FAMILY.decide(state, approve, context), page_id, approve, "ada",
          actor_is_human=True, humans_configured=True, as_of_position=ready, at=context.now)
    code, report = audit(ledger)
    assert code == 0 and report["summary"]["HARD"] == 0, report


def _now() -> datetime:
    return datetime.now(timezone.utc)


def test_replay_writes_the_records_as_of_a_point_byte_for_byte_the_same_twice(ledger: Served, tmp_path: Path) -> None:
    history(ledger)
    until = "2030-01-01T00:00:00+00:00"
    for out in ("one", "two"):
        done = ledger.run("replay", "--until", until, "--out", str(tmp_path / out), "--humans", "ada")
        assert done.returncode == 0, done.stderr
    one = {p.relative_to(tmp_path / "one"): p.read_bytes() for p in (tmp_path / "one").rglob("*") if p.is_file()}
    two = {p.relative_to(tmp_path / "two"): p.read_bytes() for p in (tmp_path / "two").rglob("*") if p.is_file()}
    assert one == two
    names = {str(path) for path in one}
    threads = "wiki/agents/dialogue/t20"
    assert {".athenaeum/adr-20/manifest.yaml", ".athenaeum/adr-20/artifact.md",
            ".athenaeum/adr-20/log.md", f"{threads}/thread.md", f"{threads}/meta.yaml", f"{threads}/entries/002-bob.md",
            f"{threads}/entries/004-alice.md", "wiki/log.md", "wiki/t.md"} <= names  # the page wiki/t.md
    # Bob has not voted yet: blind until the tally, so alice's vote file is sealed, and the log
    # says only who voted.
    vote = (tmp_path / "one" / ".athenaeum/adr-20/alice.vote.yaml").read_text()
    assert "sealed: true" in vote and "SIGN" not in vote and ".athenaeum/adr-20/bob.vote.yaml" not in names
    log = (tmp_path / "one" / ".athenaeum/adr-20/log.md").read_text()
    assert "alice | VOTE" in log and "SIGN" not in log
    entry = (tmp_path / "one" / threads / "entries/002-bob.md").read_text()
    assert "last_eval:\n  ref: 001-alice.md\n  v:\n    N: 0.5" in entry
    early = ledger.run("replay", "--until", "2", "--out", str(tmp_path / "early"), "--humans", "ada")
    early_files = [p.relative_to(tmp_path / "early") for p in (tmp_path / "early").rglob("*") if p.is_file()]
    assert early.returncode == 0 and [str(p) for p in early_files] == ["wiki/log.md"]  # the wiki's tools need it


def test_a_forged_second_copy_of_a_command_under_its_key(ledger: Served) -> None:
    history(ledger)
    opened = ledger.run("thread", "open", "t30", "--context", "c", "--target", "1,1,1", "--body", "b", "--json")
    ledger.run("check", "--after", str(json.loads(opened.stdout)["position"]))
    ask = AskQuestion(slug="t30", question="again?", command_id="asked-once")

    def asked(state: Any) -> list[Event]:  # by a name no key binds: the copy, not its proof, is the finding
        return thread.FAMILY.decide(state, ask, Context(actor="zed", now=_now(), command_id="asked-once"))

    forge(ledger, asked, family_id("thread", "t30"), ask, "zed")
    forge(ledger, asked, family_id("thread", "t30"), ask, "zed")
    code, report = audit(ledger)
    assert code == 1 and [f["code"] for f in hard(report)] == ["command_repeated"]


def test_a_forged_command_stamped_before_its_aggregate_last_changed(ledger: Served) -> None:
    facts = history(ledger)
    vote = CastVote(topic="adr-20", sha256=facts["sha"], decision=Decision.SIGN, command_id="early")
    long_ago = datetime(2020, 1, 1, tzinfo=timezone.utc)

    def bob_votes_long_ago(state: Any) -> list[Event]:
        return FAMILY.decide(state, vote, Context(actor="bob", now=long_ago, command_id="early"))

    forge(ledger, bob_votes_long_ago, "adr-20", vote, "bob", at=long_ago)
    code, report = audit(ledger)
    assert code == 1 and [f["code"] for f in hard(report)] == ["time_travel"]


def test_an_event_stored_under_another_aggregate_and_one_no_view_takes(ledger: Served) -> None:
    facts = history(ledger)

    async def publish() -> None:
        nc = await nats.connect(ledger.url, nkeys_seed=str(ledger.service_key))
        state = FAMILY.project(None, [])  # a vote for adr-20, put on another topic's subject
        forged = Stamp("adr-20", 2, Context(actor="bob", now=_now(), command_id="x"))(
            VoteCast, agent="bob", decision=Decision.SIGN, artifact_sha256=facts["sha"])
        headers = {"Athenaeum-Version": "1", "Athenaeum-Topic": "VoteCast"}
        await nc.request("ATHENAEUM.ev.s.adr-99", msgspec.json.encode(forged), headers=headers, timeout=10)
        lost = Stamp(family_id("thread", "nowhere"), 0, Context(actor="bob", now=_now(), command_id="y"))(
            OpenQuestionAdded, oq_id="OQ-9", text="?", by="bob")
        headers = {"Athenaeum-Version": "1", "Athenaeum-Topic": "OpenQuestionAdded"}
        await nc.request("ATHENAEUM.ev.s.thread~3Anowhere", msgspec.json.encode(lost), headers=headers, timeout=10)
        await nc.close()
        assert state is None

    asyncio.run(publish())
    code, report = audit(ledger)
    codes = [f["code"] for f in hard(report)]
    assert code == 1 and codes[0] == "misplaced_event" and {"no_command", "projector_failed"} <= set(codes), codes
    replayed = ledger.run("replay", "--until", "2100-01-01T00:00:00Z", "--out", str(ledger.data_dir / "records"))
    assert replayed.returncode == 0, replayed.stderr
