"""Reads that see every acknowledged write: before answering, the views catch up with the
ledger as it stood when the read began.

The ledger's head is its last sequence, one stream-info request away (about 0.3 ms, whatever
the ledger's size; the last event of a wildcard of 100,000 subjects costs ten times that). The
views count only events, so a head that is not an event (a command's marker) is reached once no
event lies between the views' position and it.
"""

from __future__ import annotations

import asyncio

import msgspec
from nats.aio.client import Client

from athenaeum.services.jetstream.subjects import StreamSubjects
from athenaeum.services.views.projection import ProjectionRunner

NO_MESSAGE_FOUND = 10037
# How often a wait looks again whether anything is left to project before its target.
RECHECK = 0.02


class Behind(Exception):
    """The views did not reach a position in time (``unavailable``), or the position is not
    the ledger's (``invalid``)."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.error = {"code": code, "message": message} | ({"field": field} if field else {})


class _State(msgspec.Struct, frozen=True):
    last_seq: int = 0


class _StreamInfo(msgspec.Struct):
    state: _State = _State()
    error: dict | None = None


class _Message(msgspec.Struct):
    seq: int


class _MessageReply(msgspec.Struct):
    message: _Message | None = None
    error: dict | None = None


class Ledger:
    """Where the ledger stands, asked of its stream's leader (a replica may lag behind)."""

    def __init__(self, nc: Client, stream: str, timeout: float = 5.0) -> None:
        self.nc = nc
        self.stream = stream
        self.events = StreamSubjects(stream).events
        self.timeout = timeout
        self._next: asyncio.Future[int] | None = None  # the answer the reads that came since the last ask share
        self._asking = False

    async def head(self) -> int:
        """The ledger's last position, asked after the call began. Reads that come while an ask
        is out share the next one, so a flood of reads costs the leader one ask at a time."""
        answer = self._next
        if answer is None:
            answer = self._next = asyncio.get_running_loop().create_future()
            if not self._asking:
                self._ask()
        return await asyncio.shield(answer)

    def _ask(self) -> None:
        answer, self._next, self._asking = self._next, None, True
        assert answer is not None
        asyncio.get_running_loop().create_task(self._answer(answer))

    async def _answer(self, answer: asyncio.Future[int]) -> None:
        try:
            answer.set_result((await self._api(f"STREAM.INFO.{self.stream}", b"", _StreamInfo)).state.last_seq)
        except Exception as error:  # noqa: BLE001  each read waiting on it raises it
            answer.set_exception(error)
        finally:
            self._asking = False
            if self._next is not None:
                self._ask()

    async def next_event(self, after: int) -> int | None:
        """The position of the first event after ``after``, if any."""
        request = msgspec.json.encode({"seq": after + 1, "next_by_subj": self.events})
        reply = await self._api(f"STREAM.MSG.GET.{self.stream}", request, _MessageReply, NO_MESSAGE_FOUND)
        return None if reply.message is None else reply.message.seq

    async def _api(self, endpoint: str, payload: bytes, answer: type, *tolerated: int):  # type: ignore[no-untyped-def]
        reply = msgspec.json.decode((await self.nc.request(f"$JS.API.{endpoint}", payload, self.timeout)).data,
                                    type=answer)
        if reply.error is not None and reply.error.get("err_code") not in tolerated:
            raise Behind("unavailable", f"the ledger did not say where it stands: {reply.error.get('description')}")
        return reply


async def catch_up(runner: ProjectionRunner, ledger: Ledger, after: int | None, timeout: float) -> int:
    """Wait until the views reflect every write acknowledged before now, or, given ``after``
    (a position the caller learnt elsewhere), every write up to it; the position waited for.
    Raises ``Behind`` when that takes longer than ``timeout``, or ``after`` is past the head."""
    target = await ledger.head() if after is None else after
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while runner.position < target:
        following = await ledger.next_event(runner.position)
        if following is None or following > target:
            break  # no event left to project up to the target, which is a marker
        if loop.time() >= deadline:
            raise Behind("unavailable", f"the views did not reach position {target} in {timeout:g}s (they are at "
                         f"{runner.position}); ask again", "after" if after is not None else None)
        # Woken the moment the views get there; a target past the last event is seen as such here.
        await runner.reach(target, min(RECHECK, deadline - loop.time()))
    if after is not None and runner.position < after and after > (head := await ledger.head()):
        raise Behind("invalid", f"position {after} is past the ledger's head ({head})", "after")
    return target
