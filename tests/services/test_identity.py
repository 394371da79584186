"""Identity driven as users and attackers would, against ``athenaeum serve --humans ada``:
keys made and used by the CLI, nobody acting as another, rotation and revocation, and every
signature checked again by ``audit`` and, offline, by ``verify-export``."""

from __future__ import annotations

import base64
import hashlib
import json
import stat
import subprocess
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import httpx
import msgspec
from athenaeum.aggregates.context import Context
from athenaeum.aggregates.ratification import FAMILY
from athenaeum.events.commands import Proof
from athenaeum.events.ratification import Decision
from athenaeum.events.ratification_commands import CastVote, InitRatification
from athenaeum.services.commands.credentials import signed
from athenaeum.services.identity.keys import key_path, read_key
from tests.services.conftest import ATHENAEUM, Served
from tests.services.test_audit import audit, forge, hard

TEXT = "# ADR 30\n"


def keys(served: Served) -> Path:
    return served.data_dir / "keys"


def fleet(served: Served) -> None:
    """ada (human, keyed by serve) registers alice and bob; the CLI makes their keys."""
    for name in ("alice", "bob"):
        done = served.run("agent", "register", name, actor="ada")
        assert done.returncode == 0, done.stdout + done.stderr


def lines(served: Served) -> int:
    """The export's lines, the ledger's own checkpoints aside (written every few entries here)."""
    return len([line for line in served.run("export").stdout.splitlines() if "LedgerCheckpoint" not in line])


def test_serve_keys_its_humans_and_the_audit_needs_no_humans_flag(ledger: Served) -> None:
    ada = key_path(ledger.data_dir, "ada")
    assert stat.S_IMODE(ada.stat().st_mode) == 0o600
    fleet(ledger)
    assert stat.S_IMODE(key_path(ledger.data_dir, "alice").stat().st_mode) == 0o600
    assert ledger.run("ratify", "init", "adr-30", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    for name, vote in (("alice", "--sign"), ("bob", "--dissent")):
        args = ["--atom", "ADR 30::adr-30::too soon"] if vote == "--dissent" else []
        assert ledger.run("ratify", "vote", "adr-30", "--sha256", _sha(), vote, *args, actor=name).returncode == 0
    decided = ledger.run("ratify", "decide", "adr-30", "--decision", "reject", actor="ada")
    assert decided.returncode == 0, decided.stdout + decided.stderr
    done = ledger.run("audit", "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["summary"]["HARD"] == 0, report
    assert not [f for f in report["findings"] if f["code"] == "humans_unchecked"]


def with_record_changed(served: Served, change: Callable[[dict], None], path: Path) -> Path:
    """An export of the ledger in which the record of the ratification's first command was
    changed (in its stored bytes and its readable copy alike), written to ``path``."""
    exported = served.run("export").stdout.splitlines()
    victim = next(i for i, line in enumerate(exported) if '"tag":"ArtifactFrozen"' in line)
    line = json.loads(exported[victim])
    record = json.loads(base64.b64decode(line["headers"]["Athenaeum-Command"]))
    change(record)
    line["headers"]["Athenaeum-Command"] = base64.b64encode(json.dumps(record).encode()).decode()
    line["command"] = record
    path.write_text("\n".join(exported[:victim] + [json.dumps(line)] + exported[victim + 1:]) + "\n")
    return path


def hard_codes(served: Served, export: Path) -> list[str]:
    verified = json.loads(served.run("verify-export", str(export), "--json").stdout)
    return [f["code"] for f in verified["findings"] if f["severity"] == "HARD"]


def _sha() -> str:
    return hashlib.sha256(TEXT.encode()).hexdigest()


def test_one_key_cannot_act_as_another_and_nothing_is_written(ledger: Served) -> None:
    fleet(ledger)
    assert ledger.run("ratify", "init", "adr-30", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    before = lines(ledger)
    alice = str(key_path(ledger.data_dir, "alice"))
    attempts = [
        ("ratify", "vote", "adr-30", "--sha256", _sha(), "--sign", "--as", "bob", "--key", alice),
        ("agent", "register", "mallory", "--human", "--as", "ada", "--key", alice),
        ("agent", "rotate-key", "bob", "--as", "bob", "--key", alice),
    ]
    for attempt in attempts:  # the server says whose connection it is
        *args, _, actor, _, key = attempt
        done = ledger.run(*args, "--key", key, "--json", actor=actor)
        assert done.returncode == 1 and json.loads(done.stdout)["error"]["code"] == "actor_mismatch", done.stdout
    key_path(ledger.data_dir, "bob").unlink()  # bob's key gone: his name alone proves nothing
    done = ledger.run("ratify", "vote", "adr-30", "--sha256", _sha(), "--sign", "--json", actor="bob")
    assert done.returncode == 3 and "admits only keys its roster binds" in json.loads(done.stdout)["error"]["message"]
    assert lines(ledger) == before


def test_a_rotated_key_and_a_revoked_one_and_what_they_signed_before(ledger: Served, tmp_path: Path) -> None:
    fleet(ledger)
    assert ledger.run("ratify", "init", "adr-30", "--roster", "alice,bob", "--text", TEXT, actor="alice").returncode == 0
    assert ledger.run("agent", "rotate-key", "alice", actor="alice").returncode == 0
    old = key_path(ledger.data_dir, "alice").with_name("alice.nk.old")
    vote = ("ratify", "vote", "adr-30", "--sha256", _sha(), "--sign", "--json")
    before = lines(ledger)
    done = ledger.run(*vote, "--key", str(old), actor="alice")
    # Refused by the command service, or, a moment after the rotation, by the server itself.
    assert done.returncode == 3 or json.loads(done.stdout)["error"]["code"] == "actor_mismatch", done.stdout
    assert lines(ledger) == before
    assert ledger.run(*vote, actor="alice").returncode == 0  # the new key
    # bob's own revocation, its record so long that it is stored after its event, in a marker
    assert ledger.run("agent", "revoke", "bob", "--reason", "left " * 6000, actor="bob").returncode == 0
    done = ledger.run(*vote, actor="bob")
    assert done.returncode == 3 or json.loads(done.stdout)["error"]["code"] == "key_revoked", done.stdout
    revoked = json.loads(ledger.run("agent", "list", "--status", "revoked", "--json", actor="alice").stdout)
    assert [(row["name"], bool(row["revoked_at"])) for row in revoked["items"]] == [("bob", True)], revoked
    code, report = audit(ledger)
    assert code == 0 and not hard(report), report  # what alice signed with her old key holds
    path = tmp_path / "ledger.jsonl"
    path.write_text(ledger.run("export").stdout)
    verified = ledger.run("verify-export", str(path), "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["summary"]["HARD"] == 0


def test_a_flipped_signature_fails_verify_export_and_a_forged_one_fails_the_audit(
        ledger: Served, tmp_path: Path) -> None:
    fleet(ledger)
    assert ledger.run("ratify", "init", "adr-30", "--roster", "alice,bob", "--text", TEXT, actor="alice").returncode == 0
    keys: list[str] = []

    def flip(record: dict) -> None:  # one letter of the signature; the rest as stored
        signature = record["proof"]["signature"]
        record["proof"]["signature"] = ("B" if signature[0] != "B" else "C") + signature[1:]
        keys.append(record["proof"]["public_key"])

    assert "bad_signature" in hard_codes(ledger, with_record_changed(ledger, flip, tmp_path / "flipped.jsonl"))

    vote = CastVote(topic="adr-30", sha256=_sha(), decision=Decision.SIGN, command_id="forged")
    proof = Proof(by="signature", public_key=keys[0], signed_at=datetime.now(timezone.utc),
                  signature=base64.urlsafe_b64encode(b"\0" * 64).decode())
    position = forge(ledger, lambda state: FAMILY.decide(state, vote, Context(
        actor="alice", now=datetime.now(timezone.utc), command_id="forged")), "adr-30", vote, "alice",
        proof=proof)
    code, report = audit(ledger)
    assert code == 1 and [(f["code"], f["position"]) for f in hard(report)] == [("bad_signature", position)]


def test_http_takes_a_bearer_token_for_an_agent_bound_to_a_key(ledger: Served) -> None:
    fleet(ledger)
    http = ledger.ready_line.split("http=")[1].split()[0]
    issued = ledger.run("agent", "token", "alice", actor="alice")
    assert issued.returncode == 0, issued.stderr
    token = issued.stdout.strip().splitlines()[-1]
    body = {"topic": "adr-31", "roster": ["alice", "bob"], "artifact": TEXT}
    url = f"{http}/commands/ratification/init"
    assert httpx.post(url, json=body, headers={"X-Agent-Name": "alice"}).status_code == 401  # bound: prove it
    assert httpx.post(url, json=body, headers={"Authorization": "Bearer forged"}).status_code == 401
    as_bob = httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}", "X-Agent-Name": "bob"})
    assert as_bob.status_code == 403 and as_bob.json()["error"]["code"] == "actor_mismatch"
    done = httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}"})
    assert done.status_code == 200 and done.json()["events"][0]["actor"] == "alice"
    assert ledger.run("agent", "token", "alice", "--revoke", token, actor="alice").returncode == 0
    body["topic"] = "adr-32"
    assert httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}"}).status_code == 401
    card = httpx.get(f"{http}/.well-known/agent.json").json()
    assert card["securitySchemes"]["bearer"]["scheme"] == "bearer" and card["security"] == [{"bearer": []}]
    assert "bearer" in httpx.get(f"{http}/openapi.json").json()["components"]["securitySchemes"]
    code, report = audit(ledger)
    assert code == 0 and not hard(report), report


def test_http_takes_a_command_signed_by_its_senders_own_key(ledger: Served) -> None:
    fleet(ledger)
    http = ledger.ready_line.split("http=")[1].split()[0]
    ledger_id = httpx.get(f"{http}/ledger").json()["ledger_id"]
    command = InitRatification(topic="adr-33", roster=["alice", "bob"], artifact=TEXT, command_id="signed-over-http")
    credential = signed(read_key(key_path(ledger.data_dir, "alice")), ledger_id, command, "alice")
    assert credential.signature is not None and credential.signed_at is not None
    headers = {"X-Agent-Name": "alice", "Athenaeum-Signature": credential.signature,
               "Athenaeum-Signed-At": credential.signed_at.isoformat()}
    url = f"{http}/commands/ratification/init"
    body = msgspec.to_builtins(command)
    altered = httpx.post(url, json=body | {"roster": ["alice"]}, headers=headers)
    assert altered.status_code == 401 and altered.json()["error"]["code"] == "bad_signature"
    as_bob = httpx.post(url, json=body, headers=headers | {"X-Agent-Name": "bob"})
    assert as_bob.status_code == 401 and as_bob.json()["error"]["code"] == "bad_signature"
    done = httpx.post(url, json=body, headers=headers)
    assert done.status_code == 200 and done.json()["events"][0]["actor"] == "alice", done.text
    stored = [json.loads(line) for line in ledger.run("export").stdout.splitlines() if "signed-over-http" in line]
    assert stored and stored[0]["command"]["proof"]["by"] == "signature"


def test_a_trusted_address_names_its_sender_and_the_audit_lists_what_it_took_on_its_word(tmp_path: Path) -> None:
    served = Served(tmp_path / "home", "--trust-agent-header", "127.0.0.1")
    try:
        http = served.ready_line.split("http=")[1].split()[0]
        body = {"topic": "adr-34", "roster": ["zed"], "artifact": TEXT}
        done = httpx.post(f"{http}/commands/ratification/init", json=body, headers={"X-Agent-Name": "zed"})
        assert done.status_code == 200, done.text
        human = httpx.post(f"{http}/commands/ratification/cancel", json={"topic": "adr-34"},
                           headers={"X-Agent-Name": "ada"})  # bound to a key: a header proves nothing of ada
        assert human.status_code == 401 and human.json()["error"]["code"] == "bad_signature"
        code, report = audit(served)
        assert code == 0 and [f["code"] for f in report["findings"] if f["severity"] == "INFO"].count("header_asserted") == 1
    finally:
        served.stop()
    refused = subprocess.run([*ATHENAEUM, "serve", "--data-dir", str(tmp_path / "other"), "--trust-agent-header", "proxy"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--trust-agent-header" in refused.stderr


def test_a_record_whose_proof_was_removed_is_unsigned_for_a_principal_bound_to_a_key(ledger: Served, tmp_path: Path) -> None:
    fleet(ledger)
    assert ledger.run("ratify", "init", "adr-30", "--roster", "alice,bob", "--text", TEXT, actor="alice").returncode == 0

    def remove_proof(record: dict) -> None:
        record["proof"] = None

    assert "unsigned" in hard_codes(ledger, with_record_changed(ledger, remove_proof, tmp_path / "unproven.jsonl"))


def test_a_missing_or_unreadable_key_is_one_line_and_exit_2(tmp_path: Path) -> None:
    not_a_seed = tmp_path / "garbage.nk"
    not_a_seed.write_text("SUnot-a-seed\n")
    for key in (tmp_path / "missing.nk", not_a_seed, tmp_path):
        done = subprocess.run([*ATHENAEUM, "ratify", "vote", "adr-1", "--sha256", _sha(), "--sign", "--as", "alice",
                               "--key", str(key), "--data-dir", str(tmp_path / "home")],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr and str(key) in done.stderr


def test_a_revoked_principal_holds_up_no_consensus(ledger: Served, tmp_path: Path) -> None:
    """It can never endorse again: a page is canonical once the others accept it."""
    fleet(ledger)
    assert ledger.run("agent", "revoke", "bob", "--reason", "left the fleet", actor="ada").returncode == 0
    page = tmp_path / "rules.md"
    page.write_text("# Rules\n\nHumans approve canon.\n")
    assert ledger.run("page", "init", "wiki/canon/rules.md", "--file", str(page), actor="alice").returncode == 0
    shown = json.loads(ledger.run("page", "show", "wiki/canon/rules.md", "--json", actor="alice").stdout)
    assert "bob" not in json.dumps(shown), shown  # no standing at all
    approved = ledger.run("page", "approve", "wiki/canon/rules.md", "--level", "canonical", "--json", actor="ada")
    assert approved.returncode == 0, approved.stdout
    code, report = audit(ledger)
    assert code == 0 and not hard(report), report
