"""Reading as people read: a list verb for each family, filtered and paged; ``check`` the soonest
due first, each item with the command that acts on it; records one field to a line."""

from __future__ import annotations

import hashlib
import json
import shlex

from tests.services.conftest import Served

TEXT = "# ADR\n"
SHA = hashlib.sha256(TEXT.encode()).hexdigest()


def listed(served: Served, *args: str, actor: str = "alice") -> dict:
    done = served.run(*args, "--json", actor=actor)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def test_ratifications_are_listed_filtered_and_paged(served: Served) -> None:
    for n, roster in enumerate(("bob", "bob,carol", "carol", "bob", "carol")):
        hours = f"{10 + n}h"
        done = served.run("ratify", "init", f"adr-{n}", "--roster", roster, "--text", TEXT, "--expires-in", hours)
        assert done.returncode == 0, done.stderr
    assert served.run("ratify", "vote", "adr-0", "--sha256", SHA, "--sign", actor="bob").returncode == 0
    every = listed(served, "ratify", "list")
    assert [row["topic"] for row in every["items"]] == [f"adr-{n}" for n in range(5)] and every["next"] is None
    assert [row["topic"] for row in listed(served, "ratify", "list", "--status", "ratified")["items"]] == ["adr-0"]
    awaiting = listed(served, "ratify", "list", "--awaiting", "bob")["items"]
    assert [row["topic"] for row in awaiting] == ["adr-1", "adr-3"]
    assert [row["topic"] for row in listed(served, "ratify", "list", "--mine", actor="carol")["items"]] == [
        "adr-1", "adr-2", "adr-4"]
    first = listed(served, "ratify", "list", "--limit", "2")
    assert [row["topic"] for row in first["items"]] == ["adr-0", "adr-1"] and first["next"] == "adr-1"
    second = listed(served, "ratify", "list", "--limit", "2", "--cursor", first["next"])
    assert [row["topic"] for row in second["items"]] == ["adr-2", "adr-3"]
    assert second["items"][0]["voted"] == 0 and second["items"][0]["roster"] == 1  # counts, in a row
    table = served.run("ratify", "list", "--status", "open")
    assert table.returncode == 0 and table.stdout.splitlines()[0].split("\t")[:2] == ["adr-1", "open"]


def test_the_fleet_is_listed(served: Served) -> None:
    served.enrol("alice"), served.enrol("bob")
    names = {row["name"]: row for row in listed(served, "agent", "list")["items"]}
    assert {"ada", "alice", "bob"} <= names.keys() and names["ada"]["human"] is True
    humans = listed(served, "agent", "list", "--status", "human")["items"]
    assert [row["name"] for row in humans] == ["ada"]


def test_check_gives_the_soonest_first_and_the_command_that_acts(served: Served) -> None:
    for topic, hours in (("later", "30h"), ("sooner", "2h"), ("soonest", "1h")):
        assert served.run("ratify", "init", topic, "--roster", "bob", "--text", TEXT, "--expires-in", hours).returncode == 0
    checked = listed(served, "check", "--limit", "2", actor="bob")
    assert [item["id"] for item in checked["items"]] == ["soonest", "sooner"] and checked["total"] == 3
    assert checked["items"][0]["sha256"] == SHA
    plain = served.run("check", "--limit", "2", actor="bob")
    rows = [line.split("\t") for line in plain.stdout.splitlines()]
    assert [row[1] for row in rows] == ["soonest", "sooner"]
    assert "3 waiting on bob" in plain.stderr and "--limit" in plain.stderr
    command = shlex.split(rows[0][-1])
    assert command[:3] == ["athenaeum", "ratify", "vote"] and SHA in command
    assert command[-2:] == ["--as", "bob"]
    voted = served.run(*command[1:-2], actor="bob")  # as printed (the test's serve adds its data dir and --as)
    assert voted.returncode == 0, voted.stderr
    assert [item["id"] for item in listed(served, "check", actor="bob")["items"]] == ["sooner", "later"]


def test_a_record_is_shown_one_field_to_a_line_and_lists_one_item_to_a_line(served: Served) -> None:
    assert served.run("ratify", "init", "adr-9", "--roster", "bob,carol", "--text", TEXT).returncode == 0
    shown = served.run("ratify", "show", "adr-9")
    lines = shown.stdout.splitlines()
    assert "roster:" in lines and "  - bob" in lines and "  - carol" in lines
    assert any(line.startswith("topic") and line.endswith("adr-9") for line in lines)
