"""``athenaeum mcp`` as an agent runtime uses it, through the official ``mcp`` SDK's own client:
over stdio as the README's configuration starts it (``athenaeum mcp --as NAME``), and over the
gateway's streamable HTTP at ``/mcp`` with a bearer token; both protocol eras, the 2026-07-28
one (``subscriptions/listen``) and the handshake one before it (``resources/subscribe``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from athenaeum.services.commands.routes import EXPOSED
from athenaeum.services.mcp.naming import tool_name
from tests.services.conftest import ATHENAEUM, Served

ARTIFACT = "# ADR 12\nAgents reach the ledger through MCP.\n"
SHA = hashlib.sha256(ARTIFACT.encode()).hexdigest()
WAIT = 20  # seconds any one answer or notification may take
PAGE = "canon/mcp.md"


@contextlib.asynccontextmanager
async def over_stdio(served: Served, agent: str, mode: str = "auto") -> AsyncIterator[Client]:
    """The server an agent runtime starts from the README's snippet: ``athenaeum mcp --as agent``."""
    served.enrol(agent)
    command, *args = ATHENAEUM
    environment = {key: value for key, value in os.environ.items() if key != "ATHENAEUM_NATS_URL"}
    server = StdioServerParameters(command=command, args=[*args, "mcp", "--as", agent, "--data-dir",
                                                          str(served.data_dir)], env=environment)
    async with Client(stdio_client(server), mode=mode, read_timeout_seconds=WAIT, cache=None) as client:
        yield client


def gateway(served: Served) -> str:
    return json.loads((served.data_dir / "serve.json").read_text())["http"]


def token_of(served: Served, agent: str) -> str:
    served.enrol(agent)
    issued = served.run("agent", "token", agent, actor=agent)
    assert issued.returncode == 0, issued.stderr
    return issued.stdout.strip().splitlines()[-1]


@contextlib.asynccontextmanager
async def over_http(served: Served, token: str, agent: str | None = None, mode: str = "legacy",
                    notified: list[Any] | None = None) -> AsyncIterator[Client]:
    """The gateway's ``/mcp`` with the agent's bearer token; ``notified`` collects what the
    server sends unasked (a legacy subscription's changes)."""
    headers = {"Authorization": f"Bearer {token}"} | ({"X-Agent-Name": agent} if agent else {})

    async def collect(message: Any) -> None:
        if notified is not None:
            notified.append(message)

    async with httpx2.AsyncClient(headers=headers, timeout=WAIT) as http:
        transport = streamable_http_client(f"{gateway(served)}/mcp", http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=WAIT, cache=None, message_handler=collect) as client:
            yield client


async def ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """The refusal's error object: code, message and the field at fault."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    assert result.content[0].text.startswith(f"refused: {result.structured_content['error']['code']}")
    return result.structured_content["error"]


def cli_code(served: Served, *args: str, actor: str) -> str:
    done = served.run(*args, "--json", actor=actor)
    assert done.returncode == 1, done.stdout + done.stderr
    return json.loads(done.stdout)["error"]["code"]


async def test_an_agent_runtime_lists_the_tools_and_ratifies_through_them(served: Served) -> None:
    async with over_stdio(served, "alice") as alice, over_stdio(served, "bob") as bob:
        listed = {tool.name: tool for tool in (await alice.list_tools()).tools}
        commands = {tool_name(route.group, route.verb) for route in EXPOSED}
        reads = {"check", *(f"{family}_{verb}" for family in ("ratification", "quorum", "thread", "page", "task")
                            for verb in ("show", "list"))}
        assert commands | reads <= set(listed)
        vote = listed["ratification_vote"]
        assert vote.input_schema["type"] == "object" and set(vote.input_schema["required"]) == {
            "topic", "sha256", "decision"}
        assert vote.input_schema["properties"]["decision"] == {"$ref": "#/$defs/Decision"}
        assert "Decision" in vote.input_schema["$defs"]
        assert listed["agent_token"].description.endswith("(the CLI makes the token and shows it once).")
        assert "agent" not in listed["check"].input_schema.get("required", [])

        opened = await ok(alice, "ratification_init", topic="adr-mcp", roster=["alice", "bob"], artifact=ARTIFACT)
        assert opened["ok"] and opened["events"][0]["artifact_sha256"] == SHA
        assert alice.protocol_version == "2026-07-28"  # the SDK's own choice, after probing
        manifest = "athenaeum://ratifications/adr-mcp/manifest.md"
        async with alice.listen(resource_subscriptions=[manifest]) as changes:
            (waiting,) = (await ok(bob, "check"))["items"]
            assert waiting["call"] == {"name": "ratification_vote",
                                       "arguments": {"topic": "adr-mcp", "sha256": SHA, "decision": "SIGN"}}
            await ok(bob, waiting["call"]["name"], **waiting["call"]["arguments"])
            with anyio.fail_after(WAIT):
                assert await anext(changes) == ResourceUpdated(manifest)
        assert (await refused(bob, "ratification_vote", topic="adr-mcp", sha256=SHA, decision="SIGN"))["code"] == (
            "already_voted")

        (mine,) = (await ok(alice, "check"))["items"]
        signed = await ok(alice, mine["call"]["name"], **mine["call"]["arguments"])
        assert [event["type"] for event in signed["events"]][-1] == "ArtifactRatified"
        record = await alice.read_resource("athenaeum://ratifications/adr-mcp/ratified.md")
        (text,) = record.contents
        assert text.mime_type == "text/markdown" and "all-SIGN" in text.text and "| bob |" in text.text
        assert (await ok(bob, "ratification_show", topic="adr-mcp"))["status"] == "ratified"
        listing = await ok(bob, "ratification_list", status="ratified")
        assert [row["topic"] for row in listing["items"]] == ["adr-mcp"]
        listed = await every_resource(alice)
        assert {manifest, "athenaeum://ratifications/adr-mcp/ratified.md"} <= set(listed)
        templates = (await alice.list_resource_templates()).resource_templates
        assert "athenaeum://ratifications/{topic}/{record}.md" in {t.uri_template for t in templates}
        with pytest.raises(MCPError) as missing:
            await alice.read_resource("athenaeum://ratifications/adr-none/ratified.md")
        assert missing.value.data["code"] == "not_found" and missing.value.data["field"] == "topic"


async def test_mcp_refuses_what_the_cli_refuses_with_the_same_codes(served: Served) -> None:
    for agent in ("alice", "bob", "mallory"):
        served.enrol(agent)
    async with over_stdio(served, "alice") as alice, over_stdio(served, "mallory") as mallory:
        await ok(alice, "ratification_init", topic="adr-codes", roster=["alice", "bob"], artifact=ARTIFACT)
        outsider = await refused(mallory, "ratification_vote", topic="adr-codes", sha256=SHA, decision="SIGN")
        assert outsider["code"] == "not_rostered" == cli_code(
            served, "ratify", "vote", "adr-codes", "--sha256", SHA, "--sign", actor="mallory")
        void = await refused(alice, "ratification_vote", topic="adr-codes", sha256="0" * 64, decision="SIGN")
        assert void["code"] == "sha_mismatch" == cli_code(
            served, "ratify", "vote", "adr-codes", "--sha256", "0" * 64, "--sign", actor="alice")
        bad = await refused(alice, "ratification_vote", topic="Not A Slug", sha256=SHA, decision="SIGN")
        assert bad["code"] == "invalid" and bad["field"] == "topic"
        unknown = await refused(alice, "ratification_vote", topic="adr-codes", sha256=SHA, decision="SIGN", x=1)
        assert unknown["code"] == "invalid" and unknown["field"] == "x"
        human_only = await refused(alice, "agent_register", name="eve")
        assert human_only["code"] == "not_human" == cli_code(served, "agent", "register", "eve", actor="alice")
        assert (await refused(alice, "ratification_show", topic="adr-none"))["code"] == "not_found"
        assert (await refused(alice, "no_such_tool"))["code"] == "not_found"
        stray = await refused(alice, "ratification_show", topic="adr-codes", name="adr-codes")
        assert stray["code"] == "invalid" and stray["field"] == "name"
        shown = await ok(alice, "ratification_show", topic="adr-codes")
        assert shown["voted"] == [], "nothing refused was written"


# The handshake era's resources/subscribe, deprecated by the SDK for 2026-07-28, on purpose.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_discussion_becomes_canon_through_the_gateway_and_a_humans_stdio(served: Served) -> None:
    tokens = {agent: token_of(served, agent) for agent in ("alice", "bob")}
    unauthenticated = httpx.post(f"{gateway(served)}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert unauthenticated.status_code == 401 and unauthenticated.json()["error"]["code"] == "unauthenticated"
    misnamed = httpx.post(f"{gateway(served)}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                          headers={"Authorization": f"Bearer {tokens['alice']}", "X-Agent-Name": "Not A Slug"})
    assert misnamed.status_code == 400 and misnamed.json()["error"]["field"] == "X-Agent-Name"
    notified: list[Any] = []
    async with (over_http(served, tokens["alice"], "alice", notified=notified) as alice,
                over_http(served, tokens["bob"]) as bob,
                over_stdio(served, "ada") as ada,  # a human takes no token: signs with its key
                over_http(served, tokens["bob"], "alice") as pretender):
        assert alice.protocol_version == "2025-11-25"
        thread = "athenaeum://threads/mcp-canon/thread.md"
        await ok(alice, "thread_open", slug="mcp-canon", context="How do agents reach the ledger?",
                 target={"N": 0.5, "C": 0.5, "R": 0.5}, body="Through MCP.", participants=["bob"])
        await alice.session.subscribe_resource(thread)
        assert (await refused(pretender, "thread_contribute", slug="mcp-canon", body="as alice",
                              eval={"N": 0.1, "C": 0.1, "R": 0.1}))["code"] == "actor_mismatch"
        assert (await refused(bob, "check"))["field"] == "agent"  # no name given: whose work is unknown
        (waiting,) = (await ok(bob, "check", agent="bob"))["items"]
        assert waiting["call"]["name"] == "thread_contribute"
        await ok(bob, "thread_contribute", slug="mcp-canon", body="With tools and resources.",
                 eval={"N": 0.4, "C": 0.3, "R": 0.3})
        with anyio.fail_after(WAIT):
            while not any(isinstance(m, types.ResourceUpdatedNotification) and m.params.uri == thread
                          for m in notified):
                await anyio.sleep(0.05)  # polling the notifications collected, within the bound above
        rendered = (await alice.read_resource(thread)).contents[0].text
        assert "With tools and resources." in rendered

        await ok(alice, "thread_close", slug="mcp-canon", eval={"N": 0.2, "C": 0.3, "R": 0.3},
                 current={"N": 0.6, "C": 0.6, "R": 0.6}, summary="MCP it is", pages=[f"wiki/{PAGE}"],
                 patch_summary="Add the page")
        (decision,) = (await ok(ada, "check"))["items"]
        recognized = await ok(ada, decision["call"]["name"], **decision["call"]["arguments"])
        assert [event["type"] for event in recognized["events"]] == [
            "ClosureRecognized", "ThreadCrystallized", "PageInitialized"]
        (review,) = (await ok(bob, "check", agent="bob"))["items"]
        assert review["call"] == {"name": "page_read", "arguments": {"page": PAGE, "session_id": "<session>"}}
        await ok(bob, "page_read", page=PAGE, session_id="s1")
        await ok(bob, "page_endorse", page=PAGE, status="accepted", session_id="s1")
        assert (await refused(bob, "page_approve", page=PAGE, level="canonical"))["code"] == "not_human"
        (approval,) = (await ok(ada, "check"))["items"]
        await ok(ada, approval["call"]["name"], **approval["call"]["arguments"])
        block = (await bob.read_resource(f"athenaeum://consensus/{PAGE}")).contents[0].text
        assert block.splitlines()[:2] == ["rev: v1", "lifecycle: canonical"]
        page = (await bob.read_resource(f"athenaeum://pages/wiki/{PAGE}")).contents[0].text
        assert page == f"---\n{block}---\n\n{recognized['events'][2]['content']}"

        listed = await every_resource(bob)
        assert {thread, f"athenaeum://pages/{PAGE}", f"athenaeum://consensus/{PAGE}"} <= set(listed)
        assert (await bob.read_resource(f"athenaeum://pages/{PAGE}")).contents[0].text == page
        with pytest.raises(MCPError) as bad:
            await bob.list_resources(cursor="not one of ours")
        assert bad.value.data["field"] == "cursor"


async def every_resource(client: Client) -> list[str]:
    """The URIs ``resources/list`` gives, page after page (bounded: a cursor that never ends fails)."""
    uris, cursor = [], None
    for _ in range(100):
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        uris += [str(resource.uri) for resource in page.resources]
        if (cursor := page.next_cursor) is None:
            return uris
    raise AssertionError("resources/list never gave its last page")


def test_without_a_deployment_or_a_name_the_server_says_so_and_exits(tmp_path: Path) -> None:
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("ATHENAEUM_NATS", "ATHENAEUM_NATS_URL", "ATHENAEUM_AGENT")}
    nameless = subprocess.run([*ATHENAEUM, "mcp", "--data-dir", str(tmp_path)], capture_output=True, text=True,
                              timeout=60, env=environment, stdin=subprocess.DEVNULL)
    assert nameless.returncode == 2 and "--as AGENT" in nameless.stderr and not nameless.stdout
    alone = subprocess.run([*ATHENAEUM, "mcp", "--as", "alice", "--data-dir", str(tmp_path)], capture_output=True,
                           text=True, timeout=60, env=environment, stdin=subprocess.DEVNULL)
    assert alone.returncode == 3 and "no Athenaeum to talk to" in alone.stderr and not alone.stdout


def test_a_request_naming_a_key_twice_is_refused_naming_it_before_mcp_reads_it(served: Served) -> None:
    """The SDK's parser would keep the last of two values: which proposal an ACK is for must be
    the sender's to say, as the gateway's other routes and the A2A endpoint hold."""
    token = token_of(served, "alice")
    body = ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "quorum_ack", '
            '"arguments": {"proposal_id": "AC000002", "proposal_id": "AC000003"}}}')
    with httpx.Client(base_url=gateway(served), timeout=WAIT, headers={"Authorization": f"Bearer {token}"}) as http:
        refused = http.post("/mcp", content=body, headers={"Content-Type": "application/json",
                                                           "Accept": "application/json, text/event-stream"})
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert (error["code"], error["field"]) == ("invalid", "proposal_id") and "twice" in error["message"]
        signing = http.post("/ui/signing/quorum/ack", json={"actor": "alice", "command": {"proposal_id": "AC000002"}})
        assert signing.status_code == 200, signing.text
        twice = http.post("/ui/signing/quorum/ack", content=b'{"actor": "alice", "actor": "bob", '
                                                            b'"command": {"proposal_id": "AC000002"}}')
        assert twice.status_code == 400 and twice.json()["error"]["field"] == "actor", twice.text
