"""The command line keeps the conventions of ``git`` and ``gh``: results on stdout, the rest on
stderr, one JSON object with ``--json`` whatever happens, a verb's own usage on a usage error,
help with an example, completion, and no traceback when a reader stops early."""

from __future__ import annotations

import importlib.abc
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from athenaeum.aggregates.ratification import sha256_of
from athenaeum.events.ratification_commands import CastVote
from athenaeum.services.cli import entry
from athenaeum.services.cli.examples import EXAMPLES
from athenaeum.services.cli.main import SHELLS, build_parser
from athenaeum.services.cli.parser import verb_parsers
from athenaeum.services.client import SyncClient
from tests.services.conftest import ATHENAEUM, Served

TEXT = "# ADR\n"


def athenaeum(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATHENAEUM_")} | {"ATHENAEUM_HOME": str(home)}
    return subprocess.run([*ATHENAEUM, *args], capture_output=True, text=True, timeout=60, env=env)


def test_every_verb_says_what_it_does_with_an_example() -> None:
    verbs = dict(verb_parsers(build_parser()))
    assert set(verbs) == set(EXAMPLES), "a verb without an example, or an example of no verb"
    for words, parser in verbs.items():
        assert parser.description, words
        assert EXAMPLES[words].startswith("athenaeum " + " ".join(words)), words
        assert EXAMPLES[words] in parser.format_help(), words


def test_a_usage_error_shows_the_verbs_own_usage(tmp_path: Path) -> None:
    unknown = athenaeum("ratify", "vote", "adr-1", "--sha256", "x", "--sign", "--colour", "red", home=tmp_path)
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.startswith("usage: athenaeum ratify vote") and "unrecognized arguments: --colour" in unknown.stderr
    missing = athenaeum("quorum", "ack", home=tmp_path)
    assert missing.returncode == 2 and missing.stderr.startswith("usage: athenaeum quorum ack")


@pytest.mark.parametrize(("args", "code"), [
    (("ratify", "vote", "adr-1", "--colour", "--json"), 2),   # usage
    (("check", "--as", "Not A Slug", "--json"), 2),           # usage, found after parsing
    (("check", "--as", "bob", "--json"), 3),                  # nothing to talk to
    (("audit", "--json"), 3),
])
def test_with_json_every_outcome_is_one_json_object_on_stdout(tmp_path: Path, args: tuple[str, ...], code: int) -> None:
    done = athenaeum(*args, home=tmp_path)
    assert done.returncode == code, done.stderr
    answer = json.loads(done.stdout)
    assert answer["ok"] is False and answer["error"]["code"] == {2: "usage", 3: "unavailable"}[code]
    assert answer["error"]["message"] and done.stdout.count("\n") == 1


@pytest.mark.parametrize("args", [("export", "--as", "alice"), ("export", "--json"), ("audit", "--as", "alice"),
                                  ("verify-export", "x.jsonl", "--nats", "nats://x"), ("replay", "--until", "1", "--out", "x", "--key", "k")])
def test_options_that_mean_nothing_to_a_verb_are_refused(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = athenaeum(*args, home=tmp_path)
    assert done.returncode == 2 and "unrecognized arguments" in done.stderr + done.stdout


@pytest.mark.parametrize("shell", SHELLS)
def test_completion_code_for_each_shell(tmp_path: Path, shell: str) -> None:
    done = athenaeum("completion", shell, home=tmp_path)
    assert done.returncode == 0 and "athenaeum" in done.stdout


def test_a_reader_that_stops_early_gets_clean_output_and_no_traceback(served: Served) -> None:
    for topic in ("adr-1", "adr-2", "adr-3"):
        assert served.run("ratify", "init", topic, "--roster", "bob", "--text", TEXT).returncode == 0
    served.enrol("bob")
    for pipeline in (f"{' '.join(ATHENAEUM)} export --data-dir {served.data_dir} | head -1",
                     f"{' '.join(ATHENAEUM)} check --as bob --data-dir {served.data_dir} | head -1",
                     f"{' '.join(ATHENAEUM)} ratify show adr-1 --json --data-dir {served.data_dir} | head -c 10",
                     f"{' '.join(ATHENAEUM)} schema | head -c 10"):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", pipeline], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "Traceback" not in done.stderr and done.stdout, (pipeline, done.stderr)


def test_serve_logs_a_line_per_command_as_json_lines(tmp_path: Path) -> None:
    home, log = tmp_path / "home", (tmp_path / "serve.log").open("w")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATHENAEUM_")} | {"ATHENAEUM_HUMANS": "ada"}
    serve = subprocess.Popen([*ATHENAEUM, "serve", "--data-dir", str(home), "--no-http", "--log-format", "json"],
                             stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    try:
        assert serve.stdout.readline().startswith("athenaeum ready")
        registered = athenaeum("agent", "register", "alice", "--as", "ada", "--data-dir", str(home), home=home)
        assert registered.returncode == 0, registered.stderr
        refused = athenaeum("ratify", "vote", "adr-1", "--sha256", "0", "--sign", "--as", "alice", "--data-dir",
                            str(home), home=home)
        assert refused.returncode == 1
    finally:
        serve.terminate()
        assert serve.wait(60) == 0
        log.close()
    lines = [json.loads(line) for line in (tmp_path / "serve.log").read_text().splitlines() if line.startswith("{")]
    commands = [line for line in lines if line["logger"] == "athenaeum.commands"]
    assert [(c["actor"], c["route"], c["id"], c["outcome"]) for c in commands] == [
        ("ada", "agent.register", "fleet:roster", "ok"), ("alice", "ratification.vote", "adr-1", "not_found")]
    assert all(isinstance(c["ms"], float) for c in commands)
    assert any(line["message"].startswith("stopping") for line in lines)


def test_long_reads_draw_a_progress_bar_on_a_terminal_and_only_there(served: Served, tmp_path: Path) -> None:
    assert served.run("ratify", "init", "adr-1", "--roster", "bob", "--text", TEXT).returncode == 0
    for verb, extra in (("audit", ()), ("replay", ("--until", "1", "--out", str(tmp_path / "replayed"))),
                        ("export", ())):
        command = [*ATHENAEUM, verb, *extra, "--data-dir", str(served.data_dir)]
        piped = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert piped.returncode == 0 and piped.stderr == "", (verb, piped.stderr)
        if verb == "replay":
            (tmp_path / "replayed").rename(tmp_path / "replayed-piped")
        terminal, stderr = _with_stderr_on_a_terminal(command)
        assert terminal.returncode == 0, (verb, stderr)
        assert f"{verb}ing" in stderr, (verb, stderr)
        assert terminal.stdout == piped.stdout or verb == "replay", verb  # the results themselves are unchanged


def test_control_characters_an_agent_wrote_are_shown_escaped_on_a_terminal_and_exact_when_redirected(
        served: Served) -> None:
    """An escape sequence in an objection would be the human's terminal's to obey: clear the
    screen, set the clipboard. Shown escaped there; a file it is redirected to gets it as written."""
    assert served.run("ratify", "init", "adr-esc", "--roster", "alice,bob", "--text", TEXT).returncode == 0
    trap = "\x1b[2J\x1b]52;c;ZXZpbA==\x07 all fine"
    dissent = {"atom": {"section": "Scope", "anchor": "All"}, "objection": trap, "proposed_resolution": "carve-caveat"}
    with SyncClient(served.url, "bob", seed=served.enrol("bob")) as client:
        vote = {"topic": "adr-esc", "sha256": sha256_of(TEXT), "decision": "DISSENT", "dissent": [dissent]}
        assert client.send(msgspec.convert(vote, CastVote)).ok
    assert served.run("ratify", "vote", "adr-esc", "--sha256", sha256_of(TEXT), "--sign").returncode == 0
    command = [*ATHENAEUM, "ratify", "show", "adr-esc", "--render", "decomposition", "--data-dir", str(served.data_dir),
               "--as", "alice"]
    redirected = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert redirected.returncode == 0 and trap in redirected.stdout, redirected.stderr
    terminal, shown = _on_a_terminal(command, "stdout")
    assert terminal.returncode == 0 and "\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07 all fine" in shown, shown
    assert "\x1b]52" not in shown and "\x1b[2J" not in shown


def _with_stderr_on_a_terminal(command: list[str]) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """``command`` run with its stderr on a pseudo-terminal (what a user's shell gives it) and
    its stdout on a pipe; what the terminal showed."""
    return _on_a_terminal(command, "stderr")


def _on_a_terminal(command: list[str], stream: str) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """``command`` run with its ``stream`` (stdout or stderr) on a pseudo-terminal and the other
    on a pipe; what the terminal showed, and what the pipe got."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm"}
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE} | {stream: follower}
    with subprocess.Popen(command, env=env, **streams) as process:
        os.close(follower)
        shown = bytearray()
        while True:  # until the child closes its end: EOF, or EIO on Linux
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        piped = process.stderr if stream == "stdout" else process.stdout
        other = piped.read() if piped else b""
        process.wait(timeout=60)
    os.close(leader)
    return subprocess.CompletedProcess(command, process.returncode, other.decode()), shown.decode(errors="replace")


def test_ctrl_c_while_the_cli_is_still_loading_ends_it_with_one_line(monkeypatch, capsys) -> None:
    """Before ``main`` runs there is nothing to catch Ctrl-C but the entry point."""

    class Interrupting(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: object, target: object = None) -> None:
            if name == "athenaeum.services.cli.main":
                raise KeyboardInterrupt  # as if Ctrl-C came while it was being imported

    monkeypatch.delitem(sys.modules, "athenaeum.services.cli.main")
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    assert entry.main() == entry.INTERRUPTED == 130
    assert capsys.readouterr().err == "athenaeum: interrupted before it began: nothing was sent\n"
