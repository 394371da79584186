"""A batched direct get refuses a reply stream with a hole in it (replies lost in a reconnect)."""

from __future__ import annotations

import pytest
from eventsourcing.persistence import OperationalError
from nats.aio.msg import Msg

from athenaeum.services.jetstream.reads import PendingRead


def reply(seq: int | None, previous: int, status: str | None = None) -> Msg:
    headers = {"Nats-Last-Sequence": str(previous)}
    if status is None:
        headers |= {"Nats-Sequence": str(seq), "Nats-Subject": "S.ev.s.a"}
    else:
        headers |= {"Status": status, "Nats-Num-Pending": "0"}
    return Msg(_client=None, subject="_INBOX.x.1", data=b"{}" if status is None else b"", headers=headers)


async def test_a_complete_batch_is_accepted() -> None:
    pending = PendingRead(start=10)
    for msg in (reply(12, 3), reply(15, 12), reply(None, 15, "204")):
        pending.receive(msg)
    assert await pending.finished == ("204", False)
    assert [m.seq for m in pending.messages] == [12, 15]


@pytest.mark.parametrize(
    "replies",
    [
        [reply(12, 3), reply(20, 15)],  # a reply between 12 and 20 never arrived
        [reply(20, 15)],  # the first replies of the batch never arrived
        [reply(12, 3), reply(None, 15, "204")],  # the batch ended on a reply we never saw
    ],
)
async def test_a_batch_with_a_hole_is_refused(replies: list[Msg]) -> None:
    pending = PendingRead(start=10)
    for msg in replies:
        if not pending.finished.done():
            pending.receive(msg)
    with pytest.raises(OperationalError, match="lost replies"):
        await pending.finished
