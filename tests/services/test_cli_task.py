"""``athenaeum task ...`` driven through ``athenaeum serve``, as the README's task section runs it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.services.conftest import Served


def task(served: Served, *args: str, actor: str = "engineer", accepted: bool = True) -> dict:
    done = served.run("task", *args, "--project", "web", "--json", actor=actor)
    assert (done.returncode == 0) is accepted, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_a_task_from_its_title_to_a_ruled_contradiction(served: Served, tmp_path: Path) -> None:
    created = task(served, "create", "--title", "Add login", actor="ops")
    number = str(created["id"])
    task(served, "claim", number)
    task(served, "transition", number, "--to", "engineering")
    task(served, "transition", number, "--to", "built", "--payload", '{"buildStatus": "clean", "commitSha": "abc123"}')
    task(served, "transition", number, "--to", "reviewing")
    for role, title in [("security", "Hash the tokens"), ("perf", "Keep tokens in plain text")]:
        finding = json.dumps({"severity": "BLOCKING", "title": title})
        task(served, "review", number, "--cycle", "0", "--role", role, "--verdict", "request_changes",
             "--finding", finding, actor=role)
    refused = task(served, "transition", number, "--to", "completed", accepted=False)
    assert refused["error"]["code"] == "illegal_transition" and "call for revising" in refused["error"]["message"]
    task(served, "transition", number, "--to", "revising")
    task(served, "transition", number, "--to", "engineering")
    nested = '{"trigger": "reviewer_contradiction", "contradiction": {"findingIds": [1, 2], "notes": "both"}}'
    reported = task(served, "transition", number, "--to", "arbitrating", "--payload", nested)
    assert reported["ok"], reported
    ruling = tmp_path / "ruling.md"
    ruling.write_text("Security first.\n")
    ruled = task(served, "rule", number, "--trigger", "reviewer_contradiction", "--ruling", "rule",
                 "--markdown-file", str(ruling), "--upheld", "1", "--retired", "2", "--rationale", "tokens leak",
                 actor="arbitrator")
    shown = task(served, "show", number, "--arbitrations", "--after", str(ruled["position"]))
    assert [(run["ruling"], run["contradictionResolution"]["upheldFindingId"]) for run in shown["runs"]] == [("rule", 1)]
    reviews = task(served, "show", number, "--reviews", "0")
    assert sorted(run["reviewerRole"] for run in reviews["runs"]) == ["perf", "security"]
    assert task(served, "show", number)["arbitrationAddendumPath"] == f".scratch/arbitrations/{number}/contradiction-ruling.md"


def test_a_review_names_its_cycle(served: Served) -> None:
    done = served.run("task", "review", "1", "--role", "security", "--verdict", "approve", "--project", "web")
    assert done.returncode != 0 and "--cycle" in done.stderr
