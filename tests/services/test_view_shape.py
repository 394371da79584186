"""Views of another shape than this version's, as an earlier version left them, driven against a
default ``athenaeum serve``: the audit judges them by the ledger alone, and the next start
writes the views and their bucket again from the ledger's start."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from tests.services.conftest import Served, until
from tests.services.test_bucket_audit import audit, bucket

TEXT = "# ADR 40\n"
SHA = hashlib.sha256(TEXT.encode()).hexdigest()
KEY = "ratifications.adr-40"


def as_an_earlier_version_left_them(data_dir: Path) -> None:
    """No shape recorded, and the ratification's document, in the views and their bucket,
    without the field the second shape added."""
    with sqlite3.connect(data_dir / "views.sqlite") as views:
        views.execute("DROP TABLE athenaeum_shapes")
        (stored,) = views.execute(
            "SELECT document FROM athenaeum_views WHERE view = 'ratifications' AND key = 'adr-40'").fetchone()
        document = json.loads(stored)
        del document["changed_at"]
        views.execute("UPDATE athenaeum_views SET document = ? WHERE view = 'ratifications' AND key = 'adr-40'",
                      (json.dumps(document),))
    views.close()


def test_views_of_an_earlier_shape_are_written_again_from_the_ledger_at_the_next_start(ledger: Served) -> None:
    assert ledger.run("ratify", "init", "adr-40", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    voted = json.loads(ledger.run("ratify", "vote", "adr-40", "--sha256", SHA, "--sign", "--json").stdout)
    held = until(lambda: bucket(ledger, keys=(KEY,))[KEY], lambda entry: entry[0] >= voted["position"])
    assert held[1]["changed_at"]
    old = {field: value for field, value in held[1].items() if field != "changed_at"}
    as_an_earlier_version_left_them(ledger.data_dir)
    bucket(ledger, {KEY: (held[0], json.dumps(old).encode())})

    # This version's audit cannot judge views of another shape: it says so, and finds nothing.
    code, report = audit(ledger)
    assert code == 0 and not [f for f in report["findings"] if f["severity"] != "INFO"], report
    assert any(f["code"] == "views_not_compared" and "shape 1" in f["message"] for f in report["findings"]), report

    ledger.stop()
    again = Served(ledger.data_dir)
    try:
        shown = json.loads(again.run("ratify", "show", "adr-40", "--json").stdout)
        assert shown["voted"] == ["alice"] and shown["changed_at"] == held[1]["changed_at"]
        rewritten = until(lambda: bucket(again, keys=(KEY,))[KEY], lambda entry: "changed_at" in (entry[1] or {}))
        assert rewritten[1] == held[1]
        code, report = audit(again)
        assert code == 0 and not [f for f in report["findings"] if f["severity"] != "INFO"], report
        assert not [f for f in report["findings"] if "shape" in f["message"]], report
    finally:
        again.stop()
