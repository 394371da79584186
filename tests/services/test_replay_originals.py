"""``replay`` of a rich history, read as the original tools read it: the wiki auditor finds no
HARD error, and the ratification tools await exactly the votes ``athenaeum check`` awaits.

What the originals check is asserted directly (``tests/services/originals.py``); the originals
themselves also run when an environment variable names a checkout of each:
``ATHENAEUM_LLM_WIKI_COORDINATION`` (AEVYRA/llm-wiki-coordination), ``ATHENAEUM_DANCER``
(JackReis/dancer) and ``ATHENAEUM_FLEET_RATIFY`` (JackReis/athenaeum, whose fleet-ratify reads
``FLEET_RATIFY_VAULT_ROOT``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from athenaeum.events.page import CanonLevel, Endorsing, Lifecycle, Scope
from athenaeum.events.page_commands import (
    ApprovePage,
    ChangeLifecycle,
    DisputePage,
    EditPage,
    EndorsePage,
    InitPage,
    ReadPage,
    ResolveDispute,
)
from athenaeum.events.ratification import AtomRef, Caveat, Decision, DissentItem, HumanChoice, Mode, Resolution
from athenaeum.events.ratification_commands import (
    CancelRatification,
    CastVote,
    InitRatification,
    RecordHumanDecision,
    SplitAtom,
)
from athenaeum.events.thread import Vector
from athenaeum.events.thread_commands import (
    AskQuestion,
    CloseThread,
    Contribute,
    OpenThread,
    RecognizeClosure,
    RefuseClosure,
    ReopenThread,
)
from athenaeum.services.client import SyncClient
from athenaeum.services.identity.keys import key_path
from tests.services import originals
from tests.services.conftest import Served, until

FLEET = ("alice", "bob", "carol", "dave")
ARTIFACT = "# ADR 1\n\n## Decision\nOne ledger.\n\n## Scope\nAll agents.\n"
SHA = hashlib.sha256(ARTIFACT.encode()).hexdigest()
PAGE = "# Guide\n\n## One\nEvery agent reads the guide before it acts.\n"


class Fleet:
    """A client per principal; each command must be accepted unless said otherwise."""

    def __init__(self, served: Served) -> None:
        self.clients = {name: SyncClient(served.url, name, seed=served.enrol(name)) for name in FLEET}
        self.clients["ada"] = SyncClient(served.url, "ada", seed=key_path(served.data_dir, "ada"))
        self.position = 0

    def __call__(self, actor: str, command: object, refused: str | None = None) -> None:
        reply = self.clients[actor].send(command)  # type: ignore[arg-type]
        assert reply.ok is (refused is None), reply.error
        if refused is not None:
            assert reply.error is not None and reply.error.code == refused
        self.position = max(self.position, reply.position or 0)

    def vote(self, topic: str, *voters: str, dissent: str | None = None) -> None:
        for agent in voters:
            item = DissentItem(atom=AtomRef(section="Scope", anchor="All agents"), objection="too broad",
                               proposed_resolution=Resolution.TICKET)
            self(agent, CastVote(topic=topic, sha256=SHA, decision=Decision.DISSENT if agent == dissent else Decision.SIGN,
                                 dissent=[item] if agent == dissent else []))

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


def ratifications(act: Fleet) -> None:
    """Every way a ratification stands: open with votes cast, tallied every way, expired."""
    for topic, mode, expires_in in [("expired", Mode.STANDARD, "2s"), ("expired-fast", Mode.FAST, "2s")]:
        act("alice", InitRatification(topic=topic, roster=["alice", "bob", "carol"], artifact=ARTIFACT, mode=mode,
                                      expires_in=expires_in))
        act.vote(topic, "bob")
    for topic in ("all-signed", "open", "pending-human", "rewritten", "split", "further", "canceled", "fast"):
        act("alice", InitRatification(topic=topic, roster=["alice", "bob", "carol"], artifact=ARTIFACT,
                                      mode=Mode.FAST if topic == "fast" else Mode.STANDARD))
    act.vote("all-signed", "alice", "bob", "carol")
    act.vote("open", "bob", dissent="bob")
    act.vote("canceled", "carol")
    act("alice", CancelRatification(topic="canceled"))
    act.vote("fast", "alice", "bob", "carol", dissent="carol")
    for topic in ("pending-human", "rewritten", "split", "further"):
        act.vote(topic, "alice", "bob", "carol", dissent="bob")
    caveat = Caveat(atom="A1", ticket="OPS-1")
    act("ada", RecordHumanDecision(topic="rewritten", decision=HumanChoice.REWRITE_WITH_CAVEATS, caveats=[caveat]))
    act("ada", RecordHumanDecision(topic="split", decision=HumanChoice.ACCEPT_SPLIT))
    act("ada", RecordHumanDecision(topic="further", decision=HumanChoice.DECOMPOSE_FURTHER, atoms=["A1"]))
    finer = DissentItem(atom=AtomRef(section="Scope", anchor="All"), objection="which?", proposed_resolution=Resolution.REWRITE)
    act("alice", SplitAtom(topic="further", atom="A1", into=[finer]))


def discussions(act: Fleet) -> None:
    """Threads crystallized after a reopen, refused and open, and the pages they and the fleet write."""
    act("alice", OpenThread(slug="rules", context="How do pages become canon?", target=Vector(0.5, 0.5, 0.5), body="first"))
    act("bob", Contribute(slug="rules", eval=Vector(0.3, 0.2, 0.1), body="second"))
    pages = ["wiki/concepts/rules.md", "workflows/flow.md"]
    act("carol", CloseThread(slug="rules", eval=Vector(0.2, 0.2, 0.2), current=Vector(0.5, 0.4, 0.3), summary="s",
                             pages=pages, patch_summary="p"))
    act("dave", ReopenThread(slug="rules", eval=Vector(0.1, 0.1, 0.1), reason="r", discovery="d"))
    act("carol", CloseThread(slug="rules", eval=Vector(0.2, 0.3, 0.3), current=Vector(0.8, 0.8, 0.7), summary="s2",
                             pages=pages, patch_summary="p2"))
    act("ada", RecognizeClosure(slug="rules"))
    act("bob", OpenThread(slug="refused", context="c", target=Vector(1.0, 1.0, 1.0), body="b"))
    act("carol", CloseThread(slug="refused", eval=Vector(0.5, 0.5, 0.5), current=Vector(0.5, 0.5, 0.5), summary="s",
                             pages=["entities/e.md"], patch_summary="p"))
    act("ada", RefuseClosure(slug="refused", reason="under target"))
    act("dave", OpenThread(slug="open", context="c", target=Vector(1.0, 1.0, 1.0), body="b"))
    act("alice", AskQuestion(slug="open", question="why?"))
    act("alice", InitPage(page="wiki/agents/guide.md", content=PAGE))
    act("alice", ChangeLifecycle(page="agents/guide.md", to=Lifecycle.ACCEPTED, reason="early"), refused="consensus_pending")
    for agent in ("bob", "carol", "dave"):
        act(agent, ReadPage(page="agents/guide.md", session_id="s1"))
        act(agent, EndorsePage(page="wiki/agents/guide.md", status=Endorsing.ACCEPTED, session_id="s1"))
    act("alice", ChangeLifecycle(page="agents/guide.md", to=Lifecycle.ACCEPTED, reason="all accept it"))
    act("ada", ApprovePage(page="agents/guide.md", level=CanonLevel.CANONICAL))
    act("bob", InitPage(page="concepts/pending.md", content=PAGE))
    act("dave", DisputePage(page="concepts/rules.md", section="§2", thread="open"))
    act("ada", ResolveDispute(page="concepts/rules.md", agent="dave", decision="keep it", thread="open"))
    act("bob", EditPage(page="workflows/flow.md", content=PAGE + "## Two\nAnd then it writes.\n"))
    act("carol", InitPage(page="entities/reviewed.md", content=PAGE))
    for agent in ("alice", "bob", "dave"):
        act(agent, ReadPage(page="entities/reviewed.md", session_id="s2"))
        act(agent, EndorsePage(page="entities/reviewed.md", status=Endorsing.REVIEWED, session_id="s2"))
    act("carol", ChangeLifecycle(page="entities/reviewed.md", to=Lifecycle.ACCEPTED, reason="everyone looked"))
    act("dave", InitPage(page="notes.md", content=PAGE, scope=Scope.DESCRIPTIVE))
    act("dave", InitPage(page="notes.md/more.md", content=PAGE))  # a page whose path is another's folder


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, set[str]]]:
    """The records of the whole history, and the votes ``athenaeum check`` awaits of each agent."""
    tmp = tmp_path_factory.mktemp("replayed")
    served = Served(tmp / "home")
    try:
        act = Fleet(served)
        try:
            ratifications(act)
            discussions(act)
            ada = act.clients["ada"]
            for topic, status in [("expired", "pending-human"), ("expired-fast", "rejected")]:  # the timer tallies
                shown = until(lambda: ada.query("ratification.show", topic=topic), lambda a: a["result"]["status"] != "open")
                assert shown["result"]["status"] == status
            awaited = {agent: {item["id"] for item in act.clients[agent].query("check", agent=agent)["result"]["items"]
                               if item["kind"] == "ratification" and item["action"] == "vote"} for agent in FLEET}
        finally:
            act.close()
        done = served.run("replay", "--until", "2100-01-01T00:00:00Z", "--out", str(tmp / "records"), "--humans", "ada")
        assert done.returncode == 0, done.stderr
        assert "(not written, another page's file is in the way: wiki/notes.md/more.md)" in done.stdout
    finally:
        served.stop()
    return tmp / "records", awaited


def test_the_wiki_auditor_finds_no_hard_error(replayed: tuple[Path, dict[str, set[str]]]) -> None:
    root, _ = replayed
    assert originals.hard_findings(root) == []
    meta = yaml.safe_load((root / "wiki/agents/dialogue/rules/meta.yaml").read_text())
    assert meta["crystallization"]["canon_pages"] == ["concepts/rules.md", "workflows/flow.md"]  # inside wiki/
    assert (root / "wiki/concepts/rules.md").exists() and (root / "wiki/agents/guide.md").exists()
    assert originals.front_matter(root / "wiki/entities/reviewed.md")["lifecycle"] == "accepted"
    assert originals.front_matter(root / "wiki/concepts/pending.md")["consensus"]["alice"] == "pending | rev: v1"
    if (script := originals.original(originals.WIKI_AUDIT)) is not None:
        audited = originals.run_wiki_audit(script, root)
        assert audited.returncode == 0 and "HARD: 0" in audited.stdout, audited.stdout


def test_the_ratification_tools_await_the_votes_athenaeum_awaits(replayed: tuple[Path, dict[str, set[str]]]) -> None:
    root, awaited = replayed
    assert awaited["alice"] == {"open"} and awaited["carol"] == {"open"} and awaited["bob"] == set()
    dancer, fleet_ratify = originals.original(originals.DANCER), originals.original(originals.FLEET_RATIFY)
    for agent in FLEET:
        assert originals.awaiting_dancer(root, agent) == awaited[agent], agent
        assert originals.awaiting_fleet_ratify(root, agent) == awaited[agent], agent
        if dancer is not None:
            assert originals.run_dancer_check(dancer, root, agent) == awaited[agent], agent
        if fleet_ratify is not None:
            assert originals.run_fleet_ratify_check(fleet_ratify, root, agent) == awaited[agent], agent


def test_a_vote_is_sealed_until_the_tally_and_the_human_decision_blank_until_decided(
        replayed: tuple[Path, dict[str, set[str]]]) -> None:
    root, _ = replayed
    sealed = yaml.safe_load((root / ".athenaeum/open/bob.vote.yaml").read_text())
    assert set(sealed) == {"agent", "artifact_sha256", "timestamp", "sealed"} and sealed["artifact_sha256"] == SHA
    canceled = yaml.safe_load((root / ".athenaeum/canceled/carol.vote.yaml").read_text())
    assert "decision" not in canceled  # never tallied: never revealed
    revealed = yaml.safe_load((root / ".athenaeum/pending-human/bob.vote.yaml").read_text())
    assert revealed["decision"] == "DISSENT" and revealed["dissent"][0]["objection"] == "too broad"
    abstained = yaml.safe_load((root / ".athenaeum/expired/carol.vote.yaml").read_text())
    assert abstained["decision"] == "ABSTAIN_BY_TIMEOUT"
    for topic in ("pending-human", "further", "expired"):  # decomposed, or split finer: the human decides
        blank = yaml.safe_load((root / f".athenaeum/{topic}/human-decision.yaml").read_text())
        assert blank == {"topic": topic, "decision": None, "decided_at": None, "notes": []}, topic
    ratified = (root / ".athenaeum/rewritten/ratified.md").read_text()
    assert "- the whole artifact but its contested atoms, ratified under the caveats below: A1\n" in ratified
    assert '- C1 — A1 §Scope "All agents": too broad (raised_by bob) — ticket: OPS-1\n' in ratified
