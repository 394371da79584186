"""The ledger guards its own shape (DESIGN.md §13), driven against a default ``athenaeum serve``
as an operator holding the services' key would: a ledger cut, deleted or sealed stops serve
with one line, is never made again empty, and is HARD in ``audit``; a limit that dropped
nothing is lifted and serve runs on."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import nats
import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import Environment

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.families import fold_of
from athenaeum.aggregates.ratification import sha256_of
from athenaeum.aggregates.state import SNAPSHOT_TAG, Snapshot
from athenaeum.services.audit.checkpoints import Anchor, Anchors
from athenaeum.services.jetstream import JetStreamFactory
from athenaeum.services.jetstream.log import TOPIC
from athenaeum.services.jetstream.positions import VERSION
from athenaeum.services.runtime.ledger_shape import LedgerDrift, LedgerGuard
from athenaeum.services.runtime.nats_server import NatsServer
from athenaeum.services.runtime.serve import ServeOptions, embedded_server
from athenaeum.services.views.bucket import bucket_of
from athenaeum.services.views.projection import PROJECTION
from athenaeum.services.views.read_models import ReadModelStore
from tests.services.conftest import ATHENAEUM, Served, until
from tests.services.test_audit import TEXT, hard

STREAM = "ATHENAEUM"
REFUSED_WITHIN = 30  # seconds: serve checks at once when NATS announces a change


def some_history(served: Served) -> None:
    for name in ("alice", "bob"):
        served.enrol(name)
    assert served.run("ratify", "init", "adr-40", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    assert served.run("quorum", "propose", "--text", "x", "--electorate", "alice,bob", "--threshold", "2",
                      "--id", "0A1B2C3D").returncode == 0
    assert served.run("quorum", "ack", "0A1B2C3D", actor="alice").returncode == 0


def as_operator(url: str, key: Path, change: str, stream: str = STREAM, **config: object) -> dict:
    """``change`` a stream as ``nats stream edit|seal|rm`` would; its information after."""

    async def act() -> dict:
        nc = await nats.connect(url, nkeys_seed=str(key))
        try:
            info = json.loads((await nc.request(f"$JS.API.STREAM.INFO.{stream}", b"", timeout=5)).data)
            body = json.dumps(info["config"] | config).encode() if change == "UPDATE" else b""
            reply = json.loads((await nc.request(f"$JS.API.STREAM.{change}.{stream}", body, timeout=5)).data)
            assert "error" not in reply, reply
            return json.loads((await nc.request(f"$JS.API.STREAM.INFO.{stream}", b"", timeout=5)).data)
        finally:
            await nc.close()

    return asyncio.run(act())


def serve_again(data_dir: Path) -> subprocess.CompletedProcess[str]:
    """Start serve on ``data_dir`` again, expecting it to refuse at once."""
    env = os.environ | {"ATHENAEUM_HUMANS": "ada"}
    env.pop("ATHENAEUM_NATS_URL", None)
    return subprocess.run([*ATHENAEUM, "serve", "--data-dir", str(data_dir), "--http", "127.0.0.1:0"],
                          capture_output=True, text=True, timeout=60, env=env)


def refusal(done: subprocess.CompletedProcess[str]) -> str:
    """The one line serve refused with (exit 3)."""
    said = [line for line in done.stderr.splitlines() if line.startswith("athenaeum: ") and "key in" not in line]
    assert done.returncode == 3 and len(said) == 1 and "Traceback" not in done.stderr, done.stderr
    return said[0]


@contextmanager
def nats_alone(data_dir: Path) -> Iterator[NatsServer]:
    """The data dir's nats-server without serve: what an operator runs to inspect or repair."""
    server = embedded_server(ServeOptions(data_dir=data_dir)).start()
    try:
        yield server
    finally:
        server.stop()


def audited(data_dir: Path, url: str, *options: str) -> tuple[int, dict]:
    done = subprocess.run([*ATHENAEUM, "audit", "--json", "--data-dir", str(data_dir), "--nats", url, *options],
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_per_subject_limit_stops_serve_and_it_does_not_start_again(ledger: Served) -> None:
    some_history(ledger)
    as_operator(ledger.url, ledger.service_key, "UPDATE", max_msgs_per_subject=1)
    assert ledger.process.wait(timeout=REFUSED_WITHIN) == 3
    line = refusal(serve_again(ledger.data_dir))
    assert f"stream {STREAM} holds " in line and " gone" in line and "restore the stream from a backup" in line, line
    with nats_alone(ledger.data_dir) as server:
        code, report = audited(ledger.data_dir, server.url)
        config = as_operator(server.url, ledger.service_key, "INFO")["config"]
    assert config["max_msgs_per_subject"] == -1  # lifted, so nothing more is dropped
    assert code == 1 and "entries_missing" in [finding["code"] for finding in hard(report)], report


def test_a_ledger_deleted_while_serve_is_stopped_is_not_made_again_empty(ledger: Served) -> None:
    some_history(ledger)
    assert ledger.stop() == 0  # its last checkpoint is kept outside the ledger too
    with nats_alone(ledger.data_dir) as server:
        as_operator(server.url, ledger.service_key, "DELETE")
    line = refusal(serve_again(ledger.data_dir))
    assert line.startswith(f"athenaeum: there is no stream {STREAM}, but the anchor in ") and \
        "serve makes no empty ledger where one was" in line, line
    with nats_alone(ledger.data_dir) as server:

        async def made_again() -> None:  # as an older serve would have
            nc = await nats.connect(server.url, nkeys_seed=str(ledger.service_key))
            info = json.loads((await nc.request(f"$JS.API.STREAM.INFO.{STREAM}", b"", timeout=5)).data)
            assert info["error"]["err_code"] == 10059  # serve did not make it again
            await nc.request(f"$JS.API.STREAM.CREATE.{STREAM}", json.dumps(
                {"name": STREAM, "subjects": [f"{STREAM}.>"], "allow_atomic": True, "allow_direct": True,
                 "deny_delete": True, "deny_purge": True}).encode(), timeout=5)
            await nc.close()

        asyncio.run(made_again())
        code, report = audited(ledger.data_dir, server.url)
    assert code == 1 and [f["code"] for f in hard(report)][:1] == ["ledger_shorter"], report
    line = refusal(serve_again(ledger.data_dir))
    assert f"stream {STREAM} ends at position 0, before the checkpoint of its first " in line, line


def test_a_ledger_deleted_while_serve_runs_stops_it(ledger: Served) -> None:
    some_history(ledger)
    as_operator(ledger.url, ledger.service_key, "DELETE")
    assert ledger.process.wait(timeout=REFUSED_WITHIN) == 3
    assert f"there is no stream {STREAM}, but the anchor in " in refusal(serve_again(ledger.data_dir))


def test_a_sealed_ledger_stops_serve_with_a_line_not_503_forever(served: Served) -> None:
    some_history(served)
    as_operator(served.url, served.service_key, "UPDATE", sealed=True)
    assert served.process.wait(timeout=REFUSED_WITHIN) == 3
    line = refusal(serve_again(served.data_dir))
    assert line == (f"athenaeum: stream {STREAM} is sealed, and NATS cannot unseal a stream: nothing can be "
                    "appended to it"), line


@pytest.mark.parametrize("stream, change, made", [
    (STREAM, {"max_msgs": 100_000, "max_age": 3600 * 10**9}, {"max_msgs": -1, "max_age": 0}),
    (f"{STREAM}_SNAPSHOTS", {"max_bytes": 10**9, "subjects": ["elsewhere.>"]},
     {"max_bytes": -1, "subjects": [f"{STREAM}_SNAPSHOTS.>"]}),
    (f"KV_{bucket_of(STREAM)}", {"max_msgs_per_subject": 5, "discard": "old"}, {"max_msgs_per_subject": 1, "discard": "new"}),
])
def test_what_drops_nothing_is_set_back_and_serve_runs_on(served: Served, stream: str, change: dict, made: dict) -> None:
    some_history(served)  # serve made every stream at its start
    as_operator(served.url, served.service_key, "UPDATE", stream, **change)
    config = until(lambda: as_operator(served.url, served.service_key, "INFO", stream)["config"],
                   lambda config: all(config[option] == value for option, value in made.items()))
    assert {option: config[option] for option in made} == made
    assert served.process.poll() is None
    assert served.run("quorum", "ack", "0A1B2C3D", actor="bob").returncode == 0


def test_the_audit_checks_the_digests_an_auditor_kept(ledger: Served) -> None:
    some_history(ledger)
    lines = [json.loads(line) for line in ledger.run("export").stdout.splitlines()]
    position, digest = lines[-2]["position"], lines[-1]["end"]["sha256"]
    done = ledger.run("audit", "--json", "--expect", f"{position}:{digest}")
    assert done.returncode == 0, done.stdout
    done = ledger.run("audit", "--json", "--expect", f"{position}:{'0' * 64}", "--expect", f"{position + 100}:{digest}")
    assert done.returncode == 1
    assert [f["code"] for f in hard(json.loads(done.stdout))] == ["anchor_mismatch", "ledger_shorter"], done.stdout
    wrong = ledger.run("audit", "--expect", "12:abc")
    assert wrong.returncode == 2 and "--expect: '12:abc' is not POSITION:DIGEST" in wrong.stderr


def ledger_app(served: Served) -> AthenaeumApplication:
    """The event store as a tool of the services, with their key, takes snapshots."""
    return AthenaeumApplication(env={"PERSISTENCE_MODULE": "athenaeum.services.jetstream", "ATHENAEUM_NATS_URL": served.url,
                                     "ATHENAEUM_NATS_KEY": str(served.service_key), "IS_SNAPSHOTTING_ENABLED": "y"})


def publish(served: Served, subject: str, payload: bytes, headers: dict[str, str]) -> int:
    async def put() -> int:
        nc = await nats.connect(served.url, nkeys_seed=str(served.service_key))
        ack = json.loads((await nc.request(subject, payload, headers=headers, timeout=5)).data)
        await nc.close()
        return int(ack["seq"])

    return asyncio.run(put())


def test_a_forged_snapshot_changes_no_roster_and_the_audit_finds_it(ledger: Served) -> None:
    some_history(ledger)
    ledger.enrol("mallory")
    app = ledger_app(ledger)
    try:
        app.take_snapshot("adr-40", projector_func=fold_of("adr-40"))  # a genuine one: the audit passes it
        snapshots = app.snapshots.recorder.log  # type: ignore[union-attr]
        [genuine] = app.factory.connection.run(snapshots.history("adr-40"))  # type: ignore[attr-defined]
        state = app.repository.get("adr-40", projector_func=fold_of("adr-40"))
    finally:
        app.close()
    forged = Snapshot.take(msgspec.structs.replace(state, roster=(*state.roster, "mallory")))
    ours = {name: value for name, value in genuine.headers.items() if name.startswith("Athenaeum-")}
    publish(ledger, genuine.subject, msgspec.json.encode(forged), ours)  # on the snapshot stream, anchored as it was
    on_ledger = publish(ledger, f"{STREAM}.ev.s.adr-40", msgspec.json.encode(  # and as the ledger's next event
        msgspec.structs.replace(forged, originator_version=state.version + 1)),
        {TOPIC: SNAPSHOT_TAG, VERSION: str(state.version + 1)})
    refused = ledger.run("ratify", "vote", "adr-40", "--sha256", sha256_of(TEXT), "--sign", "--json", actor="mallory")
    assert refused.returncode == 1 and json.loads(refused.stdout)["error"]["code"] == "not_rostered", refused.stdout
    assert ledger.run("ratify", "vote", "adr-40", "--sha256", sha256_of(TEXT), "--sign", actor="bob").returncode == 0
    done = ledger.run("audit", "--json")
    found = [(f["code"], f["position"]) for f in hard(json.loads(done.stdout))]
    summarized = int(genuine.headers["Athenaeum-Event-Seq"])
    assert done.returncode == 1 and sorted(found) == [("snapshot_differs", summarized), ("unknown_tag", on_ledger)], found


def test_an_undecodable_message_on_an_aggregate_leaves_its_commands_working(ledger: Served) -> None:
    some_history(ledger)
    bad = publish(ledger, f"{STREAM}.ev.s.adr-40", b"\x00 not an event", {TOPIC: "VoteCast", VERSION: "2"})
    voted = ledger.run("ratify", "vote", "adr-40", "--sha256", sha256_of(TEXT), "--sign", "--json", actor="alice")
    assert voted.returncode == 0, voted.stdout + voted.stderr
    assert ledger.run("ratify", "vote", "adr-40", "--sha256", sha256_of(TEXT), "--sign", actor="bob").returncode == 0
    done = ledger.run("audit", "--json")
    assert done.returncode == 1 and [(f["code"], f["position"]) for f in hard(json.loads(done.stdout))] == [
        ("undecodable", bad)], done.stdout


class TestAgainstTheAnchor:
    """The guard alone, on a ledger of its own: what it compares with what is kept outside."""

    @pytest.fixture
    def kept(self, store_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, Anchors, ReadModelStore]]:
        stream = store_env["ATHENAEUM_STREAM"]
        with JetStreamFactory(Environment(env=store_env)) as factory:
            factory.application_recorder().insert_events(
                [StoredEvent("page", version, "Tested", b"{}") for version in (1, 2, 3)])
        store = ReadModelStore(str(tmp_path / "views.sqlite"))
        yield stream, Anchors(stream, tmp_path, store), store
        store.close()

    def check(self, url: str, stream: str, anchors: Anchors, store: ReadModelStore) -> None:
        async def checked() -> None:
            guard = await LedgerGuard.open([url], None, stream, 1, anchors, store)
            try:
                await guard.check()
            finally:
                await guard.close()

        asyncio.run(checked())

    def test_another_message_where_the_anchor_says_its_checkpoint_is(self, nats_server, kept) -> None:
        stream, anchors, store = kept
        anchors.keep(Anchor(ledger=stream, count=2, position=2, sha256="0" * 64, checkpoint=3))
        with pytest.raises(LedgerDrift, match=f"stream {stream} does not hold at position 3 the checkpoint "
                                              f"\\(digest 0{{64}}\\) that the anchor in {anchors.file} records"):
            self.check(nats_server.url, stream, anchors, store)

    def test_read_models_ahead_of_the_ledger(self, nats_server, kept) -> None:
        stream, anchors, store = kept
        store.apply(PROJECTION, 7, [])
        with pytest.raises(LedgerDrift, match=f"the read models reflect position 7 of stream {stream}, which ends at 3"):
            self.check(nats_server.url, stream, anchors, store)

    def test_the_furthest_anchor_counts_and_one_that_cannot_be_read_is_no_pass(self, nats_server, kept) -> None:
        stream, anchors, store = kept
        store.keep_anchor(stream, 9, msgspec.json.encode(
            Anchor(ledger=stream, count=9, position=9, sha256="1" * 64, checkpoint=10)).decode())
        with pytest.raises(LedgerDrift, match="ends at position 3, before the checkpoint of its first 9 entries at "
                                              "position 10 that the anchor in the read models at "
                                              ".*views.sqlite records"):
            self.check(nats_server.url, stream, anchors, store)
        assert anchors.file is not None
        anchors.file.parent.mkdir(parents=True, exist_ok=True)
        anchors.file.write_text("{not json")
        with pytest.raises(LedgerDrift, match=f"the ledger's anchor in {anchors.file} cannot be read"):
            self.check(nats_server.url, stream, anchors, store)
