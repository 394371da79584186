"""``athenaeum demo``: a short scripted scenario on a throwaway embedded server.

Three agents ratify one artifact outright; a second artifact meets a dissent, a human
rewrites it with a caveat, and it converges; the same agents settle a quorum proposal by its
advisory threshold; then they discuss in a dialogue thread whose closure a human recognizes,
endorse the page it crystallizes, and the human admits it to canon. The rendered records are
printed.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from athenaeum.aggregates.ratification import sha256_of
from athenaeum.events.page import CanonLevel, Endorsing
from athenaeum.events.fleet_commands import RegisterAgent
from athenaeum.events.page_commands import ApprovePage, EndorsePage, ReadPage
from athenaeum.events.quorum import Preset
from athenaeum.events.quorum_commands import AckProposal, NackProposal, ProposeQuorum
from athenaeum.events.ratification import AtomRef, Caveat, Decision, DissentItem, HumanChoice, Resolution
from athenaeum.events.ratification_commands import CastVote, InitRatification, RecordHumanDecision
from athenaeum.events.thread import Vector
from athenaeum.events.thread_commands import CloseThread, Contribute, OpenThread, RecognizeClosure
from athenaeum.services.client import AthenaeumClient
from athenaeum.services.identity.keys import key_pair, key_path, new_seed, public_key
from athenaeum.services.runtime.serve import SERVICES, ServeOptions, serving_here

ROSTER = ["claude-code", "codex", "gemini"]
HUMAN = "ada"
ADR = "# ADR 12: one ledger\n\n## Decision\nEvery fleet decision is recorded in Athenaeum.\n"
STYLE = "# Style rule\n\n## Naming\nModules are named after what they hold.\n\n## Size\nAt most 250 lines.\n"
THREAD = "ledger-retention"
PAGE = "canon/retention.md"  # the page wiki/canon/retention.md: its path inside wiki/


async def run_demo(out: io.TextIOBase) -> None:
    with tempfile.TemporaryDirectory(prefix="athenaeum-demo-") as home:
        # No HTTP: a demo must not take the port a real serve may be using.
        async with serving_here(ServeOptions(Path(home), humans=frozenset({HUMAN}), services=SERVICES - {"http"})) as url:
            await _scenario(url, Path(home), out)


async def _scenario(url: str, home: Path, out: io.TextIOBase) -> None:
    """The fleet's keys first: serve made the human's; the human registers each agent's."""
    seeds = {name: new_seed() for name in ROSTER}
    agents = {HUMAN: await AthenaeumClient.connect(url, HUMAN, seed=key_path(home, HUMAN))}
    try:
        for name, seed in seeds.items():
            await agents[HUMAN].send(RegisterAgent(name=name, public_key=public_key(key_pair(seed))))
            agents[name] = await AthenaeumClient.connect(url, name, seed=seed)
        await _ratifications(agents, out)
        await _quorum(agents, out)
        await _canon(agents, out)
    finally:
        for client in agents.values():
            await client.close()


async def _ratifications(agents: dict[str, AthenaeumClient], out: io.TextIOBase) -> None:
    await agents["claude-code"].send(InitRatification(topic="adr-12", roster=ROSTER, artifact=ADR))
    for name in ROSTER:
        reply = await agents[name].send(CastVote(topic="adr-12", sha256=sha256_of(ADR), decision=Decision.SIGN))
    await _print(agents["codex"], "adr-12", ["ratified", "log"], reply.position, out)

    await agents["codex"].send(InitRatification(topic="style-rule", roster=ROSTER, artifact=STYLE))
    objection = DissentItem(
        atom=AtomRef(section="Size", anchor="250 lines"),
        objection="generated files cannot meet it",
        proposed_resolution=Resolution.VERIFIER,
    )
    await agents["gemini"].send(
        CastVote(topic="style-rule", sha256=sha256_of(STYLE), decision=Decision.DISSENT, dissent=[objection])
    )
    for name in ("claude-code", "codex"):
        await agents[name].send(CastVote(topic="style-rule", sha256=sha256_of(STYLE), decision=Decision.SIGN))
    decision = RecordHumanDecision(
        topic="style-rule",
        decision=HumanChoice.REWRITE_WITH_CAVEATS,
        caveats=[Caveat(atom="A1", verifier="scripts/check-size --skip-generated")],
    )
    reply = await agents[HUMAN].send(decision)
    await _print(agents["codex"], "style-rule", ["decomposition", "ratified", "log"], reply.position, out)


async def _quorum(agents: dict[str, AthenaeumClient], out: io.TextIOBase) -> None:
    reply = await agents["gemini"].send(ProposeQuorum(text="Freeze the API for the release", electorate=ROSTER,
                                                      preset=Preset.ADVISORY, proposal_id="0000A11C"))
    announcement = await agents["gemini"].query("quorum.announcement", proposal_id="0000A11C", after=reply.position)
    out.write(f"\n===== quorum 0000A11C: announcement =====\n{announcement['result']['text']}")
    await agents["codex"].send(NackProposal(proposal_id="0000A11C", reason="the docs lag behind"))
    for name in ("claude-code", "gemini"):
        reply = await agents[name].send(AckProposal(proposal_id="0000A11C"))
    shown = await agents["codex"].query("quorum.show", proposal_id="0000A11C", after=reply.position)
    result = shown["result"]
    out.write(f"\n===== quorum 0000A11C: result =====\n{result['status']} ({result['reason']}): "
              f"ACK {', '.join(result['acks'])}; NACK {', '.join(n['agent'] for n in result['nacks'])}; "
              f"threshold {result['threshold']}/{result['total']}\n")


async def _canon(agents: dict[str, AthenaeumClient], out: io.TextIOBase) -> None:
    await agents["codex"].send(OpenThread(
        slug=THREAD, context="How long does the ledger keep events?", target=Vector(0.5, 0.5, 0.5),
        body="Forever: the ledger is the audit trail.", questions=["What about personal data?"],
    ))
    await agents["claude-code"].send(Contribute(
        slug=THREAD, eval=Vector(0.3, 0.3, 0.2), body="Forever, but personal data lives outside, by reference."))
    await agents["gemini"].send(Contribute(
        slug=THREAD, eval=Vector(0.3, 0.2, 0.3), body="References break when data is erased: record the erasure."))
    await agents["codex"].send(CloseThread(
        slug=THREAD, eval=Vector(0.2, 0.2, 0.2), current=Vector(0.8, 0.7, 0.7),
        summary="Events are kept forever; personal data by reference; erasures are recorded.",
        pages=[PAGE], patch_summary="The retention rule",
    ))
    reply = await agents[HUMAN].send(RecognizeClosure(slug=THREAD))  # codex's page comes into being
    rendered = await agents["codex"].query("thread.render", slug=THREAD, after=reply.position)
    out.write(f"\n===== thread {THREAD} =====\n{rendered['result']['text']}")
    for name in ("claude-code", "gemini"):
        await agents[name].send(ReadPage(page=PAGE, session_id="demo"))
        await agents[name].send(EndorsePage(page=PAGE, status=Endorsing.ACCEPTED, session_id="demo"))
    reply = await agents[HUMAN].send(ApprovePage(page=PAGE, level=CanonLevel.CANONICAL))
    block = await agents["codex"].query("page.consensus", page=PAGE, after=reply.position)
    out.write(f"\n===== {PAGE}: consensus =====\n{block['result']['text']}")


async def _print(client: AthenaeumClient, topic: str, records: list[str], after: int | None, out: io.TextIOBase) -> None:
    for record in records:
        answer = await client.query("ratification.render", topic=topic, record=record, after=after)
        out.write(f"\n===== {topic}: {record} =====\n{answer['result']['text']}")
