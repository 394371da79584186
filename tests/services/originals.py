"""What the original tools check in a replay, stated here in our own words (none of their code):

- AEVYRA/llm-wiki-coordination's ``tools/llm-wiki-audit.py`` exits 1 on any HARD finding: among
  them a missing ``wiki/log.md`` or unparseable front matter (L0/L1), a dialogue thread that is
  no folder with ``thread.md`` and ``meta.yaml`` or has an unknown status (D1, D2), an entry
  after the first without ``last_eval`` or evaluating its own author's entry (D4, D5), a
  closure whose ``current_at_close`` is more than 0.01 off the sum of the evaluations (D6), an
  accepted structural page with a pending agent (C4), and a crystallized thread naming a canon
  page that is not inside ``wiki/`` (X1);
- JackReis/dancer's ``athenaeum check`` and fleet-ratify's ``check`` (JackReis/athenaeum) list a
  topic as awaiting an agent's vote from the files alone.

``hard_findings`` and the two ``awaiting_*`` functions make those checks; where an environment
variable names a checkout of an original, ``run_*`` runs the original itself.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

WIKI_AUDIT = ("ATHENAEUM_LLM_WIKI_COORDINATION", "tools/llm-wiki-audit.py")
DANCER = ("ATHENAEUM_DANCER", "plugins/skill-enhancers/athenaeum/scripts/athenaeum")
FLEET_RATIFY = ("ATHENAEUM_FLEET_RATIFY", "plugins/skill-enhancers/grill-each-other/skills/fleet-ratify/scripts/fleet_ratify.py")
THREAD_STATUSES = {"open", "crystallized", "crystallizing", "closed-without-crystallization", "awaiting-crystallization",
                   "reopened"}
STRUCTURAL = ("workflows/", "concepts/", "agents/", "entities/")
NOT_PAGES = ("agents/dialogue/", "agents/honest/", "agents/notes/", "agents/handoff-log", "agents/agent-council")


def front_matter(path: Path) -> dict:
    text = path.read_text()
    if not text.startswith("---\n"):
        return {}
    match = re.match(r"^---\n(.*?)\n---\n?", text, re.DOTALL)
    assert match, f"{path}: unclosed front matter"
    return yaml.safe_load(match.group(1)) or {}


def hard_findings(root: Path) -> list[str]:
    wiki = root / "wiki"
    findings = [] if (wiki / "log.md").exists() else ["wiki/log.md is missing"]
    pages = {path: front_matter(path) for path in sorted(wiki.rglob("*.md"))}  # every one parses
    dialogue = wiki / "agents" / "dialogue"
    for thread in sorted(dialogue.iterdir()) if dialogue.exists() else []:
        findings += _thread_findings(wiki, thread)
    for path, front in pages.items():
        name = str(path.relative_to(wiki))
        if name.startswith(STRUCTURAL) and not name.startswith(NOT_PAGES) and front.get("lifecycle") == "accepted":
            findings += [f"{name}: accepted but {agent} is pending" for agent, standing
                         in (front.get("consensus") or {}).items() if str(standing).startswith("pending")]
    return findings


def _thread_findings(wiki: Path, thread: Path) -> list[str]:
    if not thread.is_dir() or not (thread / "thread.md").exists() or not (thread / "meta.yaml").exists():
        return [f"{thread.name}: not a thread folder with thread.md and meta.yaml"]
    meta = yaml.safe_load((thread / "meta.yaml").read_text())
    findings = [] if meta["status"] in THREAD_STATUSES else [f"{thread.name}: status {meta['status']}"]
    previous: tuple[str, dict] | None = None
    total = {"N": 0.0, "C": 0.0, "R": 0.0}
    for entry in sorted((thread / "entries").glob("*.md")):
        front = front_matter(entry)
        if previous is not None:
            last_eval = front.get("last_eval") or {}
            if last_eval.get("ref") != previous[0] or previous[1]["author"] == front["author"]:
                findings.append(f"{entry.name}: does not evaluate the entry before it, by another author")
            for axis in total:
                total[axis] += float(last_eval["v"][axis])
        if front["type"] == "closure" and any(abs(front["current_at_close"][axis] - total[axis]) > 0.01 for axis in total):
            findings.append(f"{entry.name}: current_at_close is not the sum of the evaluations")
        previous = (entry.name, front)
    if meta["status"] == "crystallized":
        folders = [wiki, *(wiki / folder for folder in STRUCTURAL)]
        findings += [f"{thread.name}: canon page {page} is not in wiki/" for page in meta["crystallization"]["canon_pages"]
                     if not any((folder / page).exists() for folder in folders)]
    return findings


def awaiting_dancer(root: Path, agent: str) -> set[str]:
    """Topics whose manifest says open or pending-human, with ``agent`` on a roster line and no
    ``<agent>.vote.yaml`` beside it."""
    return {manifest.parent.name for manifest in (root / ".athenaeum").rglob("manifest.yaml")
            if re.search(r"status: (open|pending-human)", text := manifest.read_text())
            and f"- {agent}" in [line.strip() for line in text.splitlines()]
            and not (manifest.parent / f"{agent}.vote.yaml").exists()}


def awaiting_fleet_ratify(root: Path, agent: str, folder: str = ".athenaeum") -> set[str]:
    """The same from fleet-ratify, its topics in ``root / folder``: the word after the first
    ``status:`` is ``open``, and the roster is the lines after ``roster:`` up to the next key,
    stripped of dashes and spaces."""
    awaiting = set()
    for topic in (root / folder).iterdir():
        text = (topic / "manifest.yaml").read_text()
        status = re.match(r"\s*(\w*)", text.partition("status:")[2]).group(1)
        lines = text.partition("roster:")[2].splitlines()
        roster = [line.strip("- ") for line in itertools.takewhile(lambda line: not re.match(r"\w+:", line), lines)]
        if status == "open" and agent in roster and not (topic / f"{agent}.vote.yaml").exists():
            awaiting.add(topic.name)
    return awaiting


def original(tool: tuple[str, str]) -> Path | None:
    """The original's script in the checkout an environment variable names, if any."""
    checkout = os.environ.get(tool[0])
    return Path(checkout) / tool[1] if checkout else None


def run_wiki_audit(script: Path, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), str(root)], capture_output=True, text=True, timeout=60)


def run_dancer_check(script: Path, root: Path, agent: str) -> set[str]:
    done = subprocess.run([sys.executable, str(script), "check"], cwd=root, capture_output=True, text=True, timeout=60,
                          env=os.environ | {"AGENT_ID": agent})
    assert done.returncode == 0, done.stderr
    return {line.split(": ", 1)[1] for line in done.stdout.splitlines() if "AWAITING VOTE: " in line}


def run_fleet_ratify_check(script: Path, root: Path, agent: str) -> set[str]:
    """Its folder is ``.fleet-ratify`` under ``FLEET_RATIFY_VAULT_ROOT``: a link to the replay's."""
    vault = root.parent / f"{root.name}-vault"
    if not vault.exists():
        vault.mkdir()
        (vault / ".fleet-ratify").symlink_to(root / ".athenaeum")
    done = subprocess.run([sys.executable, str(script), "check"], capture_output=True, text=True, timeout=60,
                          env=os.environ | {"AGENT_ID": agent, "FLEET_RATIFY_VAULT_ROOT": str(vault)})
    assert done.returncode == 0, done.stderr
    return {line.strip()[2:] for line in done.stdout.splitlines() if line.startswith("  - ")}
