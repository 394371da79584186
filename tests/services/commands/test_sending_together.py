"""Commands sent together (``athenaeum import``'s records): each decided, proven and answered as
if sent alone, those that append on what the handler knew appended in one write."""

from __future__ import annotations

import msgspec

from athenaeum.aggregates.families import fold_of
from athenaeum.events.ratification import Decision
from athenaeum.events.ratification_commands import CastVote
from athenaeum.services.commands.credentials import ASSERTED
from athenaeum.services.commands.store import Applied, Appending, MemoryStore, Unconfirmed
from tests.services.commands.test_handler import SHA, handler, init


class Counted(MemoryStore):
    """Counts its writes; ``lost``: the next write together lands, and its answer is lost."""

    def __init__(self, lost: bool = False) -> None:
        super().__init__(fold_of)
        self.writes = 0
        self.lost = lost

    async def append_together(self, commands: list[Appending]) -> list[Applied]:
        self.writes += 1
        appended = await super().append_together(commands)
        if self.lost:
            self.lost = False
            raise Unconfirmed("the answer was lost")
        return appended


def together(*commands):
    return [(command, ASSERTED) for command in commands]


async def test_commands_on_aggregates_of_their_own_are_answered_each_and_appended_in_one_write() -> None:
    store = Counted()
    replies = await handler(store).send_together(together(*(init(f"adr-{n}", command_id=f"k-{n}") for n in range(5))),
                                                 "alice")
    assert [reply.position for reply in replies] == [1, 2, 3, 4, 5] and store.writes == 1
    opened = [msgspec.json.decode(reply.events)[0]["originator_id"] for reply in replies]
    assert opened == [f"adr-{n}" for n in range(5)]


async def test_a_refused_one_gets_its_refusal_and_the_others_land() -> None:
    store = Counted()
    commands = handler(store)
    await commands.send(init("adr-1"), "alice")
    vote = CastVote(topic="adr-1", sha256=SHA, decision=Decision.SIGN, command_id="v-1")
    replies = await commands.send_together(together(init("adr-2", command_id="k-2"), vote), "mallory")
    assert replies[0].ok and replies[1].error.code == "not_rostered" and len(store.ledger) == 2


async def test_sent_again_each_gets_its_first_answer_and_nothing_is_appended() -> None:
    store = Counted()
    commands = handler(store)
    sent = together(init("adr-1", command_id="k-1"), init("adr-2", command_id="k-2"))
    first = await commands.send_together(sent, "alice")
    assert await commands.send_together(sent, "alice") == first and len(store.ledger) == 2


async def test_two_on_one_aggregate_are_decided_in_their_order() -> None:
    commands = handler(Counted())
    vote = CastVote(topic="adr-1", sha256=SHA, decision=Decision.SIGN, command_id="v-1")
    opened, voted = await commands.send_together(together(init("adr-1", command_id="k-1"), vote), "alice")
    assert opened.ok and voted.ok and voted.position > opened.position


async def test_a_write_whose_answer_was_lost_is_answered_as_applied_once() -> None:
    store = Counted(lost=True)
    replies = await handler(store).send_together(together(init("adr-1", command_id="k-1"),
                                                           init("adr-2", command_id="k-2")), "alice")
    assert [reply.position for reply in replies] == [1, 2] and len(store.ledger) == 2
