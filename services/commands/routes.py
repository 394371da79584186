"""The one table of commands: a row is the command's type, the family that decides it (which
aggregate it decides on, how that state folds, the family's ``decide``), and where it is
offered. NATS subjects (``athenaeum.cmd.<group>.<verb>``), HTTP paths
(``/commands/<group>/<verb>``), the JSON Schema, the OpenAPI document and the audit's reading
of stored commands all come from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from athenaeum.aggregates import fleet, ledger, page, quorum, ratification, task, thread
from athenaeum.aggregates.family import Family
from athenaeum.events.commands import Command
from athenaeum.events.ledger import RecordCheckpoint
from athenaeum.events.fleet_commands import AgeAgent, IssueToken, RegisterAgent, RevokeAgent, RevokeToken, RotateKey
from athenaeum.events.page_commands import (
    AgePage,
    ApprovePage,
    ChangeLifecycle,
    DisputePage,
    EditPage,
    EndorsePage,
    ImportPage,
    InitPage,
    ReadPage,
    ReassessPage,
    ResolveDispute,
)
from athenaeum.events.quorum_commands import (
    AckProposal,
    BreakTie,
    ExpireProposal,
    ImportProposal,
    NackProposal,
    OverrideProposal,
    ProposeQuorum,
)
from athenaeum.events.ratification_commands import (
    CancelRatification,
    CastVote,
    ExpireRatification,
    ImportRatification,
    InitRatification,
    RecordHumanDecision,
    SplitAtom,
)
from athenaeum.events.task_commands import (
    ClaimTask,
    CreateTask,
    EndRoleSession,
    ImportTask,
    PostReview,
    PostRuling,
    ResetTask,
    TransitionTask,
)
from athenaeum.events.thread_commands import (
    AskQuestion,
    CloseThread,
    Contribute,
    ImportThread,
    OpenThread,
    RecognizeClosure,
    RefuseClosure,
    ReopenThread,
)

SUBJECT_PREFIX = "athenaeum.cmd"


def no_advice(command: Any) -> list[str]:
    return []


class Route(NamedTuple):
    group: str  # the subject's and path's family token (the fleet's commands are ``agent``)
    verb: str
    command: type[Command]
    family: Family
    exposed: bool = True  # offered over NATS and HTTP; the ledger's own checkpoints are not
    # Ids the service derives when the sender leaves them out (a proposal's), and how many
    # derived ids to try when one is taken.
    assign: Callable[[Any, str, str, int], Any] | None = None
    attempts: int = 1
    advise: Callable[[Any], list[str]] = no_advice  # warnings for an accepted command
    # Sent by a human only, whatever its rules say: an import records outcomes (ratified,
    # accepted, canonical) that no vote here decided, on the word of whoever sends it.
    humans_only: bool = False

    @property
    def name(self) -> str:
        """How the ledger names the command in the record it stores with its events."""
        return f"{self.group}.{self.verb}"

    @property
    def subject(self) -> str:
        return f"{SUBJECT_PREFIX}.{self.group}.{self.verb}"


def _family(family: Family, group: str, **verbs: type[Command]) -> tuple[Route, ...]:
    return tuple(Route(group, verb.replace("_", "-"), command, family) for verb, command in verbs.items())


ROUTES = (
    *_family(ratification.FAMILY, "ratification", init=InitRatification, vote=CastVote, decide=RecordHumanDecision,
             split=SplitAtom, cancel=CancelRatification, expire=ExpireRatification),
    # An original ratification folder, recorded as found (``athenaeum import``).
    Route("ratification", "import", ImportRatification, ratification.FAMILY, humans_only=True),
    Route("quorum", "propose", ProposeQuorum, quorum.FAMILY, assign=quorum.with_proposal_id,
          attempts=quorum.ID_ATTEMPTS, advise=quorum.advice),
    *_family(quorum.FAMILY, "quorum", ack=AckProposal, nack=NackProposal, tiebreak=BreakTie,
             override=OverrideProposal, expire=ExpireProposal),
    # An original quorum scratchpad, recorded as found (``athenaeum import``).
    Route("quorum", "import", ImportProposal, quorum.FAMILY, humans_only=True),
    *_family(thread.FAMILY, "thread", open=OpenThread, ask=AskQuestion, contribute=Contribute, close=CloseThread,
             reopen=ReopenThread, recognize=RecognizeClosure, refuse=RefuseClosure),
    Route("thread", "import", ImportThread, thread.FAMILY, humans_only=True),
    *_family(fleet.FAMILY, "agent", register=RegisterAgent, rotate_key=RotateKey, revoke=RevokeAgent, token=IssueToken,
             revoke_token=RevokeToken, age=AgeAgent),
    *_family(page.FAMILY, "page", init=InitPage, read=ReadPage, endorse=EndorsePage, edit=EditPage,
             dispute=DisputePage, resolve=ResolveDispute, approve=ApprovePage, lifecycle=ChangeLifecycle,
             age=AgePage),
    # An original page file, recorded as found (``athenaeum import``).
    Route("page", "import", ImportPage, page.FAMILY, humans_only=True),
    # The timer's, when the clock alone may have moved a page's readiness: each one appends.
    Route("page", "reassess", ReassessPage, page.FAMILY, exposed=False),
    *_family(task.FAMILY, "task", create=CreateTask, claim=ClaimTask, transition=TransitionTask, review=PostReview,
             rule=PostRuling, session_ended=EndRoleSession, reset=ResetTask),
    # A task of the original arbitrator's tables, recorded as found (``athenaeum import --postgres``).
    Route("task", "import", ImportTask, task.FAMILY, humans_only=True),
    Route("ledger", "checkpoint", RecordCheckpoint, ledger.FAMILY, exposed=False),
)
EXPOSED = tuple(route for route in ROUTES if route.exposed)
BY_COMMAND: dict[type, Route] = {route.command: route for route in ROUTES}
BY_NAME: dict[str, Route] = {route.name: route for route in ROUTES}
