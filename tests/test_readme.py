"""The README is executable: its shell and Python examples run, in order, as pasted, in one
shell against the fresh ``serve`` its "Run the ledger" block starts, so an example that stops
working fails the build.

A fenced block is an example when it is ``sh`` or ``python``; ``text`` blocks show output. An
HTML comment right above a block may say how it runs: ``<!-- readme-test: serve -->`` (started
in the background, until its ready line, and stopped at the end) or ``<!-- readme-test: skip,
WHY -->`` (never run, for the reason it gives). The shell has ``set -euo pipefail``: a line that
fails stops the run, named by its README line. One liberty is taken: the gateway's default
address, ``127.0.0.1:8765``, is the test serve's own free port.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple


README = Path(__file__).resolve().parents[1] / "README.md"
FENCED = re.compile(r"(?:<!-- readme-test: (?P<directive>[^>]*?) -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$",
                    re.M | re.S)
DEFAULT_HTTP = "127.0.0.1:8765"
TRACE_FD = 7
EXAMPLES_TIMEOUT = 240  # seconds, under pytest's own timeout so the hang is named


class Block(NamedTuple):
    line: int  # of its first line of code in the README
    lang: str
    directive: str
    body: str


def blocks(text: str) -> list[Block]:
    return [Block(text.count("\n", 0, found.start("body")) + 1, found["lang"], found["directive"] or "", found["body"])
            for found in FENCED.finditer(text)]


def test_every_example_is_runnable_or_says_why_not() -> None:
    for block in blocks(README.read_text()):
        assert block.lang in ("sh", "python", "text", "yaml", "json"), f"README line {block.line}: a ```{block.lang} block"
        if block.lang in ("sh", "python"):
            assert block.directive in ("", "serve") or re.fullmatch(r"skip, \S.*", block.directive), (
                f"README line {block.line}: readme-test says {block.directive!r}: serve, or skip with a reason")


def test_the_readme_runs_as_pasted(tmp_path: Path) -> None:
    examples = [block for block in blocks(README.read_text())
                if block.lang in ("sh", "python") and not block.directive.startswith("skip")]
    [serve] = [block for block in examples if block.directive == "serve"]
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATHENAEUM_")} | {
        "ATHENAEUM_HOME": str(home), "NO_COLOR": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    before = examples[:examples.index(serve)]
    after = examples[examples.index(serve) + 1:]
    if before:
        _run(before, work, env, DEFAULT_HTTP)
    # Serve binds a port the system chooses, and says which: one chosen here and bound later
    # could be taken in between by a test running beside this one.
    server = subprocess.Popen(shlex.split(serve.body, comments=True), cwd=work, env=env | {"ATHENAEUM_HTTP": "127.0.0.1:0"},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = server.stdout.readline() if server.stdout else ""
        assert ready.startswith("athenaeum ready"), f"README line {serve.line}: {ready!r}"
        http = re.search(r"\bhttp=http://(\S+)", ready)[1]
        _run(after, work, env | {"ATHENAEUM_HTTP": http}, http)
    finally:
        server.send_signal(signal.SIGINT)
        _, errors = server.communicate(timeout=60)
    assert server.returncode == 0, errors[-2000:]


def _run(examples: list[Block], work: Path, env: dict[str, str], http: str) -> None:
    """The examples as one bash script, traced, so a failure or a hang names its README line."""
    trace = work.parent / "trace"
    script, lines = [f"exec {TRACE_FD}>{shlex.quote(str(trace))}; BASH_XTRACEFD={TRACE_FD}; PS4='+$LINENO '; set -x"], [0]
    script.append("set -euo pipefail")
    lines.append(0)
    for block in examples:
        body = block.body.replace(DEFAULT_HTTP, http)
        if block.lang == "python":
            script.append("python3 - <<'README_PYTHON'")
            lines.append(block.line)
            body += "README_PYTHON\n"
        for offset, line in enumerate(body.splitlines()):
            script.append(line)
            lines.append(block.line + offset)
    try:
        done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env, capture_output=True, text=True,
                              timeout=EXAMPLES_TIMEOUT)
    except subprocess.TimeoutExpired as hung:
        raise AssertionError(f"{_last_line(trace, lines)} still ran after {EXAMPLES_TIMEOUT} s:\n"
                             f"{(hung.stderr or b'')[-3000:]!r}") from None
    assert done.returncode == 0, f"{_last_line(trace, lines)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def _last_line(trace: Path, lines: list[int]) -> str:
    """The README line of the last command the trace shows begun."""
    begun = re.findall(r"^\++(\d+) ", trace.read_text(errors="replace"), re.M)
    return f"README line {lines[int(begun[-1]) - 1]}" if begun else "the README's first example"
