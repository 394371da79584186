"""Reads are consistent by default: a read sees every command acknowledged before it began,
over HTTP, NATS and the CLI, with no ``after`` (issue 16; DESIGN.md §8)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from athenaeum.services.client import SyncClient
from tests.services.conftest import Served, served_over_http

ROUNDS = 20


@pytest.fixture
def served_http(tmp_path: Path) -> Iterator[tuple[Served, httpx.Client]]:
    with served_over_http(tmp_path / "home") as served_and_client:
        yield served_and_client


def as_(agent: str) -> dict[str, str]:
    return {"X-Agent-Name": agent, "X-Project-Id": "web"}


def test_a_read_right_after_a_write_sees_it_every_time(served_http: tuple[Served, httpx.Client]) -> None:
    _, http = served_http
    for round_ in range(ROUNDS):
        created = http.post("/tasks", headers=as_("ops"), json={"title": f"Task {round_}", "planPath": "p.md"})
        assert created.status_code == 200, created.text
        task = created.json()["id"]
        assert http.get(f"/tasks/{task}", headers=as_("ops")).status_code == 200
        topic = f"adr-{round_}"
        opened = http.post("/commands/ratification/init", headers=as_("alice"),
                           json={"topic": topic, "roster": ["alice", "bob"], "artifact": f"# {round_}\n"})
        assert opened.status_code == 200, opened.text
        items = http.get("/check/bob").json()["items"]
        assert any(item["id"] == topic for item in items), (round_, items)
        sha = hashlib.sha256(f"# {round_}\n".encode()).hexdigest()
        voted = http.post("/commands/ratification/vote", headers=as_("bob"),
                          json={"topic": topic, "sha256": sha, "decision": "SIGN"})
        assert voted.status_code == 200, voted.text
        assert not any(item["id"] == topic for item in http.get("/check/bob").json()["items"])


def test_the_cli_reads_its_own_vote_without_a_position(served_http: tuple[Served, httpx.Client]) -> None:
    served, _ = served_http
    artifact = served.data_dir.parent / "adr.md"
    artifact.write_text("# ADR\n")
    sha = hashlib.sha256(b"# ADR\n").hexdigest()
    assert served.run("ratify", "init", "adr-c", "--roster", "alice,bob", "--artifact", str(artifact)).returncode == 0
    assert served.run("ratify", "vote", "adr-c", "--sha256", sha, "--sign", actor="bob").returncode == 0
    shown = served.run("ratify", "show", "adr-c", "--json", actor="bob")
    assert json.loads(shown.stdout)["voted"] == ["bob"], shown.stdout


def test_a_ledger_ending_in_a_marker_is_read_at_once(served_http: tuple[Served, httpx.Client]) -> None:
    """An artifact over 24 KiB puts its command's record in a marker after its event: the head
    is then no event, and a read must not wait for one."""
    _, http = served_http
    artifact = "# Large\n" + "x" * (30 * 1024) + "\n"
    opened = http.post("/commands/ratification/init", headers=as_("alice"),
                       json={"topic": "adr-large", "roster": ["alice", "bob"], "artifact": artifact})
    assert opened.status_code == 200, opened.text
    started = time.monotonic()
    shown = http.get("/ratifications/adr-large")
    assert shown.status_code == 200 and shown.json()["status"] == "open"
    assert time.monotonic() - started < 2  # a wait for an event that never comes would take 5 s
    assert http.get("/ratifications/adr-large", params={"after": opened.json()["position"]}).status_code == 200


def test_a_position_past_the_head_is_refused_naming_it(served_http: tuple[Served, httpx.Client]) -> None:
    _, http = served_http
    refused = http.get("/check/bob", params={"after": 10**9})
    assert refused.status_code == 400
    assert refused.json()["error"]["field"] == "after" and "head" in refused.json()["error"]["message"]


@pytest.mark.parametrize(("query", "fields", "field"), [
    ("check", {"agent": ""}, "agent"), ("check", {"agent": "NOT VALID"}, "agent"),
    ("check", {"agent": "bob", "after": -5}, "after"), ("ratification.list", {"mine": "Bob"}, "mine"),
])
def test_over_nats_a_query_is_refused_as_over_http_naming_the_field(served_http: tuple[Served, httpx.Client],
                                                                     query: str, fields: dict, field: str) -> None:
    served, _ = served_http
    with SyncClient(served.url, "bob", seed=served.enrol("bob")) as client:
        answer = client.query(query, **fields)
    assert not answer["ok"] and answer["error"]["code"] == "invalid" and answer["error"]["field"] == field, answer
