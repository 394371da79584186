"""The HTTP gateway, driven with a real HTTP client against ``athenaeum serve``."""

from __future__ import annotations

import hashlib
import json
import queue
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.services.conftest import served_over_http

ARTIFACT = "# ADR 11\nEvery agent logs to the ledger.\n"
SHA = hashlib.sha256(ARTIFACT.encode()).hexdigest()


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    """The gateway of a serve that takes ``X-Agent-Name`` from 127.0.0.1, as behind a local
    authenticating proxy: the original arbitrator's scripts send no token."""
    with served_over_http(tmp_path / "home") as (_, client):
        yield client


def as_(agent: str, project: str | None = None) -> dict[str, str]:
    return {"X-Agent-Name": agent} | ({"X-Project-Id": project} if project else {})


def test_every_family_takes_commands_over_http_with_the_nats_reply(http: httpx.Client) -> None:
    opened = http.post("/commands/ratification/init", headers=as_("alice"),
                       json={"topic": "adr-11", "roster": ["alice"], "artifact": ARTIFACT})
    assert opened.status_code == 200 and opened.json()["ok"] and opened.json()["events"][0]["type"] == "ArtifactFrozen"
    again = http.post("/commands/ratification/init", headers=as_("alice"),
                      json={"topic": "adr-11", "roster": ["alice"], "artifact": ARTIFACT})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_exists"
    wrong = http.post("/commands/ratification/vote", headers=as_("mallory"),
                      json={"topic": "adr-11", "sha256": SHA, "decision": "SIGN"})
    assert wrong.status_code == 422 and wrong.json()["error"]["code"] == "not_rostered"
    missing = http.post("/commands/ratification/vote", headers=as_("alice"),
                        json={"topic": "adr-404", "sha256": SHA, "decision": "SIGN"})
    assert missing.status_code == 404
    proposal = http.post("/commands/quorum/propose", headers=as_("alice"),
                         json={"text": "Adopt", "electorate": ["bob"], "threshold": 1, "proposal_id": "0000BEEF"})
    acked = http.post("/commands/quorum/ack", headers=as_("bob"), json={"proposal_id": "0000BEEF"})
    assert proposal.status_code == acked.status_code == 200
    shown = http.get("/proposals/0000beef", params={"after": acked.json()["position"]})  # hex, any case
    assert shown.json()["status"] == "accepted"
    thread = http.post("/commands/thread/open", headers=as_("alice"), json={
        "slug": "t-http", "context": "c", "target": {"N": 1, "C": 1, "R": 1}, "body": "b"})
    assert http.get("/threads/t-http", params={"after": thread.json()["position"]}).json()["status"] == "open"
    page = http.post("/commands/page/init", headers=as_("alice"), json={"page": "wiki/h.md", "content": "# H\n"})
    assert http.get("/pages/wiki/h.md", params={"after": page.json()["position"]}).json()["rev"] == 1
    assert http.get("/pages/wiki/h.md", params={"render": "consensus"}).text.startswith("rev: v1\n")
    rendered = http.get("/ratifications/adr-11", params={"render": "manifest"})
    assert rendered.headers["content-type"].startswith("text/markdown") and "topic: adr-11" in rendered.text
    bogus = http.get("/ratifications/adr-11", params={"render": "bogus"})
    assert bogus.status_code == 400 and bogus.json()["error"]["field"] == "render"
    assert http.get("/check/alice").json()["items"] == [
        {"kind": "ratification", "id": "adr-11", "action": "vote", "deadline": opened.json()["events"][0]["expires_at"], "sha256": SHA}]


def test_bad_json_and_oversized_bodies_are_a_clear_400_and_nothing_is_written(http: httpx.Client) -> None:
    garbled = http.post("/commands/ratification/init", headers=as_("alice"), content=b"{not json")
    assert garbled.status_code == 400 and garbled.json()["error"]["code"] == "invalid"
    unknown = http.post("/commands/ratification/init", headers=as_("alice"),
                        json={"topic": "adr-12", "roster": ["alice"], "artifact": "x", "colour": "red"})
    assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "colour"
    huge = http.post("/commands/ratification/init", headers=as_("alice"),
                     json={"topic": "adr-12", "roster": ["alice"], "artifact": "x" * (8 * 1024 * 1024)})
    assert huge.status_code == 400 and "over" in huge.json()["error"]["message"]
    # Within the limits, however escaped: 512,000 emoji are 6 MB of \u pairs.
    escaped = http.post("/tasks", headers=as_("ops", "proj-escaped"),
                        json={"title": "t", "planPath": "p.md"})
    task = escaped.json()["id"]
    for target in ("claimed", "engineering"):
        http.post(f"/tasks/{task}/transition", headers=as_("engineer", "proj-escaped"), json={"to": target})
    http.post(f"/tasks/{task}/transition", headers=as_("engineer", "proj-escaped"),
              json={"to": "built", "payload": {"buildStatus": "clean", "commitSha": "abc123"}})
    http.post(f"/tasks/{task}/transition", headers=as_("engineer", "proj-escaped"), json={"to": "reviewing"})
    review = http.post(f"/tasks/{task}/reviews", headers=as_("style", "proj-escaped"),
                       json={"cycle": 0, "reviewerRole": "style", "verdict": "approve", "rawMarkdown": "\U0001F600" * 512_000})
    assert review.status_code == 200, review.text
    over_limit = http.post("/commands/ratification/init", headers=as_("alice"),
                           json={"topic": "adr-12", "roster": ["alice"], "artifact": "x" * (513 * 1024)})
    assert over_limit.status_code == 400 and over_limit.json()["error"]["field"] == "artifact"
    assert http.get("/ratifications/adr-12").status_code == 404


def test_a_path_that_names_no_route_says_so(http: httpx.Client) -> None:
    task = http.get("/tasks/abc")
    assert task.status_code == 404 and task.json()["error"] == {
        "code": "not_found", "message": "no route for GET /tasks/abc; the routes are in /openapi.json (task ids and review cycles are integers)"}
    assert "no route for POST /nowhere" in http.post("/nowhere").json()["error"]["message"]


def test_a_key_reused_for_a_different_command_is_refused_and_its_retry_answered(http: httpx.Client) -> None:
    keyed = as_("alice") | {"Idempotency-Key": "propose-once"}
    body = {"text": "Adopt", "electorate": ["bob"], "threshold": 1, "proposal_id": "0000F00D"}
    first = http.post("/commands/quorum/propose", headers=keyed, json=body)
    assert http.post("/commands/quorum/propose", headers=keyed, json=body).json() == first.json()
    other = http.post("/commands/quorum/propose", headers=keyed, json=body | {"text": "Adopt something else"})
    assert other.status_code == 422 and other.json()["error"] == {
        "code": "idempotency_key_reused", "message": other.json()["error"]["message"], "field": "command_id"}
    shown = http.get("/proposals/0000F00D", params={"after": first.json()["position"]}).json()
    assert shown["text"] == "Adopt"


def test_idempotency_keys_of_different_commands_never_collide(http: httpx.Client) -> None:
    # Page paths and keys both may hold '/': "wiki/a.md" + "k1" and "wiki" + "a.md/k1".
    for page in ("wiki/a.md", "wiki"):
        assert http.post("/commands/page/init", headers=as_("alice"), json={"page": page, "content": "# A\n"}).is_success
    first = http.post("/commands/page/read", headers=as_("alice") | {"Idempotency-Key": "k1"},
                      json={"page": "wiki/a.md", "session_id": "s1"})
    second = http.post("/commands/page/read", headers=as_("alice") | {"Idempotency-Key": "a.md/k1"},
                       json={"page": "wiki", "session_id": "s1"})
    assert first.status_code == second.status_code == 200
    assert second.json()["position"] > first.json()["position"]
    assert second.json()["events"][0]["originator_id"] == "page:wiki"


def test_a_body_is_decoded_strictly_and_every_error_names_its_field(http: httpx.Client) -> None:
    # A web framework's lax conversion would take "1" for 1; the NATS services would not.
    quoted = http.post("/commands/quorum/propose", headers=as_("alice"),
                       json={"text": "Adopt", "electorate": ["bob"], "threshold": "1", "proposal_id": "0000CAFE"})
    assert quoted.status_code == 400 and quoted.json()["error"]["field"] == "threshold"
    assert http.get("/proposals/0000CAFE").status_code == 404
    budget = http.post("/tasks", headers=as_("ops", "proj-2"),
                       json={"title": "t", "planPath": "p.md", "reviewCycleBudget": "3"})
    assert budget.status_code == 400 and budget.json()["error"]["field"] == "reviewCycleBudget"
    assert http.get("/tasks/1", headers=as_("ops", "proj-2")).status_code == 404
    missing = http.post("/tasks", headers=as_("ops", "proj-2"), json={"planPath": "p.md"})
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "title"
    not_an_object = http.post("/commands/ratification/init", headers=as_("alice"), json=["adr-13"])
    assert not_an_object.status_code == 400 and not_an_object.json()["error"]["field"] == "body"
    bad_after = http.get("/check/alice", params={"after": "soon"})
    assert bad_after.status_code == 400 and bad_after.json()["error"]["field"] == "after"
    assert http.get("/check/Nobody").json()["error"]["field"] == "agent"
    assert http.get("/pages/wiki/x.md", params={"render": "bogus"}).json()["error"]["field"] == "render"
    not_a_slug = http.post("/commands/quorum/ack", headers=as_("Not A Slug"), json={"proposal_id": "0000CAFE"})
    assert not_a_slug.status_code == 400 and not_a_slug.json()["error"]["field"] == "X-Agent-Name"
    unicode_key = http.post("/commands/ratification/init", headers=as_("alice") | {"Idempotency-Key": "ключ".encode()},
                            json={"topic": "adr-14", "roster": ["alice"], "artifact": "x"})
    assert unicode_key.json()["events"][0]["command_id"] == "ключ"


def test_the_openapi_document_lists_every_route(http: httpx.Client) -> None:
    from athenaeum.services.commands.routes import EXPOSED, ROUTES

    paths = http.get("/openapi.json").json()["paths"]
    assert {f"/commands/{r.group}/{r.verb}" for r in EXPOSED} <= set(paths)
    assert not {f"/commands/{r.group}/{r.verb}" for r in ROUTES if not r.exposed} & set(paths)
    assert {"/tasks", "/tasks/{task_id}/arbitrations", "/tasks/{task_id}/reviews/{cycle}", "/a2a",
            "/check/{agent}", "/pages/{path}"} <= set(paths)
    vote = paths["/commands/ratification/vote"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert vote["$ref"].endswith("CastVote")


def test_the_openapi_document_gives_each_answers_body(http: httpx.Client) -> None:
    document = http.get("/openapi.json").json()

    def body(path: str, method: str, status: str) -> str:
        return document["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]["$ref"]

    assert body("/commands/ratification/vote", "post", "200").endswith("/AcceptedReply")
    for status in ("400", "404", "409", "422", "503"):
        assert body("/commands/ratification/vote", "post", status).endswith("/RejectedReply")
    assert body("/tasks", "post", "200").endswith("/TaskCreatedReply")
    assert body("/tasks/{task_id}/arbitrations", "post", "200").endswith("/RulingAcceptedReply")
    assert body("/check/{agent}", "get", "404").endswith("/RejectedReply")
    claim = document["paths"]["/tasks/{task_id}/claim"]["post"]["parameters"]
    assert {"X-Agent-Name", "X-Project-Id", "Idempotency-Key"} <= {p["name"] for p in claim}
    error = document["components"]["schemas"]["ErrorBody"]
    assert set(error["properties"]) == {"code", "message", "field", "command_id"}


def test_an_arbitrators_whole_session(http: httpx.Client) -> None:
    project = "proj-1"
    task = http.post("/tasks", headers=as_("ops", project), json={"title": "Login", "planPath": "plans/login.md",
                                                                  "reviewCycleBudget": 0}).json()["id"]
    assert http.get(f"/tasks/{task}", headers=as_("ops", "other-project")).status_code == 404

    def to(target: str, payload: dict | None = None) -> httpx.Response:
        return http.post(f"/tasks/{task}/transition", headers=as_("engineer", project),
                         json={"to": target, "payload": payload or {}})

    for target, payload in [("claimed", None), ("engineering", None),
                            ("built", {"buildStatus": "clean", "commitSha": "abc123"}), ("reviewing", None)]:
        assert to(target, payload).json()["status"] == target
    assert to("completed").status_code == 409  # no reviews: incomplete
    unscoped = http.post(f"/tasks/{task}/reviews", headers=as_("security"), json={
        "cycle": 0, "reviewerRole": "security", "verdict": "approve"})
    assert unscoped.status_code == 400 and unscoped.json()["error"]["field"] == "X-Project-Id"
    posted = http.post(f"/tasks/{task}/reviews", headers=as_("security", project), json={
        "cycle": 0, "reviewerRole": "security", "verdict": "request_changes", "rawMarkdown": "# Security",
        "findings": [{"severity": "BLOCKING", "title": "Tokens in logs", "filePath": "auth.py", "line": 12}]})
    assert posted.json() == {"runId": posted.json()["runId"], "findingIds": [1], "position": posted.json()["position"]}
    read = http.get(f"/tasks/{task}/reviews/0", params={"after": posted.json()["position"]}, headers=as_("a", project))
    assert [run["id"] for run in read.json()["runs"]] == [posted.json()["runId"]]
    concluded = to("revising")  # budget 0: the first revise needs the arbitrator
    assert concluded.json()["status"] == "arbitrating"

    # The arbitrator finds its work, reads every cycle, then rules.
    work = http.get("/tasks", params={"status": "arbitrating", "after": concluded.json()["position"]},
                    headers=as_("arbitrator", project)).json()["tasks"]
    assert [(t["id"], t["arbitrationPendingTrigger"]) for t in work] == [(task, "review_cycle_budget_exhausted")]
    assert http.get("/tasks", params={"status": "arbitrating"}, headers=as_("arbitrator", "other")).json() == {"tasks": []}
    bad = http.get("/tasks", params={"status": "stuck"}, headers=as_("arbitrator", project))
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "status"
    typo = http.get("/tasks", params={"stauts": "arbitrating"}, headers=as_("arbitrator", project))
    assert typo.status_code == 400 and typo.json()["error"]["field"] == "stauts"
    twice = http.get("/tasks?status=pending&status=failed", headers=as_("arbitrator", project))
    assert twice.status_code == 400 and twice.json()["error"]["field"] == "status"
    task_view = http.get(f"/tasks/{task}", headers=as_("arbitrator", project)).json()
    assert task_view["arbitrationPendingTrigger"] == "review_cycle_budget_exhausted"
    cycle = http.get(f"/tasks/{task}/reviews/0", headers=as_("arbitrator", project)).json()
    assert cycle["cycle"] == 0 and cycle["runs"][0]["findings"][0]["filePath"] == "auth.py"
    assert http.get(f"/tasks/{task}/reviews/5", headers=as_("arbitrator", project)).json() == {"cycle": 5, "runs": []}
    wrong = http.post(f"/tasks/{task}/arbitrations", headers=as_("arbitrator", project), json={
        "trigger": "reviewer_contradiction", "ruling": "approve", "rulingMarkdown": "x"})
    assert wrong.status_code == 409 and wrong.json()["error"]["code"] == "trigger_mismatch"
    rule = {"trigger": "review_cycle_budget_exhausted", "ruling": "rule", "rulingMarkdown": "x",
            "contradictionResolution": {"upheldFindingId": 1, "retiredFindingId": 2, "rationale": "r"}}
    assert http.post(f"/tasks/{task}/arbitrations", headers=as_("arbitrator", project), json=rule).status_code == 400
    ruling = {"trigger": "review_cycle_budget_exhausted", "ruling": "approve", "rulingMarkdown": "# Converged\n"}
    first = http.post(f"/tasks/{task}/arbitrations", headers=as_("arbitrator", project), json=ruling)
    assert first.status_code == 200 and first.json()["newStatus"] == "completed"
    second = http.post(f"/tasks/{task}/arbitrations", headers=as_("arbitrator", project), json=ruling)
    assert second.status_code == 409
    runs = http.get(f"/tasks/{task}/arbitrations", params={"after": first.json()["position"]},
                    headers=as_("arbitrator", project)).json()["runs"]
    assert [(run["ruling"], run["rulingMarkdown"]) for run in runs] == [("approve", "# Converged\n")]
    assert http.get(f"/tasks/{task}", headers=as_("arbitrator", project)).json()["status"] == "completed"
    reset = http.post(f"/tasks/{task}/reset", headers=as_("ops", project))
    assert reset.json()["status"] == "pending" and reset.json()["epoch"] == 1
    shown = http.get(f"/tasks/{task}", params={"after": reset.json()["position"]}, headers=as_("ops", project))
    assert shown.json()["epoch"] == 1
    anonymous = http.post(f"/tasks/{task}/claim", headers={"X-Project-Id": project})
    assert anonymous.status_code == 400 and anonymous.json()["error"]["field"] == "X-Agent-Name"


def test_an_arbitrator_that_exits_after_a_409_fails_the_task_and_a_reset_drops_its_addendum(http: httpx.Client) -> None:
    project = "proj-409"
    task = http.post("/tasks", headers=as_("ops", project), json={"title": "t", "planPath": "p.md"}).json()["id"]

    def post(path: str, agent: str, body: dict) -> httpx.Response:
        return http.post(f"/tasks/{task}/{path}", headers=as_(agent, project), json=body)

    def contradicted(findings: list[int]) -> httpx.Response:
        """Claimed, built, two reviewers' findings, revised, and the pair reported as contradicting."""
        for target, payload in [("claimed", {}), ("engineering", {}),
                                ("built", {"buildStatus": "clean", "commitSha": "abc123"}), ("reviewing", {})]:
            post("transition", "engineer", {"to": target, "payload": payload})
        for role in ("security", "style"):
            post("reviews", role, {"cycle": 0, "reviewerRole": role, "verdict": "request_changes", "rawMarkdown": "r",
                                   "findings": [{"severity": "BLOCKING", "title": f"{role} says"}]})
        post("transition", "engineer", {"to": "revising"})
        post("transition", "engineer", {"to": "engineering"})
        return post("transition", "engineer", {"to": "arbitrating", "payload": {"findingIds": findings}})

    assert contradicted([1, 2]).status_code == 200
    rule = {"trigger": "reviewer_contradiction", "ruling": "rule", "rulingMarkdown": "x",
            "contradictionResolution": {"upheldFindingId": 1, "retiredFindingId": 2, "rationale": "r"}}
    assert post("arbitrations", "arbitrator", rule).json()["newStatus"] == "revising"
    addendum = f"/tasks/{task}/arbitrations/reviewer_contradiction/addendum"
    assert "must NOT be addressed" in http.get(addendum, headers=as_("engineer", project)).text

    # A second epoch: the arbitrator gets a 409 and exits 0, as its protocol says; the task fails.
    post("transition", "engineer", {"to": "failed", "payload": {"failureReason": "engineer_build_failure"}})
    post("reset", "ops", {})
    assert http.get(addendum, headers=as_("engineer", project)).status_code == 404
    assert contradicted([3, 4]).status_code == 200
    wrong = post("arbitrations", "arbitrator", {"trigger": "review_cycle_budget_exhausted", "ruling": "approve",
                                                "rulingMarkdown": "x"})
    assert wrong.status_code == 409
    ended = post("role-session-ended", "arbitrator", {"role": "arbitrator", "exitCode": 0})
    assert ended.json()["status"] == "failed"
    shown = http.get(f"/tasks/{task}", params={"after": ended.json()["position"]}, headers=as_("ops", project)).json()
    assert shown["failureReason"] == "role_session_no_op"


def test_an_answer_too_large_for_one_message_is_a_clear_error_at_once(http: httpx.Client) -> None:
    project = "proj-big"
    task = http.post("/tasks", headers=as_("ops", project), json={"title": "t", "planPath": "p.md"}).json()["id"]
    for target, payload in [("claimed", {}), ("engineering", {}),
                            ("built", {"buildStatus": "clean", "commitSha": "abc123"}), ("reviewing", {})]:
        http.post(f"/tasks/{task}/transition", headers=as_("engineer", project), json={"to": target, "payload": payload})
    big = "\U0001F600" * 500_000  # 2 MB of UTF-8 each, within the 512,000-character limit
    for role in ("r1", "r2", "r3", "r4", "r5"):
        body = json.dumps({"cycle": 0, "reviewerRole": role, "verdict": "approve", "rawMarkdown": big}, ensure_ascii=False)
        posted = http.post(f"/tasks/{task}/reviews", headers=as_(role, project) | {"Content-Type": "application/json"},
                           content=body.encode())
        assert posted.status_code == 200, posted.text
    answer = http.get(f"/tasks/{task}/reviews/0", headers=as_("arbitrator", project))
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "too_large"
    assert "more than one NATS message carries" in answer.json()["error"]["message"]


def test_a_retried_task_command_gets_its_first_answer(http: httpx.Client) -> None:
    project = "proj-retry"
    task = http.post("/tasks", headers=as_("ops", project), json={"title": "t", "planPath": "p.md"}).json()["id"]
    keyed = as_("engineer", project) | {"Idempotency-Key": "claim-once"}
    junk = http.post(f"/tasks/{task}/claim", headers=as_("engineer", project), json={"junk": 1})
    assert junk.status_code == 400 and junk.json()["error"]["field"] == "junk"
    first = http.post(f"/tasks/{task}/claim", headers=keyed, json={}).json()
    moved = http.post(f"/tasks/{task}/transition", headers=as_("engineer", project), json={"to": "engineering"})
    assert moved.json()["status"] == "engineering"
    assert http.post(f"/tasks/{task}/claim", headers=keyed).json() == first
    assert first["status"] == "claimed"


def test_a_ratification_through_a2a_streams_from_submitted_to_completed(http: httpx.Client) -> None:
    card = http.get("/.well-known/agent.json").json()
    assert card["capabilities"]["streaming"] and card["url"].endswith("/a2a")
    states: queue.Queue[str] = queue.Queue()

    def subscribe() -> None:
        call = {"jsonrpc": "2.0", "id": 7, "method": "tasks/sendSubscribe", "params": {"task": {
            "id": "a2a-task-1", "metadata": {"athenaeum_mode": "ratify", "topic": "adr-a2a", "roster": ["alice", "bob"],
                                             "artifact": ARTIFACT}}}}
        with http.stream("POST", "/a2a", json=call, headers=as_("alice")) as events:
            for line in events.iter_lines():
                if line.startswith("data:"):
                    result = json.loads(line.removeprefix("data:"))["result"]
                    states.put(result["status"]["state"])
                    if result["final"]:
                        return

    listener = threading.Thread(target=subscribe, daemon=True)
    listener.start()
    assert states.get(timeout=20) == "submitted"
    # Each vote waits for the state the last one reached: the projector writes a view once for
    # the events it reads together, so two votes in quick succession may show only the last.
    for agent, reached in (("alice", "working"), ("bob", "completed")):
        vote = http.post("/commands/ratification/vote", headers=as_(agent),
                         json={"topic": "adr-a2a", "sha256": SHA, "decision": "SIGN"})
        assert vote.status_code == 200
        assert states.get(timeout=20) == reached
    listener.join(20)
    assert not listener.is_alive() and states.empty()
    got = http.post("/a2a", json={"jsonrpc": "2.0", "id": 8, "method": "tasks/get", "params": {"id": "a2a-task-1"}})
    assert got.json()["result"]["status"]["state"] == "completed"
    again = http.post("/a2a", headers=as_("alice"), json={"jsonrpc": "2.0", "id": 9, "method": "tasks/send", "params": {
        "task": {"id": "a2a-task-1", "metadata": {"athenaeum_mode": "ratify", "topic": "adr-a2a",
                                                  "roster": ["alice", "bob"], "artifact": ARTIFACT}}}})
    assert again.json()["result"]["id"] == "a2a-task-1"  # idempotent by task id
    taken = http.post("/a2a", headers=as_("bob"), json={"jsonrpc": "2.0", "id": 10, "method": "tasks/send", "params": {
        "task": {"id": "a2a-task-1", "metadata": {"athenaeum_mode": "ratify", "topic": "adr-bobs",
                                                  "roster": ["bob"], "artifact": ARTIFACT}}}})
    assert taken.json()["error"]["code"] == -32602  # a task id names one ratification
    assert http.get("/ratifications/adr-bobs").status_code == 404
    reworded = http.post("/a2a", headers=as_("bob"), json={"jsonrpc": "2.0", "id": 11, "method": "tasks/send", "params": {
        "task": {"id": "a2a-task-1", "metadata": {"athenaeum_mode": "ratify", "topic": "adr-a2a",
                                                  "roster": ["bob", "carol"], "artifact": "# Other\n"}}}})
    assert reworded.json()["error"]["code"] == -32602 and "other metadata" in reworded.json()["error"]["message"]
    assert http.get("/ratifications/adr-a2a").json()["roster"] == ["alice", "bob"]
    resent = http.post("/a2a", headers=as_("bob"), json={"jsonrpc": "2.0", "id": 12, "method": "tasks/send", "params": {
        "task": {"id": "a2a-task-1", "metadata": {"athenaeum_mode": "ratify", "topic": "adr-a2a",
                                                  "roster": ["alice", "bob"], "artifact": ARTIFACT}}}})
    assert resent.json()["result"]["status"]["state"] == "completed"  # as first sent, by anyone: that task


def a2a_send(task_id: str, topic: str, roster: list[str]) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {"task": {"id": task_id, "metadata": {
        "athenaeum_mode": "ratify", "topic": topic, "roster": roster, "artifact": ARTIFACT}}}}


def test_racing_sends_of_one_a2a_task_id_open_one_ratification(http: httpx.Client) -> None:
    topics = [f"race-top-{n}" for n in range(6)]
    with ThreadPoolExecutor(len(topics)) as pool:
        answers = list(pool.map(lambda t: http.post("/a2a", headers=as_("alice"), json=a2a_send("race-1", t, ["alice"])).json(),
                                topics))
    won = [answer["result"]["contextId"] for answer in answers if "result" in answer]
    assert len(won) == 1 and all(answer["error"]["code"] == -32602 for answer in answers if "error" in answer)
    assert [t for t in topics if http.get(f"/ratifications/{t}").status_code == 200] == won


def test_a2a_metadata_is_the_init_command_every_field_of_it_and_no_other(http: httpx.Client) -> None:
    call = a2a_send("t-window", "adr-window", ["alice"])
    call["params"]["task"]["metadata"]["expires_at"] = "2099-01-01T00:00:00Z"
    opened = http.post("/a2a", headers=as_("alice"), json=call).json()["result"]
    assert http.get(f"/ratifications/{opened['contextId']}").json()["expires_at"].startswith("2099-01-01")
    call = a2a_send("t-junk", "adr-junk", ["alice"])
    call["params"]["task"]["metadata"]["junk"] = 1
    refused = http.post("/a2a", headers=as_("alice"), json=call).json()["error"]
    assert refused["code"] == -32602 and "junk" in refused["message"]
    call = a2a_send("t-string", "adr-string", ["alice"])
    call["params"]["task"]["metadata"]["roster"] = "alice,bob"  # the CLI's spelling, not the command's
    refused = http.post("/a2a", headers=as_("alice"), json=call).json()["error"]
    assert refused["code"] == -32602 and "$.roster" in refused["message"], refused
    assert http.get("/ratifications/adr-string").status_code == 404


def test_an_a2a_notification_is_carried_out_and_never_answered(http: httpx.Client) -> None:
    call = a2a_send("t-quiet", "adr-quiet", ["alice"])
    del call["id"]
    sent = http.post("/a2a", headers=as_("alice"), json=call)
    assert sent.status_code == 204 and sent.content == b""
    assert http.get("/ratifications/adr-quiet").status_code == 200


def test_an_a2a_task_cannot_be_taken_over_through_an_idempotency_key(http: httpx.Client) -> None:
    opened = http.post("/a2a", headers=as_("alice"), json=a2a_send("t-owned", "adr-owned", ["alice"])).json()
    assert opened["result"]["contextId"] == "adr-owned"
    hijack = http.post("/commands/ratification/init", headers=as_("mallory") | {"Idempotency-Key": "a2a:t-owned"},
                       json={"topic": "evil", "roster": ["mallory"], "artifact": "# hijack\n"})
    assert hijack.status_code == 400 and hijack.json()["error"]["field"] == "Idempotency-Key"
    squat = http.post("/commands/ratification/init", headers=as_("mallory"),
                      json={"topic": "evil", "roster": ["mallory"], "artifact": "x", "command_id": "a2a:t-next"})
    assert squat.status_code == 400  # a task id not taken yet cannot be claimed from outside A2A either
    assert http.get("/ratifications/evil").status_code == 404
    got = http.post("/a2a", json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "t-owned"}})
    assert got.json()["result"]["contextId"] == "adr-owned"


@pytest.mark.parametrize(("body", "code"), [
    (b"{oops", -32700), (b"[1]", -32600), (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "tasks/get"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/fly"}', -32601),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "nope"}}', -32001),
])
def test_a2a_errors_use_the_standard_codes(http: httpx.Client, body: bytes, code: int) -> None:
    assert http.post("/a2a", content=body).json()["error"]["code"] == code
