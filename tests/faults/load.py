"""Load for the fault tests: agents sending commands at once, each with ids of its own, and
sending one again with the same id whenever it was not answered, as a real client does."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from athenaeum.events.commands import Command
from athenaeum.events.quorum_commands import AckProposal, ProposeQuorum
from athenaeum.services.client import AthenaeumClient, Unreachable
from athenaeum.services.commands.replies import Reply

RETRY_PAUSE = 0.2  # seconds a client waits before sending again what was not answered
REPLY_TIMEOUT = 5.0  # seconds a client waits for a reply before it sends the command again

Key = tuple[str, str]  # (actor, command_id): what the ledger must hold once per acknowledged command


@dataclass
class Sent:
    """What the load's clients were told: the commands acknowledged (at their positions), those
    refused by a rule, those still unanswered when the load gave up, how many sends were
    repeats of one not answered, and the longest any command waited for its answer (seconds,
    from its first send)."""

    acknowledged: dict[Key, int] = field(default_factory=dict)
    refused: dict[Key, str] = field(default_factory=dict)
    unanswered: list[Key] = field(default_factory=list)
    repeats: int = 0
    longest_wait: float = 0.0


def shared_proposal(round_number: int) -> str:
    return f"FF{round_number:06X}"


def own_proposal(agent_number: int, round_number: int) -> str:
    return f"{agent_number:02X}{round_number:06X}"


class Load:
    """``agents`` (name and seed file) each, round after round, vote on the round's shared
    proposal (the last vote accepts it: two events in one append) and open a proposal of their
    own; the shared proposals are opened first. Runs on a thread of its own until every command
    is answered or ``within`` seconds pass."""

    def __init__(self, url: str, agents: Mapping[str, Path], rounds: int, within: float = 90.0) -> None:
        self.url = url
        self.agents = dict(agents)
        self.rounds = rounds
        self.sent = Sent()
        self._deadline = time.monotonic() + within
        self._progress = threading.Condition()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="fault-load")

    @property
    def total(self) -> int:
        return self.rounds * (1 + 2 * len(self.agents))

    def start(self) -> Load:
        self._thread.start()
        return self

    def wait_for(self, acknowledged: int, within: float = 60.0) -> None:
        """Until at least ``acknowledged`` commands are, or fail."""
        with self._progress:
            reached = self._progress.wait_for(lambda: len(self.sent.acknowledged) >= acknowledged
                                              or not self._thread.is_alive(), timeout=within)
        assert reached and len(self.sent.acknowledged) >= acknowledged, (
            f"{len(self.sent.acknowledged)} of {acknowledged} commands acknowledged within {within}s")

    def finish(self, within: float = 90.0) -> Sent:
        """Once every command was answered (or the load gave up): what its clients were told."""
        self._thread.join(within)
        assert not self._thread.is_alive(), f"the load did not end within {within}s"
        if self._failure is not None:
            raise AssertionError("the load failed") from self._failure
        return self.sent

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as failure:  # noqa: BLE001  told by ``finish``
            self._failure = failure
        finally:
            with self._progress:
                self._progress.notify_all()

    async def _run(self) -> None:
        names = sorted(self.agents)
        first, *_ = names
        opener = await self._connect(first)
        try:
            for round_number in range(self.rounds):
                await self._send(opener, ProposeQuorum(
                    text=f"round {round_number}", electorate=names, threshold=len(names),
                    proposal_id=shared_proposal(round_number), command_id=f"open-{round_number}"))
        finally:
            await opener.close()
        await asyncio.gather(*(self._agent(number, name, names) for number, name in enumerate(names)))

    async def _agent(self, number: int, name: str, names: list[str]) -> None:
        client = await self._connect(name)
        try:
            for round_number in range(self.rounds):
                await self._send(client, AckProposal(proposal_id=shared_proposal(round_number),
                                                     command_id=f"ack-{round_number}"))
                await self._send(client, ProposeQuorum(
                    text=f"{name}'s round {round_number}", electorate=names, threshold=len(names),
                    proposal_id=own_proposal(number, round_number), command_id=f"propose-{round_number}"))
        finally:
            await client.close()

    async def _connect(self, name: str) -> AthenaeumClient:
        return await AthenaeumClient.connect(self.url, name, timeout=REPLY_TIMEOUT, seed=self.agents[name])

    async def _send(self, client: AthenaeumClient, command: Command) -> None:
        """Until answered: no reply, or ``unavailable``, says to send it again with its id."""
        assert command.command_id is not None
        key = (client.actor, command.command_id)
        first_sent = time.monotonic()
        while time.monotonic() < self._deadline:
            try:
                reply = await client.send(command)
            except Unreachable:
                reply = None
            if reply is not None and not _says_send_again(reply):
                with self._progress:
                    self.sent.longest_wait = max(self.sent.longest_wait, time.monotonic() - first_sent)
                    if reply.ok:
                        self.sent.acknowledged[key] = reply.position or 0
                    else:
                        self.sent.refused[key] = repr(reply.error)
                    self._progress.notify_all()
                return
            self.sent.repeats += 1
            await asyncio.sleep(RETRY_PAUSE)  # between a caller's retries, not a wait on a condition
        self.sent.unanswered.append(key)


def _says_send_again(reply: Reply) -> bool:
    return not reply.ok and reply.error is not None and reply.error.code == "unavailable"
