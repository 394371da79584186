"""The ledger never holds an event its rules would refuse: each family is driven with random
sequences of valid and invalid commands, read as the NATS service reads them and decided by the
command handler on a real JetStream stream, and then the audit replays that stream and decides
every stored command again. It finds nothing HARD.

Derandomized and bounded (a few sequences of at most a dozen commands per family), on a clock
the sequences move themselves: no sleeps."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import datetime, timedelta, timezone
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates.rules import Invalid
from athenaeum.events import family_id
from athenaeum.services.audit.auditor import Audit
from athenaeum.events.fleet_commands import RegisterAgent
from athenaeum.services.commands.credentials import ASSERTED, SERVICE, TIMER_ACTOR, deployment_command_id, signed
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.reading import read_command
from athenaeum.services.commands.routes import BY_NAME
from athenaeum.services.identity.keys import key_pair, new_seed, public_key
from athenaeum.services.jetstream.factory import stream_config
from tests.conftest import new_stream_name

HUMAN = "ada"
AGENTS = ("alice", "bob", "carol")
T0 = datetime(2026, 12, 1, tzinfo=timezone.utc)
ARTIFACT = "# ADR 1\nEvery agent logs to the ledger.\n"
SHA = hashlib.sha256(ARTIFACT.encode()).hexdigest()
SEQUENCES = 25  # per family
DECODERS = {name: msgspec.json.Decoder(route.command) for name, route in BY_NAME.items()}

actor = st.sampled_from((*AGENTS, HUMAN))
agents = st.lists(st.sampled_from((*AGENTS, *AGENTS, HUMAN, "Not-A-Slug")), max_size=4)
text = st.sampled_from(["a reason", "another", " "])  # a blank one now and then
wait = st.tuples(st.just("wait"), st.just(""), st.integers(min_value=1, max_value=30))  # hours


def step(route: str, body: st.SearchStrategy[dict[str, Any]], by: st.SearchStrategy[str] = actor) -> st.SearchStrategy:
    return st.tuples(st.just(route), by, body)


def timer(route: str, body: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy:
    return step(route, body, st.just(TIMER_ACTOR))


def fields(required: dict[str, st.SearchStrategy], **optional: st.SearchStrategy) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(required, optional=optional)


topic = st.sampled_from(["adr-1", "adr-1", "adr-2"])
atom = st.sampled_from(["A1", "A2"])
dissent = st.lists(fields({"atom": fields({"section": st.sampled_from(["Scope", " "]), "anchor": st.just("All")}),
                           "objection": text, "proposed_resolution": st.sampled_from(["ticket", "rewrite", "none"])}),
                   max_size=2)
RATIFICATION = st.one_of(
    step("ratification.init", fields({"topic": topic, "roster": agents, "artifact": st.just(ARTIFACT)},
                                     mode=st.sampled_from(["standard", "fast"]), expires_in=st.sampled_from(["2h", "0h"]))),
    step("ratification.vote", fields({"topic": topic, "sha256": st.sampled_from([SHA, "0" * 64]),
                                      "decision": st.sampled_from(["SIGN", "DISSENT"]), "dissent": dissent})),
    step("ratification.decide", fields(
        {"topic": topic, "decision": st.sampled_from(["accept-split", "decompose-further", "rewrite-with-caveats",
                                                      "reject"])},
        notes=st.lists(fields({"atom": atom, "note": text}), max_size=2), atoms=st.lists(atom, max_size=2),
        caveats=st.lists(fields({"atom": atom}, verifier=text, ticket=text), max_size=2))),
    step("ratification.split", fields({"topic": topic, "atom": atom, "into": dissent})),
    step("ratification.cancel", fields({"topic": topic})),
    timer("ratification.expire", fields({"topic": topic})),
    wait,
)

proposal = st.sampled_from(["0000000A", "0000000A", "0000000B"])
QUORUM = st.one_of(
    step("quorum.propose", fields({"text": text, "electorate": agents, "proposal_id": proposal},
                                  threshold=st.integers(0, 4), preset=st.sampled_from(["advisory", "blocking"]),
                                  veto_on_nack=st.booleans(), coordinator=st.sampled_from((*AGENTS, HUMAN)),
                                  deadline_in=st.sampled_from(["2h", "0h"]))),
    step("quorum.ack", fields({"proposal_id": proposal})),
    step("quorum.nack", fields({"proposal_id": proposal, "reason": st.sampled_from(["no", "", "COORDINATOR_VETO"])})),
    step("quorum.tiebreak", fields({"proposal_id": proposal, "decision": st.sampled_from(["accept", "reject"])})),
    step("quorum.override", fields({"proposal_id": proposal, "decision": st.sampled_from(["accept", "reject"]),
                                    "reason": text})),
    timer("quorum.expire", fields({"proposal_id": proposal})),
    wait,
)

slug = st.just("th-1")
score = st.sampled_from([0.0, 0.3, 1.0, 1.5])
vector = fields({"N": score, "C": score, "R": score})
THREAD = st.one_of(
    step("thread.open", fields({"slug": slug, "context": text, "body": st.just("first"), "target": vector},
                               questions=st.lists(text, max_size=2), participants=agents)),
    step("thread.ask", fields({"slug": slug, "question": text})),
    step("thread.contribute", fields({"slug": slug, "body": text}, eval=vector)),
    # "sum": the test fills in the thread's true sum, so that some closures are right.
    step("thread.close", fields({"slug": slug, "eval": vector, "current": st.sampled_from(["sum", "zero"]),
                                 "summary": text, "pages": st.lists(st.sampled_from(["canon/a.md", "wiki/canon/a.md",
                                                                                     "log.md"]), max_size=2),
                                 "patch_summary": st.just("patch")})),
    step("thread.reopen", fields({"slug": slug, "eval": vector, "reason": text, "discovery": st.just("found")})),
    step("thread.recognize", fields({"slug": slug})),
    step("thread.refuse", fields({"slug": slug, "reason": text})),
)

page = st.sampled_from(["canon/a.md", "wiki/canon/a.md"])
session = st.sampled_from(["s1", "s2"])
content = st.sampled_from(["# A\nOne.\n", "# A\nTwo.\n", "# B\nOne.\n"])
PAGE = st.one_of(
    step("page.init", fields({"page": page, "content": content}, scope=st.sampled_from(["structural", "descriptive"]))),
    step("page.read", fields({"page": page, "session_id": session})),
    step("page.endorse", fields({"page": page, "status": st.sampled_from(["reviewed", "accepted", "contributed"]),
                                 "session_id": session})),
    step("page.edit", fields({"page": page, "content": content}, significant=st.booleans())),
    step("page.dispute", fields({"page": page, "section": text})),
    step("page.resolve", fields({"page": page, "agent": st.sampled_from(AGENTS), "decision": text,
                                 "thread": st.just("th-1")})),
    step("page.approve", fields({"page": page, "level": st.sampled_from(["canonical", "soft-canonical"])})),
    step("page.lifecycle", fields({"page": page, "to": st.sampled_from(["proposal", "working", "accepted"]),
                                   "reason": text})),
    timer("page.age", fields({"page": page})),
    wait,
)

task = {"projectId": st.just("web"), "taskId": st.sampled_from([1, 2])}
payload = fields({}, buildStatus=st.sampled_from(["clean", "failed"]), commitSha=st.just("abc"),
                 reviewerRole=st.just("security"), verdict=st.sampled_from(["approve", "request_changes"]),
                 trigger=st.just("reviewer_contradiction"), findingIds=st.sampled_from([[1, 2], [1, 1]]),
                 failureReason=st.just("engineer_build_failure"))
TASK = st.one_of(
    step("task.create", fields({"projectId": st.just("web"), "title": text}, reviewCycleBudget=st.integers(0, 2))),
    step("task.claim", fields(task)),
    step("task.transition", fields(task | {"to": st.sampled_from(["engineering", "built", "reviewing", "completed",
                                                                  "revising", "arbitrating", "failed", "integrated"]),
                                           "payload": payload})),
    step("task.review", fields(task | {"cycle": st.integers(0, 1), "reviewerRole": st.sampled_from(["security", "perf"]),
                                       "verdict": st.sampled_from(["approve", "request_changes"]),
                                       "findings": st.lists(fields({"severity": st.sampled_from(["BLOCKING", "NOTE"]),
                                                                    "title": text}), max_size=2)})),
    step("task.rule", fields(task | {"trigger": st.just("reviewer_contradiction"),
                                     "ruling": st.sampled_from(["approve", "rule", "escalate"]), "rulingMarkdown": text},
                             contradictionResolution=fields({"upheldFindingId": st.just(1), "retiredFindingId": st.just(2),
                                                             "rationale": text}))),
    step("task.session-ended", fields(task | {"role": st.sampled_from(["engineer", "arbitrator"]),
                                              "exitCode": st.sampled_from([0, 1])})),
    step("task.reset", fields(task)),
)

FLEET = st.one_of(
    step("agent.register", fields({"name": st.sampled_from((*AGENTS, "Not-A-Slug"))}, human=st.booleans())),
    step("agent.revoke", fields({"name": st.sampled_from(AGENTS)}, reason=text)),
    step("agent.token", fields({"name": st.sampled_from(AGENTS), "token_sha256": st.sampled_from(["a" * 64, "b" * 64])})),
    step("agent.revoke-token", fields({"name": st.sampled_from(AGENTS), "token_sha256": st.just("a" * 64)})),
    timer("agent.age", fields({"name": st.sampled_from(AGENTS)})),
    wait,
)


async def drive(url: str, stream: str, steps: list[tuple[str, str, Any]]) -> int:
    """Each step read as the NATS service reads it and sent through the handler; how many were taken."""
    store = await JetStreamCommandStore.open([url], stream_config(stream, 1, immutable=True), fold_of)
    now = [T0]
    handler = CommandHandler(store, humans=frozenset({HUMAN}), clock=lambda: now[0])
    # The human signs with her key, which the deployment records first, as serve --humans does;
    # the agents act unproven.
    ada = key_pair(new_seed())
    registered = await handler.send(RegisterAgent(name=HUMAN, human=True, public_key=public_key(ada),
                                                  command_id=deployment_command_id(HUMAN)), HUMAN, SERVICE)
    assert registered.ok, registered.error
    taken = 0
    try:
        for number, (route, sender, body) in enumerate(steps):
            if route == "wait":
                now[0] += timedelta(hours=body)
                continue
            body = body | {"command_id": f"c-{number}"}
            if route == "thread.close":
                body["current"] = await thread_sum(handler, body) if body["current"] == "sum" else body["eval"]
            try:
                command = read_command(msgspec.json.encode(body), DECODERS[route])
            except (msgspec.ValidationError, Invalid):
                continue  # refused at the edge: never reaches the handler
            proof = {TIMER_ACTOR: SERVICE, HUMAN: signed(ada, store.ledger_id, command, HUMAN)}.get(sender, ASSERTED)
            reply = await handler.send(command, sender, proof)
            assert reply.ok or reply.error.code not in ("unavailable", "conflict"), reply.error
            taken += reply.ok and reply.position is not None
    finally:
        await store.close()
    return taken


async def thread_sum(handler: CommandHandler, body: dict[str, Any]) -> dict[str, float]:
    state = await handler.load(family_id("thread", body["slug"]))
    current = state.current if state is not None else None
    scores = body["eval"]
    return {axis: (getattr(current, axis) if current else 0.0) + scores[axis] for axis in "NCR"}


def audited(url: str, stream: str) -> list[str]:
    app = AthenaeumApplication(env={"PERSISTENCE_MODULE": "athenaeum.services.jetstream",
                                    "ATHENAEUM_NATS_URL": url, "ATHENAEUM_STREAM": stream})
    try:
        report = Audit(app, humans=frozenset({HUMAN}), clock=lambda: T0).run()
    finally:
        app.close()
    return [f"{f.code} at {f.position}: {f.message}" for f in report.findings if f.severity == "HARD"]


# Each sequence starts with one command that opens something, so the rest has a record to act on.
OPENERS = {
    "ratification": (("ratification.init", "alice", {"topic": "adr-1", "roster": ["alice", "bob"], "artifact": ARTIFACT}),
                     RATIFICATION),
    "quorum": (("quorum.propose", "alice", {"text": "Adopt", "electorate": list(AGENTS), "threshold": 2,
                                            "proposal_id": "0000000A", "coordinator": HUMAN}), QUORUM),
    "thread": (("thread.open", "alice", {"slug": "th-1", "context": "How?", "body": "first",
                                         "target": {"N": 1, "C": 1, "R": 1}}), THREAD),
    "page": (("page.init", "alice", {"page": "canon/a.md", "content": "# A\nOne.\n"}), PAGE),
    "task": (("task.create", HUMAN, {"projectId": "web", "title": "Add login"}), TASK),
    "fleet": (("agent.register", HUMAN, {"name": "alice"}), FLEET),
}


@pytest.mark.parametrize("family", list(OPENERS))
def test_the_audit_finds_nothing_hard_after_any_sequence_of_commands(nats_server, family: str) -> None:
    opener, commands = OPENERS[family]
    taken: list[int] = []

    @settings(max_examples=SEQUENCES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(st.lists(commands, min_size=4, max_size=16))
    def decided_and_audited(steps: list[tuple[str, str, Any]]) -> None:
        stream = new_stream_name()
        taken.append(asyncio.run(drive(nats_server.url, stream, [opener, *steps])))
        assert audited(nats_server.url, stream) == []

    decided_and_audited()
    assert sum(taken) > len(taken), taken  # beyond the openers, the sequences' commands were appended too
