"""``athenaeum serve`` and the ratify verbs, driven as a user drives them."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from athenaeum.events.quorum_commands import ProposeQuorum
from athenaeum.services.cli.main import main
from athenaeum.services.client import AthenaeumClient, SyncClient, Unreachable
from athenaeum.services.runtime.nats_server import process_running
from athenaeum.services.views.bucket_entries import POSITION
from tests.postgres import in_database
from tests.services.conftest import ATHENAEUM, Served, until

TEXT = "# ADR 3\nUse the ledger.\n"
SHA = hashlib.sha256(TEXT.encode()).hexdigest()


def test_serve_announces_itself_and_records_where_it_listens(served: Served) -> None:
    assert served.ready_line.startswith("athenaeum ready nats=nats://127.0.0.1:")
    recorded = json.loads((served.data_dir / "serve.json").read_text())
    assert served.ready_line.split() == ["athenaeum", "ready", f"nats={recorded['nats']}", f"http={recorded['http']}"]


def test_a_ratification_through_the_cli(served: Served) -> None:
    opened = served.run("ratify", "init", "adr-3", "--roster", "alice,bob", "--text", TEXT, "--json")
    assert opened.returncode == 0, opened.stderr
    assert json.loads(opened.stdout)["artifact_sha256"] == SHA
    assert served.run("ratify", "vote", "adr-3", "--sha256", SHA, "--sign").returncode == 0
    last = served.run("ratify", "vote", "adr-3", "--sha256", SHA, "--sign", "--json", actor="bob")
    assert [e["type"] for e in json.loads(last.stdout)["events"]][-1] == "ArtifactRatified"


def test_a_command_sent_again_with_its_command_id_applies_once_and_answers_as_it_first_did(served: Served) -> None:
    """What the CLI says to do after a lost reply or Ctrl-C: run it again with --command-id."""
    create = ("task", "create", "--title", "T", "--project", "p", "--command-id", "create-t", "--json")
    first, again = served.run(*create, actor="ops"), served.run(*create, actor="ops")
    assert first.returncode == again.returncode == 0, first.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)  # the same task, at the same position
    assert served.run("export").stdout.count('"tag":"TaskCreated"') == 1
    reading = served.run("check", "--command-id", "x")
    assert reading.returncode == 2 and "--command-id" in reading.stderr
    empty = served.run("task", "create", "--title", "T", "--project", "p", "--command-id", "", actor="ops")
    assert empty.returncode == 2 and "--command-id: empty" in empty.stderr
    token = served.run("agent", "token", "ops", "--command-id", "t-1", actor="ops")  # a new token each run
    assert token.returncode == 2 and "no run sends this one again" in token.stderr


def test_ctrl_c_once_the_command_went_names_its_id_whenever_it_comes(served: Served, monkeypatch, capsys) -> None:
    """Ctrl-C as the connection closes, the command applied: the line still names its id."""
    served.enrol("ops")
    close = SyncClient.close

    def interrupted(client: SyncClient) -> None:
        close(client)
        raise KeyboardInterrupt

    monkeypatch.setattr(SyncClient, "close", interrupted)
    monkeypatch.delenv("ATHENAEUM_NATS_URL", raising=False)
    code = main(["task", "create", "--title", "T", "--project", "p", "--command-id", "late-t", "--as", "ops",
                 "--data-dir", str(served.data_dir)])
    assert code == 130 and "run it again with --command-id late-t" in capsys.readouterr().err


def test_rejections_exit_one_with_the_error_object(served: Served) -> None:
    served.run("ratify", "init", "adr-4", "--roster", "alice", "--text", TEXT)
    refused = served.run("ratify", "vote", "adr-4", "--sha256", "0" * 64, "--sign", "--json")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"]["code"] == "sha_mismatch"
    early = served.run("ratify", "decide", "adr-4", "--decision", "reject", actor="ada")
    assert early.returncode == 1 and early.stderr.startswith("rejected: not_pending_human") and early.stdout == ""
    served.run("ratify", "vote", "adr-4", "--sha256", SHA, "--dissent", "--atom", "A::b::c")
    plain = served.run("ratify", "decide", "adr-4", "--decision", "reject", actor="bob")
    assert plain.returncode == 1 and plain.stderr.startswith("rejected: not_human")


def test_bad_arguments_exit_two_and_send_nothing(served: Served) -> None:
    bad = served.run("ratify", "vote", "adr-5", "--sha256", SHA, "--dissent", "--atom", "no separators")
    assert bad.returncode == 2 and "SECTION::ANCHOR::OBJECTION" in bad.stderr
    now = served.run("ratify", "init", "adr-5", "--roster", "alice", "--text", TEXT, "--expires-in", "0s", "--json")
    assert now.returncode == 2 and "--expires-in: '0s' is not a duration above zero" in json.loads(now.stdout)["error"]["message"]
    stranger = served.run("ratify", "init", "adr-5", "--roster", "alice", "--text", TEXT, actor="Not A Slug")
    assert stranger.returncode == 2 and "'Not A Slug' is not an agent's name" in stranger.stderr
    assert served.run("ratify", "show", "adr-5").returncode == 1  # nothing was sent


def test_reading_needs_no_identity_but_check_and_commands_do(served: Served) -> None:
    served.run("ratify", "init", "adr-4", "--roster", "alice", "--text", TEXT)
    env = {k: v for k, v in os.environ.items() if k not in ("ATHENAEUM_AGENT", "ATHENAEUM_NATS_URL")}

    def anonymous(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*ATHENAEUM, *args, "--data-dir", str(served.data_dir)],
                              capture_output=True, text=True, timeout=60, env=env)

    shown = anonymous("ratify", "show", "adr-4", "--render", "manifest")
    assert shown.returncode == 0 and "topic: adr-4" in shown.stdout
    for needs_one in (("check",), ("ratify", "cancel", "adr-4")):
        refused = anonymous(*needs_one)
        assert refused.returncode == 2 and "--as AGENT" in refused.stderr


def test_one_serve_per_data_dir_and_one_killed_outright_leaves_no_server_behind(served: Served) -> None:
    second = subprocess.run([*ATHENAEUM, "serve", "--data-dir", str(served.data_dir)],
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 2 and "already runs on" in second.stderr
    served.run("ratify", "init", "adr-3", "--roster", "alice", "--text", TEXT)
    orphan = int((served.data_dir / "nats" / "nats-server.pid").read_text())
    served.process.kill()
    served.process.wait(timeout=30)
    again = Served(served.data_dir)
    try:
        assert again.ready_line.startswith("athenaeum ready")
        assert not process_running(orphan)
        assert "adr-3" in again.run("ratify", "show", "adr-3").stdout
    finally:
        again.stop()


def test_an_unreachable_server_exits_three(tmp_path: Path) -> None:
    done = subprocess.run(
        [*ATHENAEUM, "ratify", "cancel", "x", "--nats", "nats://127.0.0.1:1", "--as", "a", "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 3 and "cannot reach" in done.stderr


def test_serve_refuses_bad_options_in_one_line_before_starting_anything(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    cases = {
        ("--humans", "ada,Not A Slug"): "--humans: 'Not A Slug' is not an agent's name",
        ("--read-models", "mysql://x"): "neither postgresql://... nor a file path",
        ("--data-dir", str(tmp_path / "a-file")): "is not a directory",
        ("--services", "commands"): "commands and timer read the views a projector keeps",
    }
    for options, message in cases.items():
        done = subprocess.run([*ATHENAEUM, "serve", "--no-http", "--data-dir", str(tmp_path / "home"), *options],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "home" / "nats").exists()


def test_serve_refuses_a_new_ledger_without_humans_in_one_line_saying_how(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATHENAEUM_")}  # no $ATHENAEUM_HUMANS either
    done = subprocess.run([*ATHENAEUM, "serve", "--no-http", "--data-dir", str(tmp_path / "home")],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("athenaeum: a new ledger needs its humans") and "--humans NAME[,NAME]" in line, line
    assert not (tmp_path / "home").exists()  # refused before anything started: no server's files, no lock, no views


def test_a_restart_on_the_same_data_dir_keeps_all_history(served: Served) -> None:
    served.run("ratify", "init", "adr-6", "--roster", "alice,bob", "--text", TEXT)
    assert served.stop() == 0 and not (served.data_dir / "serve.json").exists()
    again = Served(served.data_dir)
    try:
        assert again.run("ratify", "vote", "adr-6", "--sha256", SHA, "--sign").returncode == 0
        repeat = again.run("ratify", "init", "adr-6", "--roster", "alice", "--text", TEXT, "--json")
        assert json.loads(repeat.stdout)["error"]["code"] == "already_exists"
    finally:
        again.stop()


def test_a_client_reads_its_own_writes_and_sees_what_waits_on_it(served: Served) -> None:
    opened = json.loads(served.run("ratify", "init", "adr-7", "--roster", "alice,bob", "--text", TEXT, "--json").stdout)
    after = str(opened["position"])
    waiting = json.loads(served.run("check", "--after", after, "--json", actor="bob").stdout)
    assert waiting == {"agent": "bob", "total": 1, "items": [
        {"kind": "ratification", "id": "adr-7", "action": "vote", "deadline": opened["expires_at"], "sha256": SHA}
    ]}
    voted = json.loads(served.run("ratify", "vote", "adr-7", "--sha256", SHA, "--sign", "--json", actor="bob").stdout)
    shown = json.loads(served.run("ratify", "show", "adr-7", "--after", str(voted["position"]), "--json").stdout)
    assert shown["status"] == "open" and shown["voted"] == ["bob"] and "SIGN" not in json.dumps(shown)
    missing = served.run("ratify", "show", "adr-404", "--json")
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"]["code"] == "not_found"


def test_check_drops_a_vote_whose_deadline_passed_before_the_timer_closes_it(tmp_path: Path) -> None:
    without_timer = Served(tmp_path / "home", "--services", "commands,projector,http")
    try:
        without_timer.enrol("bob")  # beforehand: the window below holds one command line, not three
        # A window a loaded machine's command line fits in (one took 4 s in a suite run beside others).
        window = 15
        opened = without_timer.run("ratify", "init", "adr-9", "--roster", "alice,bob", "--text", TEXT,
                                   "--expires-in", f"{window}s", "--json")
        before = without_timer.run("check", "--after", str(json.loads(opened.stdout)["position"]), "--json", actor="bob")
        assert [item["action"] for item in json.loads(before.stdout)["items"]] == ["vote"]
        items = until(lambda: json.loads(without_timer.run("check", "--json", actor="bob").stdout)["items"],
                      lambda items: items == [], timeout=window + 20)
        assert items == []
        shown = json.loads(without_timer.run("ratify", "show", "adr-9", "--json").stdout)
        assert shown["status"] == "open"  # nothing recorded the close: only the clock says so
    finally:
        without_timer.stop()


def test_a_ratification_expires_by_a_real_schedule_with_abstentions(served: Served) -> None:
    # The window leaves room for alice's vote, a process of its own, on a busy machine.
    served.run("ratify", "init", "adr-8", "--roster", "alice,bob", "--text", TEXT, "--expires-in", "10s")
    voted = served.run("ratify", "vote", "adr-8", "--sha256", SHA, "--sign")
    assert voted.returncode == 0, voted.stdout + voted.stderr
    deadline = time.monotonic() + 30
    while True:
        shown = json.loads(served.run("ratify", "show", "adr-8", "--json").stdout)
        if shown["status"] != "open" or time.monotonic() > deadline:
            break
        time.sleep(0.2)  # poll interval of a bounded wait for the timer to fire
    assert shown["status"] == "pending-human"
    assert shown["tally"]["abstentions"] == ["bob"] and shown["tally"]["signs"] == ["alice"]


def test_a_deadline_that_passed_while_serve_was_down_is_kept_after_restart(served: Served) -> None:
    served.run("ratify", "init", "adr-9", "--roster", "alice,bob", "--text", TEXT, "--expires-in", "2s")
    opened_at = time.monotonic()
    served.stop()
    while time.monotonic() - opened_at < 3:
        time.sleep(0.1)  # let the deadline pass while nothing runs
    again = Served(served.data_dir)
    try:
        deadline = time.monotonic() + 20
        while True:
            shown = json.loads(again.run("ratify", "show", "adr-9", "--json").stdout)
            if shown["status"] != "open" or time.monotonic() > deadline:
                break
            time.sleep(0.2)  # poll interval of a bounded wait for the overdue timer
        assert shown["status"] == "pending-human" and shown["tally"]["abstentions"] == ["alice", "bob"]
    finally:
        again.stop()


def test_every_view_change_lands_in_the_kv_bucket_without_revealing_votes(served: Served) -> None:
    import asyncio

    import nats

    opened = json.loads(served.run("ratify", "init", "adr-10", "--roster", "alice,bob", "--text", TEXT, "--json").stdout)
    voted = json.loads(served.run("ratify", "vote", "adr-10", "--sha256", SHA, "--sign", "--json").stdout)

    async def read() -> tuple[dict, dict]:
        """The keys once the status reflects the vote: the bucket is written after the views,
        each position's changes after those of the one before."""
        nc = await nats.connect(served.url, nkeys_seed=str(served.service_key))  # a tool of the services
        js = nc.jetstream()
        kv = await js.key_value("athenaeum-views")
        deadline = time.monotonic() + 20
        while True:
            stored = await js.get_last_msg("KV_athenaeum-views", "$KV.athenaeum-views.ratifications.adr-10")
            if int((stored.headers or {}).get(POSITION, 0)) >= voted["position"] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)  # poll interval of a bounded wait
        status, bob = await kv.get("ratifications.adr-10"), await kv.get("pending.bob")
        await nc.close()
        return json.loads(status.value), json.loads(bob.value)

    status, bob = asyncio.run(read())
    assert status["voted"] == ["alice"] and "SIGN" not in json.dumps(status)
    assert bob["items"][0]["id"] == "adr-10" and opened["ok"]


def test_the_demo_shows_ratifications_a_quorum_and_a_page_becoming_canon(tmp_path: Path) -> None:
    done = subprocess.run([*ATHENAEUM, "demo"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "**Grain-gate:** all-SIGN" in done.stdout
    assert "accepted (threshold-reached): ACK claude-code, gemini; NACK codex" in done.stdout
    assert "**Grain-gate:** human-decision: rewrite-with-caveats" in done.stdout
    assert "CONVERGE: human-decision: rewrite-with-caveats" in done.stdout
    assert "- proposed_crystallization: canon/retention.md: The retention rule" in done.stdout
    consensus = done.stdout.split("===== canon/retention.md: consensus =====\n")[1].splitlines()
    assert consensus[:3] == ["rev: v1", "lifecycle: canonical", "consensus:"]
    assert consensus[4].startswith('  codex: "contributed | ')


def test_fast_mode_rejects_on_a_dissent(served: Served) -> None:
    served.run("ratify", "init", "adr-11", "--roster", "alice", "--text", TEXT, "--mode", "fast")
    done = json.loads(served.run("ratify", "vote", "adr-11", "--sha256", SHA, "--dissent", "--atom", "A::b::c", "--json").stdout)
    assert [e["type"] for e in done["events"]][-1] == "RatificationRejected"


def test_decompose_further_then_split_then_a_decision(served: Served) -> None:
    served.run("ratify", "init", "adr-12", "--roster", "alice,bob", "--text", TEXT)
    served.run("ratify", "vote", "adr-12", "--sha256", SHA, "--sign")
    served.run("ratify", "vote", "adr-12", "--sha256", SHA, "--dissent", "--atom", "Scope::ledger::vague", actor="bob")
    further = served.run("ratify", "decide", "adr-12", "--decision", "decompose-further", "--atom", "A1", actor="ada")
    assert further.returncode == 0, further.stdout
    split = served.run("ratify", "split", "adr-12", "--atom", "A1", "--into", "Scope::ledger::which one",
                       "--into", "Scope::use::when", "--json")
    assert [a["id"] for a in json.loads(split.stdout)["events"][0]["into"]] == ["A2", "A3"]
    accepted = served.run("ratify", "decide", "adr-12", "--decision", "accept-split", "--json", actor="ada")
    assert json.loads(accepted.stdout)["events"][-1]["path"] == "human-decision: accept-split"


def test_the_read_models_can_live_in_postgresql(tmp_path: Path, postgres_url: str) -> None:
    import uuid

    import psycopg

    url = postgres_url
    database = f"athenaeum_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    try:
        served = Served(tmp_path, "--read-models", in_database(url, database))
        assert served.ready_line.startswith("athenaeum ready")
        opened = json.loads(served.run("ratify", "init", "adr-13", "--roster", "bob", "--text", TEXT, "--json").stdout)
        waiting = json.loads(served.run("check", "--after", str(opened["position"]), "--json", actor="bob").stdout)
        assert waiting["items"][0]["id"] == "adr-13"
        assert served.stop() == 0
        with psycopg.connect(in_database(url, database)) as db:
            stored = db.execute("SELECT count(*) FROM athenaeum_views WHERE view = 'ratifications'").fetchone()
        assert stored == (1,)
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def test_serve_runs_against_a_three_node_cluster(nats_cluster, tmp_path: Path) -> None:
    urls = ",".join(nats_cluster.urls)
    env = os.environ | {"ATHENAEUM_HUMANS": "ada", "ATHENAEUM_REPLICAS": "3", "ATHENAEUM_STREAM": "CLUSTERED"}
    process = subprocess.Popen([*ATHENAEUM, "serve", "--no-http", "--nats", urls, "--data-dir", str(tmp_path)],
                               stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout.readline().startswith("athenaeum ready")
        done = subprocess.run(
            [*ATHENAEUM, "ratify", "init", "adr-14", "--roster", "bob", "--text", TEXT, "--json",
             "--nats", nats_cluster.urls[1], "--as", "alice", "--data-dir", str(tmp_path / "client")],
            capture_output=True, text=True, timeout=60,
        )
        assert json.loads(done.stdout)["ok"], done.stdout + done.stderr
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_a_client_carries_on_through_the_loss_of_its_cluster_node(nats_cluster, tmp_path: Path) -> None:
    urls = ",".join(nats_cluster.urls)
    env = os.environ | {"ATHENAEUM_REPLICAS": "3", "ATHENAEUM_STREAM": "FAILOVER"}
    process = subprocess.Popen([*ATHENAEUM, "serve", "--no-http", "--nats", urls, "--data-dir", str(tmp_path)],
                               stdout=subprocess.PIPE, text=True, env=env)

    async def through_a_node_loss() -> list[str]:
        async with await AthenaeumClient.connect(urls, "alice") as client:
            assert (await client.send(ProposeQuorum(text="a", electorate=["bob"], threshold=1))).ok
            lost = next(node for node in nats_cluster.nodes if node.port == client.nc.connected_url.port)
            lost.kill()
            try:
                codes = []
                command = ProposeQuorum(text="b", electorate=["bob"], threshold=1, command_id="after-the-loss")
                for _ in range(8):  # as a caller does: no answer, or "unavailable", says to send it again
                    try:
                        reply = await client.send(command)
                    except Unreachable:
                        codes.append("unreachable")
                        continue
                    codes.append("ok" if reply.ok else reply.error.code)
                    if reply.ok:
                        break
                return codes
            finally:
                lost.start()

    try:
        assert process.stdout.readline().startswith("athenaeum ready")
        codes = asyncio.run(through_a_node_loss())
        assert codes[-1] == "ok", codes
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_with_no_serve_and_no_url_the_cli_says_where_it_looked_and_tries_no_port(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATHENAEUM_")} | {"ATHENAEUM_HOME": str(tmp_path)}
    for verb in (("check", "--as", "alice"), ("ratify", "show", "adr-1"), ("audit",), ("export",)):
        done = subprocess.run([*ATHENAEUM, *verb], capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 3, (verb, done.stderr)
        assert str(tmp_path / "serve.json") in done.stderr and "athenaeum serve" in done.stderr and "--nats" in done.stderr
        assert "4222" not in done.stderr and "Traceback" not in done.stderr


def test_the_deployment_is_found_through_athenaeum_nats_too(served: Served, tmp_path: Path) -> None:
    served.run("ratify", "init", "adr-6", "--roster", "alice", "--text", TEXT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATHENAEUM_")}
    env |= {"ATHENAEUM_HOME": str(tmp_path / "elsewhere"), "ATHENAEUM_NATS": served.url}
    key = served.data_dir / "nats" / "auditor.nk"
    shown = subprocess.run([*ATHENAEUM, "ratify", "show", "adr-6", "--json", "--key", str(key), "--as", "alice"],
                           capture_output=True, text=True, timeout=60, env=env)
    assert shown.returncode == 0, shown.stderr
