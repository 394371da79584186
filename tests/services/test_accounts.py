"""NATS itself authenticates and authorizes (DESIGN.md §11), driven as an attacker holding a
registered agent's key would, against a default ``athenaeum serve``: nothing reaches the
ledger's streams, and the ledger does not change."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time

import nats
import nats.errors
import pytest
from nats.aio.client import Client

from athenaeum.services.identity.accounts import AUDITOR_KEY
from athenaeum.events.fleet_commands import RotateKey
from athenaeum.services.client import AthenaeumClient, NotPermitted
from athenaeum.services.commands.routes import BY_COMMAND
from athenaeum.services.commands.service import TOKEN_SUBJECT
from athenaeum.services.identity.keys import inbox_prefix, key_pair, public_key, read_key
from athenaeum.services.views.bucket import bucket_of
from tests.services.conftest import ATHENAEUM, Served, until
from tests.services.test_identity import TEXT, _sha, fleet, lines

STREAM = "ATHENAEUM"


async def connect(served: Served, seed: str | None) -> Client:
    """A connection with ``seed``, its replies to the inbox its key names, as Athenaeum's clients do."""
    prefix = inbox_prefix(public_key(key_pair(seed))) if seed else "_INBOX"
    return await nats.connect(served.url, nkeys_seed_str=seed, allow_reconnect=False, connect_timeout=5,
                              inbox_prefix=prefix)


async def answer(nc: Client, subject: str) -> bytes | None:
    """What the server answers a request on ``subject``: nothing, when it may not be sent."""
    try:
        return (await nc.request(subject, json.dumps({"name": STREAM, "seq": 1}).encode(), timeout=1)).data
    except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
        return None


def seed_of(served: Served, name: str) -> str:
    return read_key(served.enrol(name)).seed.decode()


def test_a_connection_without_a_key_or_with_an_unregistered_one_is_refused(served: Served) -> None:
    async def attempt(seed: str | None) -> str:
        try:
            await connect(served, seed)
        except nats.errors.Error as error:
            return str(error)
        return "connected"

    assert "Authorization Violation" in asyncio.run(attempt(None))
    made = subprocess.run([*ATHENAEUM, "key", "new", "mallory", "--data-dir", str(served.data_dir)], capture_output=True)
    assert made.returncode == 0, made.stderr
    assert "Authorization Violation" in asyncio.run(attempt(seed_of(served, "mallory")))
    done = served.run("check", actor="mallory")  # the CLI says so in a line
    assert done.returncode == 3 and "admits only keys its roster binds" in done.stderr, done.stderr


def test_an_agents_key_reaches_no_stream_and_the_ledger_does_not_change(ledger: Served) -> None:
    fleet(ledger)
    assert ledger.run("ratify", "init", "adr-30", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    before = lines(ledger)

    async def attack() -> tuple[list[str], list[str]]:
        nc = await connect(ledger, seed_of(ledger, "alice"))
        seen: list[str] = []

        async def spy(msg: nats.aio.msg.Msg) -> None:
            seen.append(msg.subject)

        await nc.subscribe(">", cb=spy)  # everything: raw events, others' requests and replies, blind votes
        await nc.subscribe("athenaeum.cmd.>", cb=spy)
        await nc.publish(f"{STREAM}.ev.s.adr-30", b'{"forged": true}', headers={"Nats-Msg-Id": "x"})
        answers = [await answer(nc, subject) for subject in (
            f"$JS.API.STREAM.DELETE.{STREAM}", f"$JS.API.STREAM.PURGE.{STREAM}", f"$JS.API.STREAM.UPDATE.{STREAM}",
            f"$JS.API.STREAM.INFO.{STREAM}", f"$JS.API.STREAM.DELETE.KV_{bucket_of(STREAM)}",
            f"$JS.API.DIRECT.GET.{STREAM}", f"$JS.API.STREAM.MSG.GET.{STREAM}",
            TOKEN_SUBJECT)]  # the gateway's: whether a token is issued is not an agent's to ask
        await nc.flush()
        # Bob votes while alice listens: she must not see how.
        vote = await asyncio.to_thread(ledger.run, "ratify", "vote", "adr-30", "--sha256", _sha(), "--sign", actor="bob")
        assert vote.returncode == 0, vote.stderr
        await nc.flush()
        await nc.close()
        return seen, answers

    seen, answers = asyncio.run(attack())
    assert answers == [None] * 8  # none of it may even be sent
    assert seen == []
    assert lines(ledger) == before + 1  # bob's vote, nothing else
    done = ledger.run("audit", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["summary"]["HARD"] == 0, done.stdout


def test_an_agent_watches_the_views_bucket_and_cannot_write_it(served: Served) -> None:
    async def watch() -> tuple[list[str], str]:
        nc = await connect(served, seed_of(served, "alice"))
        changed: list[str] = []

        async def seen(msg: nats.aio.msg.Msg) -> None:
            changed.append(msg.subject)

        await nc.subscribe(f"$KV.{bucket_of(STREAM)}.>", cb=seen)
        await nc.flush()
        await asyncio.to_thread(served.run, "ratify", "init", "adr-31", "--roster", "alice,bob", "--text", TEXT)
        await asyncio.to_thread(until, lambda: list(changed), bool)
        deleted = await answer(nc, f"$JS.API.STREAM.MSG.DELETE.KV_{bucket_of(STREAM)}")
        put = await answer(nc, f"$KV.{bucket_of(STREAM)}.ratifications.adr-31")
        await nc.close()
        return changed, [deleted, put]

    changed, refused = asyncio.run(watch())
    assert any("adr-31" in subject for subject in changed), changed
    assert refused == [None, None]


def test_the_auditor_reads_the_ledger_and_cannot_change_it(ledger: Served) -> None:
    fleet(ledger)
    assert ledger.run("ratify", "init", "adr-30", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    before = lines(ledger)
    seed = read_key(ledger.data_dir / "nats" / AUDITOR_KEY).seed.decode()

    async def attempt() -> list[str]:
        nc = await connect(ledger, seed)
        js, refused = nc.jetstream(), []
        assert (await js.stream_info(STREAM)).state.messages > 0  # it reads
        for change in (js.delete_stream(STREAM), js.purge_stream(STREAM), js.publish(f"{STREAM}.ev.s.adr-30", b"{}")):
            try:
                await asyncio.wait_for(change, 3)
                refused.append("done")
            except (nats.errors.Error, asyncio.TimeoutError) as error:
                refused.append(type(error).__name__)
        await nc.close()
        return refused

    assert "done" not in asyncio.run(attempt())
    assert lines(ledger) == before


def test_a_revoked_key_is_disconnected(served: Served) -> None:
    fleet(served)
    assert served.run("agent", "revoke", "bob", actor="ada").returncode == 0

    async def attempt() -> str:
        try:
            await (await connect(served, seed_of(served, "bob"))).close()
        except nats.errors.Error as error:
            return str(error)
        return "connected"

    assert "Authorization Violation" in until(lambda: asyncio.run(attempt()), lambda said: said != "connected")



def test_a_key_the_server_could_not_take_is_refused_or_left_out_and_admission_goes_on(served: Served) -> None:
    service = public_key(read_key(served.service_key))
    alice = served.enrol("alice")

    async def rotate(key: str) -> tuple[bool, str | None]:
        client = await AthenaeumClient.connect(served.url, "alice", seed=alice)
        reply = await client.send(RotateKey(name="alice", public_key=key))
        await client.close()
        return reply.ok, reply.error.field if reply.error else None

    assert asyncio.run(rotate("U" + "A" * 55)) == (False, "public_key")  # its checksum is wrong
    assert asyncio.run(rotate(service)) == (True, None)  # a user's key, but the services': never admitted as an agent
    done = served.run("check", actor="bob")  # the server still takes new principals
    assert done.returncode == 0, done.stderr
    assert f'"{service}"' not in (served.data_dir / "nats" / "nats-server.conf").read_text().split('"AGENTS"')[1]


def test_the_auditor_sees_no_reply_but_its_own_and_makes_no_consumer(served: Served) -> None:
    seed = read_key(served.data_dir / "nats" / AUDITOR_KEY).seed.decode()

    async def attempt() -> tuple[list[str], bytes | None]:
        nc = await connect(served, seed)
        seen: list[str] = []

        async def spy(msg: nats.aio.msg.Msg) -> None:
            seen.append(msg.subject)

        await nc.subscribe("_INBOX.>", cb=spy)
        await nc.flush()
        await asyncio.to_thread(served.run, "ratify", "init", "adr-35", "--roster", "alice", "--text", TEXT)
        made = await answer(nc, f"$JS.API.CONSUMER.CREATE.{STREAM}")
        await nc.close()
        return seen, made

    seen, made = asyncio.run(attempt())
    assert seen == [] and made is None


def test_a_command_sent_with_the_auditors_key_is_refused_at_once_naming_the_missing_permission(served: Served) -> None:
    auditor = str(served.data_dir / "nats" / AUDITOR_KEY)
    done = served.run("ratify", "init", "adr-36", "--roster", "alice", "--text", TEXT, "--key", auditor, "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "not_permitted" and "no permission to publish" in error["message"], error
    assert "athenaeum.cmd.ratification.init" in error["message"] and "no reply" not in error["message"]
    said = served.run("quorum", "propose", "--text", "Adopt", "--electorate", "alice", "--threshold", "1",
                      "--key", auditor)
    assert said.returncode == 1 and said.stderr.startswith("athenaeum: Athenaeum's NATS refused it"), said.stderr
    shown = served.run("ratify", "show", "adr-36", "--json")
    assert shown.returncode == 1 and "not_found" in shown.stdout  # nothing written

    async def refused_then_queried() -> tuple[str, float, bool]:  # the connection outlives a refused publish
        client = await AthenaeumClient.connect(served.url, "", seed=auditor)
        started = time.monotonic()
        with pytest.raises(NotPermitted) as refused:
            await client.send(RotateKey(name="alice", public_key="U" + "A" * 55))
        elapsed = time.monotonic() - started
        answer = await client.query("ratification.show", topic="adr-36")
        await client.close()
        return refused.value.subject, elapsed, answer["ok"]

    subject, elapsed, found = asyncio.run(refused_then_queried())
    assert subject == BY_COMMAND[RotateKey].subject
    assert elapsed < 5, elapsed  # the client's timeout is 10 s: the server's refusal was not waited out
    assert not found  # answered (not_found), not a lost connection
