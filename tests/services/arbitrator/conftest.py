"""The original arbitrator server's route tests (buchananwill/ue-claude-scaffold,
``server/src/routes/{arbitrations,reviews,tasks-lifecycle}.test.ts``), case by case, against a
real ``athenaeum serve``.

Each case sends the original test's requests and expects its statuses and shapes. Where the
original test reaches a state by writing its database directly (``forceArbitrating``,
``seedReview``, a planted task), the case reaches it through the contract itself: a task is
driven along its FSM, reviews are posted, a contradiction is reported with the ids the reviews
were given. Review cycles count from 0 in both; the original's tests post to cycles 1 and 2 of
tasks that were never reviewed, which Athenaeum refuses (a review is of the current cycle), so
their cases post to the current cycle and the next.

The original's container scripts send ``X-Agent-Name`` with every request, and its tests send
no credential: the serve takes ``X-Agent-Name`` from 127.0.0.1 (``--trust-agent-header``), and
this client names its agent on every request. ``X-Project-Id`` is sent exactly where the
original test sends it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.services.conftest import Served

AGENT = "agent-1"  # the agent the original's tests register
DEFAULT = {"X-Project-Id": "default"}  # what the original's helpers send to the routes that require it


class Original:
    """The original's routes as its tests call them."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def post(self, path: str, body: Any = None, headers: dict[str, str] | None = DEFAULT) -> httpx.Response:
        sent = {"X-Agent-Name": AGENT} | (headers or {})
        return self.http.post(path, headers=sent, **({} if body is None else {"json": body}))

    def get(self, path: str, headers: dict[str, str] | None = DEFAULT) -> httpx.Response:
        return self.http.get(path, headers={"X-Agent-Name": AGENT} | (headers or {}))

    def create_task(self, title: str = "T", headers: dict[str, str] | None = None, **extra: Any) -> int:
        """``POST /tasks`` with a title alone and no ``X-Project-Id``, as the original's helper."""
        created = self.post("/tasks", {"title": title, **extra}, headers)
        assert created.status_code == 200, created.text
        return created.json()["id"]

    def task(self, task_id: int) -> dict[str, Any]:
        """``GET /tasks/{id}`` without ``X-Project-Id``, as the original's ``getTask``."""
        shown = self.get(f"/tasks/{task_id}", headers=None)
        assert shown.status_code == 200, shown.text
        return shown.json()

    def claim(self, task_id: int, headers: dict[str, str] | None = None) -> None:
        claimed = self.post(f"/tasks/{task_id}/claim", headers=headers)
        assert claimed.status_code == 200, claimed.text

    def transition(self, task_id: int, to: str, payload: dict[str, Any] | None = None,
                   headers: dict[str, str] | None = DEFAULT) -> httpx.Response:
        return self.post(f"/tasks/{task_id}/transition", {"to": to} | ({} if payload is None else {"payload": payload}),
                         headers)

    def moved(self, task_id: int, to: str, payload: dict[str, Any] | None = None,
              headers: dict[str, str] | None = DEFAULT) -> dict[str, Any]:
        answer = self.transition(task_id, to, payload, headers)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def review(self, task_id: int, role: str, verdict: str, findings: list[dict[str, Any]] | None = None,
               cycle: int = 0, headers: dict[str, str] | None = DEFAULT, **extra: Any) -> httpx.Response:
        body = {"cycle": cycle, "reviewerRole": role, "verdict": verdict, "rawMarkdown": "md",
                "findings": findings or []} | extra
        return self.post(f"/tasks/{task_id}/reviews", body, headers)

    def reviewed(self, task_id: int, role: str, verdict: str, blocking: int = 0, notes: int = 0,
                 cycle: int = 0) -> list[int]:
        """The original's ``seedReview``: one reviewer's run with that many findings; their ids."""
        findings = [finding("BLOCKING", i) for i in range(blocking)] + [finding("NOTE", blocking + i) for i in range(notes)]
        posted = self.review(task_id, role, verdict, findings, cycle)
        assert posted.status_code == 200, posted.text
        return posted.json()["findingIds"]

    def seeded(self, task_id: int, reviews: list[tuple[str, str, int, int]]) -> None:
        """Each reviewer's (role, verdict, BLOCKING findings, NOTE findings) in cycle 0."""
        for role, verdict, blocking, notes in reviews:
            self.reviewed(task_id, role, verdict, blocking, notes)

    def runs(self, task_id: int, cycle: int = 0) -> list[dict[str, Any]]:
        answer = self.get(f"/tasks/{task_id}/reviews/{cycle}")
        assert answer.status_code == 200, answer.text
        return answer.json()["runs"]

    def rulings(self, task_id: int) -> list[dict[str, Any]]:
        answer = self.get(f"/tasks/{task_id}/arbitrations")
        assert answer.status_code == 200, answer.text
        return answer.json()["runs"]

    def arbitrate(self, task_id: int, body: dict[str, Any], headers: dict[str, str] | None = DEFAULT) -> httpx.Response:
        return self.post(f"/tasks/{task_id}/arbitrations", body, headers)

    # The states the original's tests write into their database, reached through the contract.

    def built(self, task_id: int, headers: dict[str, str] | None = DEFAULT) -> None:
        self.moved(task_id, "engineering", headers=headers)
        self.moved(task_id, "built", {"buildStatus": "clean", "commitSha": "sha-1"}, headers)

    def engineering(self) -> int:
        """A task created, claimed and at work."""
        task_id = self.create_task()
        self.claim(task_id)
        self.moved(task_id, "engineering")
        return task_id

    def at_review(self, title: str = "drive-to-reviewing", **extra: Any) -> int:
        """The original's ``driveToReviewing``: created, claimed, engineered, built, reviewing."""
        task_id = self.create_task(title, **extra)
        self.claim(task_id)
        self.built(task_id)
        self.moved(task_id, "reviewing")
        return task_id

    def next_cycle(self, task_id: int, cycle: int) -> int:
        """Cycle ``cycle`` sent back for revising, and the task reviewing the next one."""
        self.reviewed(task_id, "safety", "request_changes", cycle=cycle)
        revised = self.moved(task_id, "revising")
        assert (revised["status"], revised["reviewCycleCount"]) == ("revising", cycle + 1)
        self.built(task_id)
        self.moved(task_id, "reviewing")
        return cycle + 1

    def engineering_after_findings(self, task_id: int) -> tuple[int, int]:
        """Two reviewers' findings in a revised cycle, and the engineer at work again: the ids
        a contradiction names."""
        [upheld] = self.reviewed(task_id, "safety", "request_changes", blocking=1)
        [retired] = self.reviewed(task_id, "decomposition", "approve", notes=1)
        self.moved(task_id, "revising")
        self.moved(task_id, "engineering")
        return upheld, retired

    def contradicted(self) -> tuple[int, tuple[int, int]]:
        """``forceArbitrating(id, "reviewer_contradiction")``: a contradiction the engineer reports."""
        task_id = self.at_review("arb-task")
        pair = self.engineering_after_findings(task_id)
        reported = self.moved(task_id, "arbitrating", {"trigger": "reviewer_contradiction",
                                                       "contradiction": {"findingIds": list(pair), "notes": "x"}})
        assert reported["arbitrationPendingTrigger"] == "reviewer_contradiction"
        return task_id, pair

    def exhausted(self, task_id: int | None = None, cycle: int = 0) -> int:
        """``forceArbitrating(id, "review_cycle_budget_exhausted")``: by default a task whose
        budget is no cycle at all, revised once (the lifecycle's case spends the full five)."""
        if task_id is None:
            task_id = self.at_review("arb-task", reviewCycleBudget=0)
        self.reviewed(task_id, "safety", "request_changes", cycle=cycle)
        assert self.moved(task_id, "revising")["status"] == "arbitrating"
        return task_id


def finding(severity: str, ordinal: int, **fields: Any) -> dict[str, Any]:
    return {"severity": severity, "ordinal": ordinal, "title": "t", "description": "d"} | fields


@pytest.fixture(scope="package")
def original(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Original]:
    """One serve for every case: each creates its own tasks, in projects of its own when it
    needs them."""
    served = Served(Path(tmp_path_factory.mktemp("arbitrator")) / "home", "--trust-agent-header", "127.0.0.1")
    try:
        url = json.loads((served.data_dir / "serve.json").read_text())["http"]
        with httpx.Client(base_url=url, timeout=30) as http:
            yield Original(http)
    finally:
        served.stop()
