"""What an acceptance tester found attacking identity and the stored commands from outside:
the export checked as the README pipes it, a token naming a human, A2A refusing at the HTTP
layer, and an export whose events were rewritten under their signed commands."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import msgspec

from athenaeum.services.audit import export as ledger_export
from athenaeum.services.audit.digest import Digest
from athenaeum.services.jetstream.command_records import COMMAND as COMMAND_HEADER
from athenaeum.services.jetstream.entries import Entry
from athenaeum.events.ratification_commands import InitRatification
from athenaeum.services.client import SyncClient
from tests.services.conftest import ATHENAEUM, Served

TEXT = "# ADR 50\n"


def test_an_export_piped_into_verify_export_is_verified(served: Served) -> None:
    assert served.run("ratify", "init", "adr-50", "--roster", "alice", "--text", TEXT).returncode == 0
    exported = served.run("export").stdout
    for args in ([], ["-"]):  # `athenaeum export | athenaeum verify-export`, and `-` for stdin
        verified = subprocess.run([*ATHENAEUM, "verify-export", *args, "--json"], input=exported,
                                  capture_output=True, text=True, timeout=60)
        assert verified.returncode == 0 and json.loads(verified.stdout)["summary"]["HARD"] == 0, verified.stderr
    flipped = exported.replace('"ArtifactFrozen"', '"ArtifactFrozeN"', 1)
    verified = subprocess.run([*ATHENAEUM, "verify-export"], input=flipped, capture_output=True, text=True, timeout=60)
    assert verified.returncode == 1 and "HARD" in verified.stdout


def test_a_token_naming_a_human_or_another_is_refused_as_the_holder_acting_as_another(served: Served) -> None:
    """Over HTTP and A2A alike: 403 actor_mismatch, and a request with no proof 401 with its
    challenge, never a JSON-RPC error on a 200."""
    served.enrol("alice")
    served.enrol("bob")
    http = json.loads((served.data_dir / "serve.json").read_text())["http"]
    token = served.run("agent", "token", "alice", actor="alice").stdout.strip().splitlines()[-1]
    alice = {"Authorization": f"Bearer {token}"}
    before = served.run("export").stdout
    as_ada = httpx.post(f"{http}/commands/ratification/init", headers=alice | {"X-Agent-Name": "ada"},
                        json={"topic": "adr-51", "roster": ["alice"], "artifact": TEXT})
    assert as_ada.status_code == 403 and as_ada.json()["error"]["code"] == "actor_mismatch", as_ada.text
    send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "t-51", "role": "ROLE_USER", "parts": [{"text": "Ratify ADR 51"}],
        "metadata": {"athenaeum_mode": "ratify", "topic": "adr-51", "roster": ["alice"], "artifact": TEXT}},
        "configuration": {"returnImmediately": True}}}
    a2a = f"{http}/a2a"
    unproven = httpx.post(a2a, headers={"A2A-Version": "1.0", "X-Agent-Name": "alice"}, json=send)
    assert unproven.status_code == 401 and unproven.headers["WWW-Authenticate"] == "Bearer", unproven.text
    assert unproven.json()["error"]["data"][0]["metadata"]["code"] == "unauthenticated"
    as_bob = httpx.post(a2a, headers=alice | {"A2A-Version": "1.0", "X-Agent-Name": "bob"}, json=send)
    assert as_bob.status_code == 403 and as_bob.json()["error"]["data"][0]["metadata"]["code"] == "actor_mismatch"
    assert served.run("export").stdout == before  # nothing written
    opened = httpx.post(a2a, headers=alice | {"A2A-Version": "1.0"}, json=send)
    assert opened.status_code == 200 and opened.json()["result"]["task"]["id"] == "t-51", opened.text
    cancel = {"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": "t-51"}}
    assert httpx.post(a2a, headers={"A2A-Version": "1.0"}, json=cancel).status_code == 401


def _forged(exported: str, change: str, into: str, headers: Callable[[dict], dict] = lambda headers: headers) -> str:
    """The export with one vote's stored bytes rewritten (its payload's ``change`` into ``into``,
    its headers by ``headers``), every readable copy and the end digest made to agree: what
    anyone holding the file can do, with no key of anybody's."""
    lines, digest, out = exported.splitlines(), Digest(), []
    for raw in lines:
        line = msgspec.json.decode(raw)
        if "export" in line:
            digest = Digest(line["export"]["sha256"], line["export"]["count"], 0)
        elif "end" in line:
            line = {"end": {"count": digest.count, "sha256": digest.sha256}}
        else:
            vote = line.get("tag") == "VoteCast"
            payload = line["payload"].replace(change, into) if vote else line["payload"]
            stored_headers = headers(line["headers"]) if vote else line["headers"]
            entry = Entry.made(int(line["position"]), line["subject"], stored_headers, payload.encode())
            line = ledger_export._described(entry, ledger_export._decoded(entry.payload))  # noqa: SLF001
            digest.update(entry)
        out.append(msgspec.json.encode(line).decode())
    return "\n".join(out) + "\n"


def test_an_event_rewritten_under_its_signed_command_fails_verify_export(served: Served, tmp_path: Path) -> None:
    """alice signed SIGN; the export, rewritten, says she dissented."""
    assert served.run("ratify", "init", "adr-52", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    sha = hashlib.sha256(TEXT.encode()).hexdigest()
    assert served.run("ratify", "vote", "adr-52", "--sha256", sha, "--sign", actor="alice").returncode == 0
    exported = served.run("export").stdout
    forged = _forged(exported, '"decision":"SIGN"', '"decision":"DISSENT"')
    assert forged != exported and "LedgerCheckpoint" not in forged
    path = tmp_path / "forged.jsonl"
    path.write_text(forged)
    verified = served.run("verify-export", str(path), "--json")
    assert verified.returncode == 1, verified.stdout
    codes = {finding["code"] for finding in json.loads(verified.stdout)["findings"] if finding["severity"] == "HARD"}
    assert "not_as_decided" in codes, verified.stdout


def test_a_signed_command_moved_in_time_is_reported_by_verify_export(served: Served, tmp_path: Path) -> None:
    """alice signed her vote now; the export, rewritten, records it two days later, its event
    with it, so that it decides the same: its signature's time says otherwise."""
    assert served.run("ratify", "init", "adr-53", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    sha = hashlib.sha256(TEXT.encode()).hexdigest()
    assert served.run("ratify", "vote", "adr-53", "--sha256", sha, "--sign", actor="alice").returncode == 0
    exported = served.run("export").stdout
    vote = next(json.loads(line) for line in exported.splitlines() if '"tag":"VoteCast"' in line)
    at = vote["command"]["at"]
    later = (datetime.fromisoformat(at) + timedelta(days=2)).isoformat().replace("+00:00", "Z")

    def moved(headers: dict) -> dict:
        record = json.loads(base64.b64decode(headers[COMMAND_HEADER]))
        record["at"] = later  # written back as the service writes it, so that its signed bytes stay as signed
        written = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        return headers | {COMMAND_HEADER: base64.b64encode(written).decode()}

    forged = _forged(exported, f'"timestamp":"{vote["event"]["timestamp"]}"', f'"timestamp":"{later}"', moved)
    path = tmp_path / "moved.jsonl"
    path.write_text(forged)
    verified = served.run("verify-export", str(path), "--json")
    findings = json.loads(verified.stdout)["findings"]
    assert ("WARN", "signed_apart") in {(finding["severity"], finding["code"]) for finding in findings}, findings
    later = later.removesuffix("Z")  # a time without a zone, which no service writes: reported, not a crash
    path.write_text(_forged(exported, f'"timestamp":"{vote["event"]["timestamp"]}"', f'"timestamp":"{later}"', moved))
    zoneless = served.run("verify-export", str(path), "--json")
    said = zoneless.stdout + zoneless.stderr
    assert zoneless.returncode == 1 and json.loads(zoneless.stdout)["summary"]["HARD"], said


def test_an_export_from_a_later_position_verifies_each_signature_by_the_key_it_names(
        served: Served, tmp_path: Path) -> None:
    """The roster's bindings and tokens lie before the cut: not checked, and said so (WARN), but
    a signature over a command changed since still fails."""
    served.enrol("alice")
    token = served.run("agent", "token", "alice", actor="alice").stdout.strip().splitlines()[-1]
    http = json.loads((served.data_dir / "serve.json").read_text())["http"]
    assert served.run("ratify", "init", "adr-54", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    since = json.loads(served.run("export").stdout.splitlines()[-1])["end"]["count"] + 1
    opened = httpx.post(f"{http}/commands/ratification/init", headers={"Authorization": f"Bearer {token}"},
                        json={"topic": "adr-55", "roster": ["alice"], "artifact": TEXT})
    assert opened.status_code == 200, opened.text
    sha = hashlib.sha256(TEXT.encode()).hexdigest()
    assert served.run("ratify", "vote", "adr-54", "--sha256", sha, "--sign", actor="alice").returncode == 0
    exported = served.run("export", "--since", str(since)).stdout
    path = tmp_path / "partial.jsonl"
    path.write_text(exported)
    verified = served.run("verify-export", str(path), "--json")
    findings = {(finding["severity"], finding["code"]) for finding in json.loads(verified.stdout)["findings"]}
    assert verified.returncode == 0 and findings <= {("WARN", "not_decided_again"), ("WARN", "no_checkpoint")}, findings

    def dissenting(headers: dict) -> dict:
        record = json.loads(base64.b64decode(headers[COMMAND_HEADER]))
        record["command"]["decision"] = "DISSENT"
        written = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
        return headers | {COMMAND_HEADER: base64.b64encode(written).decode()}

    path.write_text(_forged(exported, '"decision":"SIGN"', '"decision":"DISSENT"', dissenting))
    verified = served.run("verify-export", str(path), "--json")
    hard = {finding["code"] for finding in json.loads(verified.stdout)["findings"] if finding["severity"] == "HARD"}
    assert verified.returncode == 1 and hard == {"bad_signature"}, verified.stdout


def test_an_unproven_sender_is_refused_401_before_its_body_is_read(served: Served) -> None:
    """No Authorization, one the gateway cannot take, or a well-formed token the ledger never
    issued, with a body that is no command: 401, never the 400 that would describe the
    command's shape to someone who proved nothing."""
    served.enrol("alice")
    http = json.loads((served.data_dir / "serve.json").read_text())["http"]
    token = served.run("agent", "token", "alice", actor="alice").stdout.strip().splitlines()[-1]
    before = served.run("export").stdout
    unproven = [{}, {"Authorization": "Basic YWxpY2U6cHc="}, {"Authorization": "Bearer"}, {"Authorization": "x"},
                {"Authorization": f"Bearer {'0' * len(token)}"}]
    bodies = [b"{not json", b'{"topic": 7}', b"[]"]
    for headers in unproven:
        for body in bodies:
            for path in ("/commands/ratification/init", "/tasks", "/tasks/1/transition"):
                answer = httpx.post(f"{http}{path}", content=body, headers=headers | {"X-Agent-Name": "alice",
                                                                                     "X-Project-Id": "web"})
                assert answer.status_code == 401, (path, headers, body, answer.text)
                assert answer.json()["error"] == {"code": "unauthenticated", "field": "Authorization",
                                                  "message": answer.json()["error"]["message"]}
            a2a = httpx.post(f"{http}/a2a", content=body, headers=headers | {"A2A-Version": "1.0"})
            assert a2a.status_code == 401 and a2a.headers["WWW-Authenticate"] == "Bearer", (headers, body, a2a.text)
            assert a2a.json()["error"]["data"][0]["metadata"]["code"] == "unauthenticated"
        # A JSON-RPC request that would act, its params wrong: refused before they are read.
        send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": "?"}}
        assert httpx.post(f"{http}/a2a", json=send, headers=headers | {"A2A-Version": "1.0"}).status_code == 401
    # Reads stay open to anyone; one with an Authorization the gateway cannot take is refused.
    get = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "t-404"}}
    read = httpx.post(f"{http}/a2a", json=get, headers={"A2A-Version": "1.0"})
    assert read.status_code == 200 and read.json()["error"]["data"][0]["reason"] == "TASK_NOT_FOUND", read.text
    assert httpx.post(f"{http}/a2a", json=get, headers={"A2A-Version": "1.0", "Authorization": "Basic x"}).status_code == 401
    # A sender with a token learns what is wrong with its body, as before.
    proven = httpx.post(f"{http}/commands/ratification/init", content=b"{not json",
                        headers={"Authorization": f"Bearer {token}"})
    assert proven.status_code == 400 and proven.json()["error"]["code"] == "invalid", proven.text
    assert served.run("export").stdout == before  # nothing written


def test_an_a2a_task_id_is_opened_through_a2a_only_and_a_command_id_is_given_once(served: Served) -> None:
    """Over NATS an agent cannot take a task id that A2A would then refuse; over HTTP the id is
    named where it was given, and a header and a body naming two ids are refused, not one chosen."""
    seed = served.enrol("alice")
    token = served.run("agent", "token", "alice", actor="alice").stdout.strip().splitlines()[-1]
    before = served.run("export").stdout
    with SyncClient(served.url, "alice", seed=seed) as alice:
        squatted = alice.send(InitRatification(topic="adr-60", roster=["alice"], artifact=TEXT, command_id="a2a:t-60"))
    assert squatted.error is not None and (squatted.error.code, squatted.error.field) == ("invalid", "command_id")
    http = json.loads((served.data_dir / "serve.json").read_text())["http"]
    alice_http = {"Authorization": f"Bearer {token}"}
    body = {"topic": "adr-61", "roster": ["alice"], "artifact": TEXT}
    in_body = httpx.post(f"{http}/commands/ratification/init", headers=alice_http, json=body | {"command_id": "a2a:x"})
    assert in_body.status_code == 400 and in_body.json()["error"]["field"] == "command_id", in_body.text
    both = httpx.post(f"{http}/commands/ratification/init", headers=alice_http | {"Idempotency-Key": "idem-1"},
                      json=body | {"command_id": "other"})
    assert both.status_code == 400 and both.json()["error"]["field"] == "Idempotency-Key", both.text
    assert served.run("export").stdout == before  # nothing written
    same = httpx.post(f"{http}/commands/ratification/init", headers=alice_http | {"Idempotency-Key": "idem-1"},
                      json=body | {"command_id": "idem-1"})
    assert same.status_code == 200, same.text
