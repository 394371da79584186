"""A2A 1.0 as a stock client speaks it: the official A2A SDK (``a2a-sdk``) against ``athenaeum
serve``, discovering the card, opening ratifications, reading, following and canceling them while
the roster votes through the CLI and the Python client."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import nats
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.client.auth import AuthInterceptor, CredentialService
from a2a.types import (
    CancelTaskRequest, GetTaskRequest, InvalidParamsError, Message, Part, Role, SendMessageRequest, StreamResponse,
    SubscribeToTaskRequest, Task, TaskNotFoundError, TaskState, UnsupportedOperationError, VersionNotSupportedError,
)
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct

from athenaeum.events.ratification import Decision
from athenaeum.events.ratification_commands import CastVote
from athenaeum.services.client import SyncClient
from athenaeum.services.identity.keys import read_key
from athenaeum.services.views.bucket import bucket_of
from tests.services.conftest import Served

ARTIFACT = "# ADR 8\nEvery decision is on the ledger.\n"
SHA = hashlib.sha256(ARTIFACT.encode()).hexdigest()
SDK_READ_TIMEOUT = 5.0  # what the SDK's own HTTP client waits for the next bytes, streams included
T = TypeVar("T")


class Token(CredentialService):
    """The agent's bearer token, for the scheme the card declares."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def get_credentials(self, security_scheme_name: str, context: Any) -> str | None:
        return self.token if security_scheme_name == "bearer" else None


class Gateway:
    """A serve whose fleet is alice, bob and carol; alice holds a token."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.url = json.loads((served.data_dir / "serve.json").read_text())["http"]
        for agent in ("alice", "bob", "carol"):
            served.enrol(agent)
        issued = served.run("agent", "token", "alice", actor="alice")
        assert issued.returncode == 0, issued.stderr
        self.token = issued.stdout.strip().splitlines()[-1]
        self.sent: list[tuple[str, str]] = []  # (A2A-Version, method) of every JSON-RPC call

    @contextlib.asynccontextmanager
    async def client(self, headers: dict[str, str] | None = None, timeout: float = SDK_READ_TIMEOUT,
                     **config: Any) -> AsyncIterator[Client]:
        """A client as the SDK makes one from the agent's URL, alice's token added by the SDK's
        own interceptor from the card's security scheme; its HTTP client waits as the SDK's does
        unless told otherwise. Leaving closes its connections."""

        async def record(request: httpx.Request) -> None:
            if request.method == "POST":
                self.sent.append((request.headers.get("A2A-Version", ""), json.loads(request.content)["method"]))

        async with httpx.AsyncClient(timeout=timeout, headers=headers, event_hooks={"request": [record]}) as http:
            factory = ClientFactory(ClientConfig(httpx_client=http, **config))
            client = await factory.create_from_url(self.url, interceptors=[AuthInterceptor(Token(self.token))])
            try:
                yield client
            finally:
                await client.close()

    async def vote(self, agent: str, topic: str) -> None:
        """bob votes with the CLI, carol with the Python client."""
        if agent == "bob":
            done = await asyncio.to_thread(self.served.run, "ratify", "vote", topic, "--sha256", SHA, "--sign", actor="bob")
            assert done.returncode == 0, done.stderr
        else:
            def cast() -> None:
                with SyncClient(self.served.url, agent, seed=self.served.enrol(agent)) as client:
                    assert client.send(CastVote(topic=topic, sha256=SHA, decision=Decision.SIGN)).ok
            await asyncio.to_thread(cast)

    async def watches(self) -> int:
        """How many watches of the views' bucket have a watcher (an operator holding the services' key asks)."""
        nc = await nats.connect(self.served.url, nkeys_seed_str=read_key(self.served.service_key).seed.decode())
        try:
            watches = await nc.jetstream().consumers_info(f"KV_{bucket_of('ATHENAEUM')}")
            return sum(bool(watch.push_bound) for watch in watches)
        finally:
            await nc.close()


async def until_state(client: Client, task_id: str, state: int) -> None:
    async def state_now() -> int | None:
        with contextlib.suppress(TaskNotFoundError):
            return (await client.get_task(GetTaskRequest(id=task_id))).status.state
        return None

    assert await until_async(state_now, lambda now: now == state) == state, f"task {task_id} never {TaskState.Name(state)}"


async def until_async(probe: Callable[[], Awaitable[T]], done: Callable[[T], bool], timeout: float = 20) -> T:
    """Probe until ``done`` says so or ``timeout`` seconds pass; the last probe's value."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not done(value := await probe()) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.2)  # poll interval of a bounded wait
    return value


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    served = Served(tmp_path / "home")
    try:
        yield Gateway(served)
    finally:
        served.stop()


def ratify(topic: str, roster: list[str]) -> SendMessageRequest:
    metadata = Struct()
    metadata.update({"athenaeum_mode": "ratify", "topic": topic, "roster": roster, "artifact": ARTIFACT})
    return SendMessageRequest(message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, metadata=metadata,
                                              parts=[Part(text=f"Please ratify {topic}.")]))


def kind(event: StreamResponse) -> str:
    """What an event is and the state it says: ``task SUBMITTED``, ``artifactUpdate``, ..."""
    payload = event.WhichOneof("payload")
    if payload == "task":
        return f"task {TaskState.Name(event.task.status.state).removeprefix('TASK_STATE_')}"
    if payload == "status_update":
        return f"statusUpdate {TaskState.Name(event.status_update.status.state).removeprefix('TASK_STATE_')}"
    return "artifactUpdate" if payload == "artifact_update" else payload


def test_the_sdk_discovers_the_card_and_speaks_1_0(gateway: Gateway) -> None:
    async def discover() -> Any:
        async with httpx.AsyncClient() as http:
            return await A2ACardResolver(http, gateway.url).get_agent_card()

    card = asyncio.run(discover())
    preferred = card.supported_interfaces[0]
    assert (preferred.url, preferred.protocol_binding, preferred.protocol_version) == (f"{gateway.url}/a2a", "JSONRPC", "1.0")
    assert [i.protocol_version for i in card.supported_interfaces] == ["1.0", "0.3"]
    assert card.capabilities.streaming and not card.capabilities.push_notifications
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "bearer"
    assert list(card.security_requirements[0].schemes) == ["bearer"]
    assert [skill.id for skill in card.skills] == ["ratify"]
    legacy = httpx.get(f"{gateway.url}/.well-known/agent.json").json()  # 0.3 clients still find theirs
    assert legacy["protocolVersion"] == "0.3.0" and legacy["url"] == f"{gateway.url}/a2a"


def test_a_ratification_streams_to_completion_while_the_roster_votes(gateway: Gateway) -> None:
    async def scenario() -> tuple[list[StreamResponse], Task]:
        async with gateway.client() as client:  # streaming, as the card allows: SendStreamingMessage
            stream = client.send_message(ratify("adr-sdk", ["bob", "carol"]))
            events = [await anext(stream)]  # the task, once frozen
            await gateway.vote("bob", "adr-sdk")
            events.append(await anext(stream))
            await gateway.vote("carol", "adr-sdk")
            events += [event async for event in stream]  # until the stream ends, at a terminal state
            return events, await client.get_task(GetTaskRequest(id=events[0].task.id))

    events, got = asyncio.run(scenario())
    assert [kind(event) for event in events] == [
        "task SUBMITTED", "statusUpdate WORKING", "artifactUpdate", "statusUpdate COMPLETED"]
    assert events[0].task.context_id == "adr-sdk" and events[0].task.metadata["artifact_sha256"] == SHA
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    record = MessageToDict(got.artifacts[0].parts[0].data)  # the outcome: the ratification's record
    assert record["status"] == "ratified" and sorted(record["tally"]["signs"]) == ["bob", "carol"]
    assert MessageToDict(events[2].artifact_update.artifact) == MessageToDict(got.artifacts[0])
    assert gateway.sent == [("1.0", "SendStreamingMessage"), ("1.0", "GetTask")]


def test_a_task_sent_then_subscribed_to_is_canceled(gateway: Gateway) -> None:
    async def scenario() -> tuple[list[StreamResponse], Task]:
        async with gateway.client(streaming=False, polling=True) as sender:  # SendMessage, answered at once
            sent = [event async for event in sender.send_message(ratify("adr-cancel", ["bob", "carol"]))]
        async with gateway.client() as client:
            following = client.subscribe(SubscribeToTaskRequest(id=sent[0].task.id))
            first = await anext(following)
            canceled = await client.cancel_task(CancelTaskRequest(id=sent[0].task.id))
            return [*sent, first, *[event async for event in following]], canceled

    events, canceled = asyncio.run(scenario())
    assert [kind(event) for event in events] == ["task SUBMITTED", "task SUBMITTED", "statusUpdate CANCELED"]
    assert canceled.id == events[0].task.id and canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert canceled.metadata["athenaeum_status"] == "canceled"
    assert [method for _, method in gateway.sent] == ["SendMessage", "SubscribeToTask", "CancelTask"]


def test_a_blocking_send_answers_once_the_roster_has_decided(gateway: Gateway) -> None:
    async def scenario() -> tuple[bool, StreamResponse]:
        # SendMessage, blocking (the default): its caller waits as long as the roster takes.
        async with gateway.client(streaming=False, timeout=60) as client:
            request = ratify("adr-block", ["bob"])
            answer = asyncio.ensure_future(anext(client.send_message(request)))
            await until_state(client, request.message.message_id, TaskState.TASK_STATE_SUBMITTED)
            waited = not answer.done()
            await gateway.vote("bob", "adr-block")
            return waited, await answer

    waited, event = asyncio.run(scenario())
    assert waited and event.task.status.state == TaskState.TASK_STATE_COMPLETED


def test_a_blocking_send_whose_client_went_away_stops_watching(gateway: Gateway) -> None:
    async def scenario() -> tuple[int, int, int]:
        before = await gateway.watches()
        async with gateway.client(streaming=False, timeout=60) as client:
            request = ratify("adr-gone", ["bob"])
            answer = asyncio.ensure_future(anext(client.send_message(request)))
            await until_state(client, request.message.message_id, TaskState.TASK_STATE_SUBMITTED)
            watching = await until_async(gateway.watches, lambda count: count > before)
            answer.cancel()  # the agent stops waiting; leaving closes its connection
        return before, watching, await until_async(gateway.watches, lambda count: count == before)

    before, watching, after = asyncio.run(scenario())
    assert watching == before + 1 and after == before


def test_a_message_id_names_one_task_and_a_context_id_its_topic(gateway: Gateway) -> None:
    async def scenario() -> tuple[list[Task], list[str]]:
        async with gateway.client(streaming=False, polling=True) as client:
            request = ratify("adr-ctx", ["bob"])
            del request.message.metadata["topic"]
            request.message.context_id = "adr-ctx"  # the topic
            tasks = [(await anext(client.send_message(request))).task for _ in range(2)]  # sent again: the same task
            other_topic = SendMessageRequest()
            other_topic.CopyFrom(request)
            other_topic.message.context_id = "adr-other"
            follow_up = ratify("adr-ctx", ["bob"])
            follow_up.message.task_id = tasks[0].id
            refused = []
            for call, error in ((other_topic, InvalidParamsError), (follow_up, UnsupportedOperationError)):
                with pytest.raises(error) as raised:
                    await anext(client.send_message(call))
                refused.append(str(raised.value))
            return tasks, refused

    tasks, (other_topic, follow_up) = asyncio.run(scenario())
    assert tasks[0].id == tasks[1].id and tasks[0].context_id == "adr-ctx"
    assert "is the ratification of 'adr-ctx', not 'adr-other'" in other_topic
    assert "takes no messages" in follow_up


def test_errors_are_the_sdks_own(gateway: Gateway) -> None:
    async def scenario() -> list[str]:
        async with gateway.client() as client, gateway.client(streaming=False, polling=True) as sender:
            no_metadata = SendMessageRequest(message=Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text="hi")]))
            done = await anext(sender.send_message(ratify("adr-done", ["bob"])))
            await gateway.vote("bob", "adr-done")
            await until_state(client, done.task.id, TaskState.TASK_STATE_COMPLETED)
            refused = []
            for call, error in (
                (client.get_task(GetTaskRequest(id="nope")), TaskNotFoundError),
                (anext(client.send_message(no_metadata)), InvalidParamsError),
                (anext(client.subscribe(SubscribeToTaskRequest(id=done.task.id))), UnsupportedOperationError),
            ):
                with pytest.raises(error) as raised:
                    await call
                refused.append(str(raised.value))
            return refused

    not_found, invalid, terminal = asyncio.run(scenario())
    assert "'nope' not found" in not_found
    assert 'params.metadata.athenaeum_mode must be "ratify"' in invalid
    assert "is completed" in terminal


def test_a_version_not_spoken_is_refused_with_the_specs_error(gateway: Gateway) -> None:
    get = {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "t-1"}}
    answer = httpx.post(f"{gateway.url}/a2a", json=get, headers={"A2A-Version": "0.5"}).json()
    refused = answer["error"]
    assert answer["id"] == 3  # JSON-RPC: the request's id, which could be read
    assert refused["code"] == -32009 and refused["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert refused["data"][0]["metadata"] == {"requested": "0.5", "supported": "1.0, 0.3"}
    unversioned = httpx.post(f"{gateway.url}/a2a", json=get).json()["error"]  # no header is 0.3 (A2A 1.0 §3.6.2)
    assert unversioned["code"] == -32009 and "A2A-Version: 1.0" in unversioned["message"]
    for unreadable in (b"not json", b"[1]"):  # no id to answer with, and the version still the first refusal
        answer = httpx.post(f"{gateway.url}/a2a", content=unreadable, headers={"A2A-Version": "0.5"}).json()
        assert answer["id"] is None and answer["error"]["code"] == -32009, answer
    deep = b'{"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    nested = httpx.post(f"{gateway.url}/a2a", content=deep,
                        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {gateway.token}"})
    assert nested.status_code == 200 and nested.json()["error"]["code"] == -32600, nested.text
    legacy = {"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"id": "t-1"}}
    assert httpx.post(f"{gateway.url}/a2a", json=legacy, headers={"A2A-Version": "1.0"}).json()["error"]["code"] == -32009
    assert httpx.post(f"{gateway.url}/a2a", json=legacy, headers={"A2A-Version": "0.3"}).json()["error"]["code"] == -32001

    async def from_a_later_a2a() -> None:
        async with gateway.client(headers={"A2A-Version": "2.0"}) as client:
            with pytest.raises(VersionNotSupportedError):
                await client.get_task(GetTaskRequest(id="t-1"))

    asyncio.run(from_a_later_a2a())


def test_an_idle_stream_says_it_is_alive_within_the_sdks_read_timeout(gateway: Gateway) -> None:
    params = MessageToDict(ratify("adr-idle", ["bob"])) | {"configuration": {"returnImmediately": True}}
    opened = httpx.post(f"{gateway.url}/a2a", headers={"A2A-Version": "1.0", "Authorization": f"Bearer {gateway.token}"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params})
    task_id = opened.json()["result"]["task"]["id"]
    subscribe = {"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task_id}}
    lines: list[str] = []
    # No vote comes: past the first event only keep-alives arrive, each before a read times out.
    with httpx.stream("POST", f"{gateway.url}/a2a", json=subscribe, headers={"A2A-Version": "1.0"},
                      timeout=SDK_READ_TIMEOUT) as stream:
        for line in stream.iter_lines():
            lines.append(line)
            if sum(seen.startswith(":") for seen in lines) == 2:
                break
    first = json.loads(next(line for line in lines if line.startswith("data:")).removeprefix("data:"))
    assert first["result"]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert [line for line in lines if line.startswith(":")] == [": keep-alive"] * 2
