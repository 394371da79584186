"""The views bucket is not trusted blindly, driven against a default ``athenaeum serve`` as an
operator holding the services' key would write it: ``audit`` compares every entry with the
views it rebuilds, by content, and serve mends a forged entry as soon as its key changes, or
at its next start, whatever position the entry claims."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
from nats.js.errors import NotFoundError

from athenaeum.services.views.bucket import POSITION, bucket_of
from tests.services.conftest import Served, until
from tests.services.test_audit import TEXT, hard

BUCKET = bucket_of("ATHENAEUM")
PAD = "fleet/quorum/0B0B0B0B"  # the scratchpad the fleet's tools read


def proposed(served: Served, pid: str = "0B0B0B0B") -> int:
    """A proposal open to bob and carol, acked by bob; the position of the ack."""
    for line in (("quorum", "propose", "--text", "x", "--electorate", "bob,carol", "--threshold", "2", "--id", pid),
                 ("quorum", "ack", pid)):
        done = served.run(*line, "--json", actor="alice" if line[1] == "propose" else "bob")
        assert done.returncode == 0, done.stdout + done.stderr
    return int(json.loads(done.stdout)["position"])


def bucket(served: Served, writes: dict[str, tuple[int | None, bytes]] | None = None,
           keys: tuple[str, ...] = ()) -> dict[str, tuple[int, Any]]:
    """Put ``writes`` (claiming a position, or none) as an operator could; then ``keys`` as the
    bucket holds them: the position each claims and its value (None: deleted or never put)."""

    async def act() -> dict[str, tuple[int, Any]]:
        nc = await nats.connect(served.url, nkeys_seed=str(served.service_key))
        js = nc.jetstream()
        try:
            for key, (position, value) in (writes or {}).items():
                headers = {POSITION: str(position)} if position is not None else None
                await js.publish(f"$KV.{BUCKET}.{key}", value, headers=headers)
            held = {}
            for key in keys:
                try:
                    msg = await js.get_msg(f"KV_{BUCKET}", subject=f"$KV.{BUCKET}.{key}")
                except NotFoundError:
                    held[key] = (0, None)
                    continue
                headers = msg.headers or {}
                value = None if headers.get("KV-Operation") else json.loads(msg.data)
                held[key] = (int(headers.get(POSITION, 0)), value)
            return held
        finally:
            await nc.close()

    return asyncio.run(act())


def audit(served: Served) -> tuple[int, dict[str, Any]]:
    done = served.run("audit", "--json", "--family", "views")
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def settled(served: Served, position: int) -> None:
    """Wait until the bucket holds the views as of ``position`` (its puts follow the views)."""
    assert until(lambda: bucket(served, keys=(PAD,))[PAD][0], lambda at: at >= position) >= position


def test_the_audit_reads_the_bucket_and_finds_what_no_projector_wrote(ledger: Served) -> None:
    acked = proposed(ledger)
    settled(ledger, acked)
    code, report = audit(ledger)
    assert code == 0 and not [f for f in report["findings"] if f["severity"] != "INFO"], report
    assert "bucket_not_compared" not in {f["code"] for f in report["findings"]}  # the auditor may read it
    bucket(ledger, {
        PAD: (10**9, b'{"status": "accepted"}'),  # past the ledger's end
        "proposals.0B0B0B0B": (acked, b'{"status": "accepted"}'),  # not what the views held where it claims
        "pending.mallory": (3, b'{"items": []}'),  # a document the views never had
        "pending.carol": (None, b'{"items": []}'),  # one that claims no position
    })
    code, report = audit(ledger)
    found = sorted((f["id"], f["position"]) for f in hard(report))
    assert code == 1 and found == [(PAD, 10**9), ("pending.carol", None), ("pending.mallory", 3),
                                   ("proposals.0B0B0B0B", acked)], report
    assert {f["code"] for f in hard(report)} == {"bucket_differs"}


def test_serve_mends_a_forged_entry_when_its_key_changes_or_at_its_next_start(ledger: Served) -> None:
    done = ledger.run("ratify", "init", "adr-60", "--roster", "alice,bob", "--text", TEXT, "--json")
    opened = int(json.loads(done.stdout)["position"])
    acked = proposed(ledger)
    settled(ledger, acked)
    # The probe: an entry that claims a position the ledger will not reach for long outlived
    # the real proposal's next change, and serve's next start. And two whose keys stay as they are.
    bucket(ledger, {PAD: (10**9, b'{"status": "rejected"}'), "ratifications.adr-60": (opened, b'{"status": "ratified"}'),
                    "pending.mallory": (10**9, b'{"items": []}')})
    done = ledger.run("quorum", "ack", "0B0B0B0B", "--json", actor="carol")
    assert done.returncode == 0, done.stdout
    closed = int(json.loads(done.stdout)["position"])
    # Written at the position of the last event the projector read with the ack's: a checkpoint
    # the ledger appended right after it, say.
    held = until(lambda: bucket(ledger, keys=(PAD,))[PAD], lambda entry: closed <= entry[0] < 10**9)
    assert closed <= held[0] < 10**9 and held[1]["status"] == "accepted", held
    code, report = audit(ledger)
    assert code == 1 and [(f["id"], f["position"]) for f in hard(report)] == [
        ("pending.mallory", 10**9), ("ratifications.adr-60", opened)], report
    assert ledger.stop() == 0
    again = Served(ledger.data_dir)
    try:
        assert again.ready_line.startswith("athenaeum ready"), again.ready_line
        mended = bucket(again, keys=("ratifications.adr-60", "pending.mallory"))
        assert mended["ratifications.adr-60"][1]["status"] == "open" and mended["pending.mallory"][1] is None, mended
        code, report = audit(again)
        assert code == 0 and not hard(report), report
    finally:
        again.stop()
