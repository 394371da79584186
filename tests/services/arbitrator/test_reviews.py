"""``reviews.test.ts``, describe "reviews routes": ``POST /tasks/{id}/reviews`` and ``GET
/tasks/{id}/reviews/{cycle}``. Each case names the original's ``it(...)``; the original's
cycle 1 is the task's current cycle here (0), its cycle 2 the next."""

from __future__ import annotations

from typing import Any

import pytest

from tests.services.arbitrator.conftest import Original, finding

RUN_FIELDS = {"id", "reviewerRole", "verdict", "rawMarkdown", "postedAt", "findings"}
FINDING_FIELDS = {"id", "severity", "ordinal", "filePath", "line", "title", "description", "evidence", "fix"}


def body(role: str = "safety", verdict: str = "approve", findings: list[dict[str, Any]] | None = None,
         cycle: int = 0, raw: str = "") -> dict[str, Any]:
    return {"cycle": cycle, "reviewerRole": role, "verdict": verdict, "rawMarkdown": raw, "findings": findings or []}


def test_inserts_a_run_plus_n_findings_atomically(original: Original) -> None:
    """it("inserts a run plus N findings atomically")"""
    task = original.at_review("T")
    posted = original.post(f"/tasks/{task}/reviews", body("safety", "request_changes", raw="## review\n\nfinding 1",
                                                          findings=[
        finding("BLOCKING", 0, filePath="src/foo.ts", line=42, title="Null pointer",
                description="Foo can be null when bar is empty", evidence="bar.length === 0", fix="guard clause"),
        finding("NOTE", 1, title="Style: prefer const", description="use const where possible")]))
    assert posted.status_code == 200, posted.text
    assert isinstance(posted.json()["runId"], int) and len(posted.json()["findingIds"]) == 2
    [run] = original.runs(task)
    assert len(run["findings"]) == 2


@pytest.mark.parametrize(("role", "verdict", "notes"), [
    pytest.param("style", "approve", 0, id="accepts findings: [] with verdict approve"),
    pytest.param("browser", "out_of_scope", 0, id="accepts findings: [] with verdict out_of_scope"),
    pytest.param("style", "approve", 3, id="accepts approve with NOTE findings (count unconstrained)"),
])
def test_a_review_with_few_or_no_findings_is_taken(original: Original, role: str, verdict: str, notes: int) -> None:
    task = original.at_review("T")
    posted = original.post(f"/tasks/{task}/reviews", body(role, verdict, [finding("NOTE", i) for i in range(notes)]))
    assert posted.status_code == 200, posted.text
    assert isinstance(posted.json()["runId"], int) and len(posted.json()["findingIds"]) == notes


def test_returns_409_on_duplicate_task_cycle_and_reviewer_role(original: Original) -> None:
    """it("returns 409 on duplicate (taskId, cycle, reviewerRole)")"""
    task = original.at_review("T")
    assert original.post(f"/tasks/{task}/reviews", body("safety", "approve", raw="LGTM")).status_code == 200
    duplicate = original.post(f"/tasks/{task}/reviews", body("safety", "request_changes", raw="duplicate post"))
    assert duplicate.status_code == 409, duplicate.text


def test_allows_different_reviewer_role_on_same_task_and_cycle(original: Original) -> None:
    """it("allows different reviewerRole on same (taskId, cycle)")"""
    task = original.at_review("T")
    assert original.post(f"/tasks/{task}/reviews", body("safety", raw="a")).status_code == 200
    assert original.post(f"/tasks/{task}/reviews", body("correctness", raw="b")).status_code == 200


def test_allows_same_reviewer_role_on_a_different_cycle(original: Original) -> None:
    """it("allows same reviewerRole on a different cycle")"""
    task = original.at_review("T")
    cycle = original.next_cycle(task, 0)  # safety asked for changes in cycle 0
    assert original.post(f"/tasks/{task}/reviews", body("safety", "approve", cycle=cycle, raw="b")).status_code == 200


def test_rolls_back_the_run_insert_when_a_finding_insert_fails(original: Original) -> None:
    """it("rolls back the run insert when a finding insert fails"): an ordinal below 0."""
    task = original.at_review("T")
    posted = original.post(f"/tasks/{task}/reviews", body("safety", "request_changes", [
        finding("BLOCKING", 0, title="ok"), finding("BLOCKING", -1, title="bad")], raw="bad payload"))
    assert posted.status_code == 400, posted.text
    assert original.runs(task) == []


def test_on_unique_conflict_leaves_one_run_and_zero_new_findings(original: Original) -> None:
    """it("on unique conflict leaves DB with one run and zero new findings")"""
    task = original.at_review("T")
    first = original.post(f"/tasks/{task}/reviews", body("safety", "request_changes", [
        finding("BLOCKING", 0, title="first finding")], raw="first"))
    assert first.status_code == 200, first.text
    duplicate = original.post(f"/tasks/{task}/reviews", body("safety", "approve", [
        finding("NOTE", 0, title="second finding A"), finding("NOTE", 1, title="second finding B")], raw="second"))
    assert duplicate.status_code == 409, duplicate.text
    [run] = original.runs(task)
    assert (run["verdict"], run["rawMarkdown"], [f["title"] for f in run["findings"]]) == (
        "request_changes", "first", ["first finding"])


@pytest.mark.parametrize("sent", [
    pytest.param({"reviewerRole": "safety", "verdict": "approve", "rawMarkdown": "", "findings": []},
                 id="rejects missing cycle"),
    pytest.param(body("safety", "maybe"), id="rejects bad verdict"),
    pytest.param(body("bad role!", "approve"), id="rejects bad reviewerRole"),
    pytest.param(body("safety", "request_changes", [finding("WARNING", 0)]), id="rejects bad severity"),
    pytest.param(body("safety", "approve", raw="x" * 512_001),
                 id="rejects rawMarkdown exceeding the maximum length"),
    pytest.param(body("safety", "request_changes", [finding("BLOCKING", 0, description="d" * 32_769)], raw="r"),
                 id="rejects finding description exceeding the maximum length"),
    pytest.param(body("safety", "request_changes", [finding("BLOCKING", 0, evidence="e" * 32_769)], raw="r"),
                 id="rejects finding evidence exceeding the maximum length"),
    pytest.param(body("safety", "request_changes", [finding("BLOCKING", 0, fix="f" * 32_769)], raw="r"),
                 id="rejects finding fix exceeding the maximum length"),
])
def test_a_body_that_breaks_a_rule_is_400_and_writes_nothing(original: Original, sent: dict[str, Any]) -> None:
    """The original's body-validation and length-cap cases, each named by its ``it(...)``."""
    task = original.at_review("T")
    posted = original.post(f"/tasks/{task}/reviews", sent)
    assert posted.status_code == 400, posted.text
    assert original.runs(task) == []


def test_returns_404_on_unknown_task_id(original: Original) -> None:
    """it("returns 404 on unknown task id")"""
    assert original.post("/tasks/99999/reviews", body()).status_code == 404


def test_returns_runs_array_with_correct_shape(original: Original) -> None:
    """it("returns runs array with correct shape")"""
    task = original.at_review("T")
    for role, verdict, findings in [("safety", "request_changes", [finding("BLOCKING", 0, title="finding A")]),
                                    ("correctness", "approve", []),
                                    ("style", "approve", [finding("NOTE", 0, title="minor", description="d2")])]:
        posted = original.post(f"/tasks/{task}/reviews", body(role, verdict, findings, raw=f"## {role} review"))
        assert posted.status_code == 200, posted.text
    answer = original.get(f"/tasks/{task}/reviews/0")
    assert answer.status_code == 200 and answer.json()["cycle"] == 0
    runs = {run["reviewerRole"]: run for run in answer.json()["runs"]}
    assert set(runs) == {"safety", "correctness", "style"}
    assert all(RUN_FIELDS <= set(run) and all(FINDING_FIELDS <= set(f) for f in run["findings"])
               for run in runs.values())
    safety = runs["safety"]
    assert isinstance(safety["id"], int)
    assert (safety["verdict"], safety["rawMarkdown"]) == ("request_changes", "## safety review")
    assert [(f["title"], f["severity"]) for f in safety["findings"]] == [("finding A", "BLOCKING")]
    assert runs["correctness"]["findings"] == []


def test_returns_empty_runs_array_for_an_un_posted_cycle(original: Original) -> None:
    """it("returns empty runs array for an un-posted cycle")"""
    task = original.create_task("T")
    answer = original.get(f"/tasks/{task}/reviews/5")
    assert answer.status_code == 200 and answer.json() == {"cycle": 5, "runs": []}


def test_only_returns_runs_from_the_requested_cycle(original: Original) -> None:
    """it("only returns runs from the requested cycle"): safety approves cycle 0 with a BLOCKING
    finding (which alone sends it back), then asks for changes in cycle 1."""
    task = original.at_review("T")
    original.reviewed(task, "safety", "approve", blocking=1)
    original.moved(task, "revising")
    original.built(task)
    original.moved(task, "reviewing")
    original.reviewed(task, "safety", "request_changes", cycle=1)
    assert [run["verdict"] for run in original.runs(task, 0)] == ["approve"]
    assert [run["verdict"] for run in original.runs(task, 1)] == ["request_changes"]


@pytest.mark.parametrize("path", [
    pytest.param("/tasks/0/reviews/1", id="rejects invalid task id format"),
    pytest.param("/tasks/{task}/reviews/-1", id="rejects negative cycle"),
])
def test_a_path_that_names_no_cycle_is_400(original: Original, path: str) -> None:
    task = original.create_task("T")
    assert original.get(path.format(task=task)).status_code == 400


def test_post_rejects_missing_x_project_id_with_400(original: Original) -> None:
    """it("POST rejects missing X-Project-Id with 400")"""
    task = original.at_review("T")
    assert original.post(f"/tasks/{task}/reviews", body(), headers={}).status_code == 400


def test_get_rejects_missing_x_project_id_with_400(original: Original) -> None:
    """it("GET rejects missing X-Project-Id with 400")"""
    task = original.create_task("T")
    assert original.get(f"/tasks/{task}/reviews/1", headers={}).status_code == 400


def test_shared_guard_rejects_x_project_id_sent_twice_when_the_first_is_empty(original: Original) -> None:
    """it("shared guard rejects array-form X-Project-Id when first element is empty"): the
    original tests its guard function; here the header is sent twice over HTTP."""
    task = original.create_task("T", headers={"X-Project-Id": "proj-a"})
    twice = [("X-Agent-Name", "agent-1"), ("X-Project-Id", ""), ("X-Project-Id", "proj-a")]
    answer = original.http.get(f"/tasks/{task}/reviews/0", headers=twice)
    assert answer.status_code == 400 and "X-Project-Id header is required" in answer.text


def test_shared_guard_reads_the_first_x_project_id_sent_twice(original: Original) -> None:
    """it("shared guard accepts array-form X-Project-Id when first element is non-empty"): the
    first one is the project."""
    task = original.create_task("T", headers={"X-Project-Id": "proj-a"})
    assert original.get(f"/tasks/{task}/reviews/0", headers={"X-Project-Id": "proj-a"}).status_code == 200
    twice = [("X-Agent-Name", "agent-1"), ("X-Project-Id", "proj-a"), ("X-Project-Id", "proj-b")]
    assert original.http.get(f"/tasks/{task}/reviews/0", headers=twice).status_code == 200


def test_post_returns_404_when_task_belongs_to_a_different_project(original: Original) -> None:
    """it("POST returns 404 when task belongs to a different project")"""
    foreign = original.create_task("foreign task", headers={"X-Project-Id": "proj-a"})
    assert original.post(f"/tasks/{foreign}/reviews", body(raw="x")).status_code == 404
    assert original.get(f"/tasks/{foreign}/reviews/0", headers={"X-Project-Id": "proj-a"}).json()["runs"] == []


def test_get_returns_404_when_task_belongs_to_a_different_project(original: Original) -> None:
    """it("GET returns 404 when task belongs to a different project")"""
    proj_a = {"X-Project-Id": "proj-a"}
    foreign = original.create_task("foreign task", headers=proj_a)
    original.claim(foreign, headers=proj_a)
    original.built(foreign, headers=proj_a)
    original.moved(foreign, "reviewing", headers=proj_a)
    assert original.post(f"/tasks/{foreign}/reviews", body(raw="secret"), headers=proj_a).status_code == 200
    assert original.get(f"/tasks/{foreign}/reviews/0", headers=proj_a).status_code == 200
    assert original.get(f"/tasks/{foreign}/reviews/0").status_code == 404
