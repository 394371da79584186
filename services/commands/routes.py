"""The one table of commands: family, verb, command Struct, and what runs it.

NATS subjects (``athenaeum.cmd.<family>.<verb>``), and later HTTP paths and CLI verbs, are
all read from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from athenaeum.events.commands import Command
from athenaeum.events.ratification_commands import (
    CancelRatification,
    CastVote,
    ExpireRatification,
    InitRatification,
    RecordHumanDecision,
    SplitAtom,
)
from athenaeum.events.quorum_commands import (
    AckProposal,
    BreakTie,
    ExpireProposal,
    NackProposal,
    OverrideProposal,
    ProposeQuorum,
)
from athenaeum.events.page_commands import (
    AgeAgent,
    AgePage,
    ApprovePage,
    ChangeLifecycle,
    DisputePage,
    EditPage,
    EndorsePage,
    InitPage,
    ReadPage,
    RegisterAgent,
    ResolveDispute,
)
from athenaeum.events.task_commands import (
    ClaimTask,
    CreateTask,
    EndRoleSession,
    PostReview,
    PostRuling,
    ResetTask,
    TransitionTask,
)
from athenaeum.events.thread_commands import (
    AskQuestion,
    CloseThread,
    Contribute,
    OpenThread,
    RecognizeClosure,
    RefuseClosure,
    ReopenThread,
)
from athenaeum.services.commands import aging_routes as aging
from athenaeum.services.commands import page_routes as page
from athenaeum.services.commands import quorum_routes as quorum
from athenaeum.services.commands import ratification_routes as ratification
from athenaeum.services.commands import task_routes as task
from athenaeum.services.commands import thread_routes as thread
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.timers.deadlines import Deadline
from athenaeum.services.commands.replies import Reply

SUBJECT_PREFIX = "athenaeum.cmd"


class Route(NamedTuple):
    family: str
    verb: str
    command: type[Command]
    run: Callable[[CommandHandler, Any, str], Reply]

    @property
    def subject(self) -> str:
        return f"{SUBJECT_PREFIX}.{self.family}.{self.verb}"


ROUTES = (
    Route("ratification", "init", InitRatification, ratification.init),
    Route("ratification", "vote", CastVote, ratification.vote),
    Route("ratification", "decide", RecordHumanDecision, ratification.decide),
    Route("ratification", "split", SplitAtom, ratification.split),
    Route("ratification", "cancel", CancelRatification, ratification.cancel),
    Route("ratification", "expire", ExpireRatification, ratification.expire),
    Route("quorum", "propose", ProposeQuorum, quorum.propose),
    Route("quorum", "ack", AckProposal, quorum.ack),
    Route("quorum", "nack", NackProposal, quorum.nack),
    Route("quorum", "tiebreak", BreakTie, quorum.tiebreak),
    Route("quorum", "override", OverrideProposal, quorum.override),
    Route("quorum", "expire", ExpireProposal, quorum.expire),
    Route("thread", "open", OpenThread, thread.open_thread),
    Route("thread", "ask", AskQuestion, thread.ask),
    Route("thread", "contribute", Contribute, thread.contribute),
    Route("thread", "close", CloseThread, thread.close),
    Route("thread", "reopen", ReopenThread, thread.reopen),
    Route("thread", "recognize", RecognizeClosure, thread.recognize),
    Route("thread", "refuse", RefuseClosure, thread.refuse),
    Route("agent", "register", RegisterAgent, page.register),
    Route("page", "init", InitPage, page.init),
    Route("page", "read", ReadPage, page.read),
    Route("page", "endorse", EndorsePage, page.endorse),
    Route("page", "edit", EditPage, page.edit),
    Route("page", "dispute", DisputePage, page.dispute),
    Route("page", "resolve", ResolveDispute, page.resolve),
    Route("page", "approve", ApprovePage, page.approve),
    Route("page", "lifecycle", ChangeLifecycle, page.change_lifecycle),
    Route("page", "age", AgePage, aging.age_page),
    Route("agent", "age", AgeAgent, aging.age_agent),
    Route("task", "create", CreateTask, task.create),
    Route("task", "claim", ClaimTask, task.claim),
    Route("task", "transition", TransitionTask, task.transition),
    Route("task", "review", PostReview, task.review),
    Route("task", "rule", PostRuling, task.rule),
    Route("task", "session-ended", EndRoleSession, task.session_ended),
    Route("task", "reset", ResetTask, task.reset),
)

DEADLINES: dict[str, Deadline] = {
    deadline.family: deadline
    for deadline in (ratification.DEADLINE, quorum.DEADLINE, aging.PAGE_AGING, aging.DORMANCY)
}
