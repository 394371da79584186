"""Every list and text a command carries has a limit, and a JSON object names each key once:
over NATS, over HTTP and through A2A, such a command is refused at once as ``invalid``, naming
the field and the limit (or the key), and nothing is written."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import httpx
import msgspec
import nats
import pytest

from athenaeum.aggregates.families import fold_of
from athenaeum.events.constraints import AGENTS_LIMIT
from athenaeum.events.quorum_commands import ProposeQuorum
from athenaeum.services.client import AthenaeumClient
from athenaeum.services.cli.main import schema
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.jetstream_store import JetStreamCommandStore
from athenaeum.services.commands.service import ACTOR_HEADER, start_command_service
from athenaeum.services.jetstream.factory import stream_config
from tests.services.conftest import Served

ITEM = {"atom": {"section": "Scope", "anchor": "All agents"}, "objection": "too broad",
        "proposed_resolution": "carve-caveat"}
FINDING = {"severity": "NOTE", "title": "t"}


def agents(count: int) -> list[str]:
    return [f"agent-{n}" for n in range(count)]


@pytest.fixture
async def send(store_env: dict[str, str]):
    """Raw bytes to a command's subject, as ``actor``; the reply as JSON, and the ledger's size."""
    store = await JetStreamCommandStore.open([store_env["ATHENAEUM_NATS_URL"]],
                                             stream_config(store_env["ATHENAEUM_STREAM"], 1, immutable=True), fold_of)
    nc = await nats.connect(os.environ["ATHENAEUM_NATS_URL"])
    service = await start_command_service(nc, CommandHandler(store, humans=frozenset({"ada"})))
    js = nc.jetstream()

    async def request(route: str, body: bytes | dict[str, Any], actor: str = "alice") -> tuple[dict, int]:
        data = body if isinstance(body, bytes) else msgspec.json.encode(body)
        reply = await nc.request(f"athenaeum.cmd.{route}", data, timeout=30, headers={ACTOR_HEADER: actor})
        written = (await js.stream_info(store_env["ATHENAEUM_STREAM"])).state.messages
        return msgspec.json.decode(reply.data), written

    yield request
    await service.stop()
    await nc.close()
    await store.close()


def new_id() -> str:
    return uuid.uuid4().hex[:8]


async def test_the_issue_probes_are_refused_at_once(send) -> None:
    """An electorate of 100,000 and a roster of 5,000 once stalled every view."""
    electorate, before = await send("quorum.propose", {"text": "Adopt", "electorate": agents(100_000), "threshold": 1})
    roster, after = await send("ratification.init", {"topic": f"t-{new_id()}", "roster": agents(5_000), "artifact": "a"})
    assert electorate["error"]["code"] == "invalid" and electorate["error"]["field"] == "electorate"
    assert roster["error"]["code"] == "invalid" and roster["error"]["field"] == "roster"
    assert f"<= {AGENTS_LIMIT}" in roster["error"]["message"] and after == before  # nothing written


async def test_a_roster_at_the_limit_is_taken(send) -> None:
    reply, _ = await send("ratification.init", {"topic": f"t-{new_id()}", "roster": agents(AGENTS_LIMIT), "artifact": "a"})
    assert reply["ok"], reply


@pytest.mark.parametrize(("route", "body", "field"), [
    ("ratification.vote", {"topic": "t", "sha256": "s", "decision": "DISSENT", "dissent": [ITEM] * 101}, "dissent"),
    ("ratification.decide", {"topic": "t", "decision": "accept-split", "notes": [{"atom": "A1", "note": "n"}] * 1001},
     "notes"),
    ("ratification.decide", {"topic": "t", "decision": "rewrite-with-caveats",
                             "caveats": [{"atom": "A1", "ticket": "T-1"}] * 1001}, "caveats"),
    ("ratification.decide", {"topic": "t", "decision": "decompose-further", "atoms": ["A1"] * 1001}, "atoms"),
    ("ratification.split", {"topic": "t", "atom": "A1", "into": [ITEM] * 101}, "into"),
    ("thread.open", {"slug": "s", "context": "c", "body": "b", "target": {"N": 1, "C": 1, "R": 1},
                     "questions": ["q"] * 101}, "questions"),
    ("thread.open", {"slug": "s", "context": "c", "body": "b", "target": {"N": 1, "C": 1, "R": 1},
                     "topics": ["t"] * 101}, "topics"),
    ("thread.open", {"slug": "s", "context": "c", "body": "b", "target": {"N": 1, "C": 1, "R": 1},
                     "participants": agents(1001)}, "participants"),
    ("thread.close", {"slug": "s", "eval": {"N": 0, "C": 0, "R": 0}, "current": {"N": 0, "C": 0, "R": 0},
                      "summary": "s", "pages": [f"canon/p{n}.md" for n in range(51)], "patch_summary": "p"}, "pages"),
    ("task.create", {"projectId": "p", "title": "t", "reviewerRoles": [f"r{n}" for n in range(101)]}, "reviewerRoles"),
    ("task.review", {"projectId": "p", "taskId": 1, "cycle": 0, "reviewerRole": "r", "verdict": "approve",
                     "findings": [FINDING] * 1001}, "findings"),
])
async def test_a_list_over_its_limit_is_invalid_and_names_it(send, route: str, body: dict, field: str) -> None:
    reply, before = await send(route, body)
    _, after = await send(route, body)
    assert reply["error"]["code"] == "invalid" and reply["error"]["field"] == field, reply
    assert "length <=" in reply["error"]["message"] and after == before


async def test_a_key_named_twice_is_invalid_and_named(send) -> None:
    topic = f"t-{new_id()}"
    twice = f'{{"topic": "{topic}", "roster": ["alice"], "artifact": "a", "topic": "other-{topic}"}}'.encode()
    reply, before = await send("ratification.init", twice)
    assert reply["error"] == {"code": "invalid", "field": "topic", "message": reply["error"]["message"]}
    deep = ('{"topic": "t", "sha256": "s", "decision": "DISSENT", "dissent": [{"atom": {"section": "a", '
            '"anchor": "b"}, "objection": "o", "objection": "p", "proposed_resolution": "ticket"}]}').encode()
    nested, after = await send("ratification.vote", deep)
    assert nested["error"]["field"] == "objection" and after == before


@pytest.mark.parametrize("command_id", ["", "   ", "\t\n"])
async def test_an_empty_or_blank_command_id_is_invalid_and_named(send, command_id: str) -> None:
    """It would be the key a retry must repeat, which no client shows or takes back."""
    body = {"text": "Adopt", "electorate": ["alice"], "threshold": 1, "command_id": command_id}
    reply, before = await send("quorum.propose", body)
    again, after = await send("quorum.propose", body | {"text": "Adopt another"})
    assert reply["error"]["code"] == "invalid" and reply["error"]["field"] == "command_id", reply
    assert "empty or only spaces" in reply["error"]["message"] and again["error"] == reply["error"]
    assert after == before
    padded, _ = await send("quorum.propose", body | {"command_id": f" {new_id()} "})
    assert padded["ok"], padded  # an id with something in it is the sender's to choose


@pytest.mark.parametrize("page", ["wiki/log.md", "agents/dialogue/t.md", "wiki/../etc/passwd.md", "/abs.md"])
async def test_a_page_path_refused_says_the_rule_in_words(send, page: str) -> None:
    """The pattern behind a page path is no reading for anyone: its refusal says what it requires."""
    reply, before = await send("page.edit", {"page": page, "content": "x"})
    _, after = await send("page.edit", {"page": page, "content": "x"})
    assert reply["error"]["code"] == "invalid" and reply["error"]["field"] == "page", reply
    assert "where the wiki keeps its threads and its log" in reply["error"]["message"]
    assert "regex" not in reply["error"]["message"] and after == before


async def test_a_whole_number_with_a_fraction_is_that_integer(send) -> None:
    """JSON Schema, and so the OpenAPI document, reads 2.0 as the integer 2; 2.5 is no integer."""
    body = {"text": "Adopt", "electorate": ["alice", "bob"], "proposal_id": new_id().upper()}
    whole, _ = await send("quorum.propose", msgspec.json.encode(body)[:-1] + b', "threshold": 2.0}')
    assert whole["ok"] and whole["events"][0]["threshold"] == 2, whole
    fraction, _ = await send("quorum.propose", msgspec.json.encode(body | {"proposal_id": new_id().upper()})[:-1]
                             + b', "threshold": 1.5}')
    assert fraction["error"]["field"] == "threshold"


async def test_a_body_nested_past_the_parsers_depth_is_answered_invalid(send) -> None:
    """Python's JSON parser gives up past about a thousand levels: the command is refused, naming
    the field the typed decoder stops at (or the body), not left unanswered."""
    deep = b'{"proposal_id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    reply, before = await send("quorum.ack", deep)
    assert reply["error"]["code"] == "invalid" and reply["error"]["field"] == "proposal_id", reply
    items = b'[{"route": "thread.import", "command": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]"
    imported, after = await send("import", items)
    assert imported["error"] == {"code": "invalid", "field": "body", "message": imported["error"]["message"]}
    assert after == before


def test_every_list_and_text_of_every_command_is_bounded_in_the_schema() -> None:
    """What the decoder enforces, ``athenaeum schema`` shows: no list and no text without a limit."""
    unbounded = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "array" and "maxItems" not in node:
                unbounded.append(where)
            if node.get("type") == "string" and not {"maxLength", "pattern", "enum", "format"} & node.keys():
                unbounded.append(where)
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    definitions = schema()["$defs"]
    commands = {ref["$ref"].rsplit("/", 1)[1] for ref in schema()["commands"].values()}
    for name in commands:
        walk(definitions[name], name)
    for name in ("DissentItem", "AtomRef", "Note", "Caveat", "FindingInput", "ResolutionInput", "TransitionPayload",
                 "Contradiction"):
        walk(definitions[name], name)
    assert not unbounded, unbounded


def test_over_http_and_a2a_a_key_named_twice_is_invalid_too(tmp_path) -> None:
    served = Served(tmp_path / "home", "--trust-agent-header", "127.0.0.1")
    try:
        url = json.loads((served.data_dir / "serve.json").read_text())["http"]
        with httpx.Client(base_url=url, timeout=30, headers={"X-Agent-Name": "alice"}) as http:
            body = '{"topic": "adr-1", "roster": ["alice"], "roster": ["mallory"], "artifact": "a"}'
            refused = http.post("/commands/ratification/init", content=body)
            assert refused.status_code == 400 and refused.json()["error"]["field"] == "roster"
            deep = http.post("/commands/ratification/init", content=b'{"topic": ' + b"[" * 5000 + b"]" * 5000 + b"}")
            assert deep.status_code == 400 and deep.json()["error"]["field"] == "topic", deep.text
            assert http.get("/ratifications/adr-1").status_code == 404
            page = http.post("/commands/page/init", json={"page": "wiki/log.md", "content": "x"})
            assert page.status_code == 400 and page.json()["error"]["field"] == "page", page.text
            assert "regex" not in page.text and "segments of letters" in page.text
            blank = http.post("/commands/ratification/init", json={"topic": "adr-1", "roster": ["alice"],
                                                                   "artifact": "a", "command_id": " "})
            assert blank.status_code == 400 and blank.json()["error"]["field"] == "command_id", blank.text
            assert http.get("/ratifications/adr-1").status_code == 404
            metadata = '{"athenaeum_mode": "ratify", "topic": "adr-2", "roster": ["alice"], "artifact": "a", "topic": "x"}'
            sent = http.post("/a2a", headers={"A2A-Version": "1.0"}, content=(
                '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m-1", '
                f'"role": "ROLE_USER", "parts": [{{"text": "Ratify"}}], "metadata": {metadata}}}}}}}'))
            error = sent.json()["error"]
            assert error["code"] == -32602 and error["data"][0]["metadata"]["field"] == "topic", error
            assert http.get("/ratifications/adr-2").status_code == 404
    finally:
        served.stop()


async def test_a_lone_surrogate_is_invalid_naming_its_field_not_a_truncated_body(send) -> None:
    """JSON can escape half a surrogate pair, which is no character: msgspec calls such a body truncated."""
    body = (b'{"topic": "t", "sha256": "s", "decision": "DISSENT", "dissent": [{"atom": {"section": "a", "anchor": "b"}, '
            b'"objection": "\\ud800", "proposed_resolution": "ticket"}]}')
    reply, before = await send("ratification.vote", body)
    assert reply["error"]["code"] == "invalid" and reply["error"]["field"] == "dissent.objection", reply
    assert "lone surrogate" in reply["error"]["message"]
    nc = await nats.connect(os.environ["ATHENAEUM_NATS_URL"])
    unsent = await AthenaeumClient(nc, "alice").send(
        msgspec.convert({"text": "a\ud800", "electorate": ["alice"], "threshold": 1}, ProposeQuorum))
    await nc.close()
    _, after = await send("ratification.vote", body)
    assert unsent.error is not None and unsent.error.field == "text" and "nothing was sent" in unsent.error.message
    assert after == before
