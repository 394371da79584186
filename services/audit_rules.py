"""What the rules would have appended: for the first event of each command in the ledger,
the rule call that produces it, re-run on the state before it. A history the rules would
have refused, or whose events differ from what they produce, did not pass the command service.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from athenaeum.aggregates import crystallization, fleet
from athenaeum.aggregates import page as p
from athenaeum.aggregates import quorum as q
from athenaeum.aggregates import ratification as r
from athenaeum.aggregates import task as k
from athenaeum.aggregates import task_arbitration as arbitration
from athenaeum.aggregates import task_review as review
from athenaeum.aggregates import thread as t
from athenaeum.aggregates.page_consensus import Member
from athenaeum.aggregates.rules import Context
from athenaeum.events import Event
from athenaeum.events.fleet import FLEET_ID, AgentRegistered, AgentWentDormant
from athenaeum.events.page import (
    CanonApproved,
    DisputeResolved,
    DocumentRead,
    EndorsementDisputed,
    EndorsementRecorded,
    LifecycleChanged,
    PageInitialized,
    PageRevised,
    PendingAged,
    ReadinessReassessed,
)
from athenaeum.events.quorum import (
    COORDINATOR_VETO,
    CoordinatorOverridden,
    CoordinatorTieBroken,
    ProposalAcked,
    ProposalExpired,
    ProposalNacked,
    ProposalOpened,
    ProposalVetoed,
    TieDeclared,
)
from athenaeum.events.ratification import (
    ArtifactFrozen,
    AtomRef,
    AtomSplit,
    DissentItem,
    HumanDecisionRecorded,
    RatificationCanceled,
    VoteCast,
    VotesTallied,
)
from athenaeum.events.task import (
    TASK_IDS,
    BuildReported,
    ContradictionReported,
    EngineeringStarted,
    ReviewConcluded,
    ReviewPosted,
    ReviewStarted,
    RoleSessionEnded,
    RulingPosted,
    TaskClaimed,
    TaskFailed,
    TaskIdIssued,
    TaskReset,
)
from athenaeum.events.task_commands import FindingInput, ResolutionInput
from athenaeum.events.thread import (
    ClosureRecognized,
    ClosureRefused,
    EntryAppended,
    EntryKind,
    OpenQuestionAdded,
    ThreadOpened,
)


class Replayed(NamedTuple):
    """What a re-check may read: states before the command, the deployment's configuration,
    and the fleet as the views saw it."""

    state: Callable[[str], Any]  # an aggregate's state by id, None when it has no events yet
    bootstrap: bool  # anyone may register on an empty roster (no configured humans)
    members: Callable[[int | None], Sequence[Member]]  # as of a position (None: as of the command)


Recheck = Callable[[Sequence[Event], Context, Replayed], list[Event]]
RECHECKS: dict[type, Recheck] = {}


def recheck(*kinds: type) -> Callable[[Recheck], Recheck]:
    def register(fn: Recheck) -> Recheck:
        for kind in kinds:
            RECHECKS[kind] = fn
        return fn

    return register


def _own(group: Sequence[Event], replayed: Replayed) -> Any:
    return replayed.state(group[0].originator_id)


# Ratification
@recheck(ArtifactFrozen)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ArtifactFrozen)
    return r.freeze(_own(g, x), c, topic=e.key, artifact=e.artifact, roster=e.roster, mode=e.mode,
                    expires_at=e.expires_at, artifact_origin=e.artifact_origin, supersedes=e.supersedes,
                    superseded_exists=bool(e.supersedes) and x.state(e.supersedes) is not None)


@recheck(VoteCast)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, VoteCast)
    return r.cast_vote(_own(g, x), c, decision=e.decision, artifact_sha256=e.artifact_sha256, dissent=e.dissent)


@recheck(VotesTallied)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return r.expire(_own(g, x), c)


@recheck(HumanDecisionRecorded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, HumanDecisionRecorded)
    return r.decide(_own(g, x), c, decision=e.decision, notes=e.notes, caveats=e.caveats, atoms=e.atoms)


@recheck(AtomSplit)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, AtomSplit)
    into = [DissentItem(atom=AtomRef(a.section, a.anchor), objection=a.objection,
                        proposed_resolution=a.proposed_resolution) for a in e.into]
    return r.split(_own(g, x), c, atom=e.atom, into=into)


@recheck(RatificationCanceled)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return r.cancel(_own(g, x), c)


# Quorum
@recheck(ProposalOpened)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ProposalOpened)
    return q.open_proposal(_own(g, x), c, proposal_id=e.key, text=e.text, electorate=e.electorate,
                           deadline=e.deadline, threshold=e.threshold, total=e.total, veto_on_nack=e.veto_on_nack,
                           coordinator=e.coordinator)


@recheck(ProposalAcked)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return q.ack(_own(g, x), c)


@recheck(ProposalNacked)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ProposalNacked)
    return q.nack(_own(g, x), c, reason=e.reason)


@recheck(ProposalVetoed)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return q.nack(_own(g, x), c, reason=COORDINATOR_VETO)


@recheck(ProposalExpired, TieDeclared)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return q.expire(_own(g, x), c)


@recheck(CoordinatorTieBroken)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, CoordinatorTieBroken)
    return q.tiebreak(_own(g, x), c, decision=e.decision)


@recheck(CoordinatorOverridden)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, CoordinatorOverridden)
    return q.override(_own(g, x), c, decision=e.decision, reason=e.reason)


# Threads
@recheck(ThreadOpened)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e, first = g[0], g[1] if len(g) > 1 else None
    assert isinstance(e, ThreadOpened)
    body = first.body if isinstance(first, EntryAppended) else ""
    axis = first.declared_axis if isinstance(first, EntryAppended) else None
    return t.open_thread(_own(g, x), c, slug=e.key, text=e.context, target=e.target, body=body, declared_axis=axis,
                         questions=[oq.text for oq in e.open_questions], topics=e.topics, participants=e.participants)


@recheck(OpenQuestionAdded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, OpenQuestionAdded)
    return t.ask(_own(g, x), c, question=e.text)


@recheck(EntryAppended)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, EntryAppended)
    scores = e.last_eval.v if e.last_eval else None
    state = _own(g, x)
    if e.kind is EntryKind.CLOSURE:
        assert e.current_at_close is not None and e.proposed_crystallization is not None
        return t.close(state, c, evaluation=scores, current=e.current_at_close, summary=e.summary or "",
                       pages=e.proposed_crystallization.canon_pages,
                       patch_summary=e.proposed_crystallization.patch_summary)
    if e.kind is EntryKind.REOPEN:
        return t.reopen(state, c, evaluation=scores, reason=e.reason or "", discovery=e.body)
    return t.contribute(state, c, body=e.body, evaluation=scores, declared_axis=e.declared_axis)


@recheck(ClosureRecognized)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return crystallization.recognize(_own(g, x), c, x.state)


@recheck(ClosureRefused)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ClosureRefused)
    return t.refuse(_own(g, x), c, reason=e.reason)


# Pages and the fleet
@recheck(PageInitialized)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, PageInitialized)
    return p.init_page(_own(g, x), c, page=e.key, content=e.content, scope=e.scope, from_thread=e.crystallized_from)


@recheck(DocumentRead)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, DocumentRead)
    return p.read(_own(g, x), c, session_id=e.session_id)


@recheck(EndorsementRecorded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, EndorsementRecorded)
    return p.endorse(_own(g, x), c, status=e.status, session_id=e.session_id, members=x.members(e.as_of_position),
                     as_of_position=e.as_of_position)


@recheck(EndorsementDisputed)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, EndorsementDisputed)
    return p.dispute(_own(g, x), c, section=e.disputed, thread=e.thread)


@recheck(PageRevised)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, PageRevised)
    return p.edit(_own(g, x), c, content=e.content, significant=e.significant, crystallized_from=e.crystallized_from)


@recheck(DisputeResolved)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, DisputeResolved)
    return p.resolve(_own(g, x), c, agent=e.agent, decision=e.decision, thread=e.thread,
                     members=x.members(e.as_of_position), as_of_position=e.as_of_position)


@recheck(CanonApproved)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, CanonApproved)
    return p.approve(_own(g, x), c, level=e.level, members=x.members(e.as_of_position), as_of_position=e.as_of_position)


@recheck(LifecycleChanged)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, LifecycleChanged)
    return p.change_lifecycle(_own(g, x), c, to=e.to, reason=e.reason)


@recheck(PendingAged)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, PendingAged)
    return p.age(_own(g, x), c, members=x.members(e.as_of_position), as_of_position=e.as_of_position)


@recheck(ReadinessReassessed)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ReadinessReassessed)
    return p.reassess(_own(g, x), c, members=x.members(e.as_of_position), as_of_position=e.as_of_position)


@recheck(AgentWentDormant)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, AgentWentDormant)
    return fleet.mark_dormant(x.state(FLEET_ID), c, name=e.name, members=x.members(e.as_of_position),
                              as_of_position=e.as_of_position)


@recheck(AgentRegistered)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, AgentRegistered)
    return fleet.register(x.state(FLEET_ID), c, name=e.name, human=e.human, bootstrap=x.bootstrap)


# Tasks
@recheck(TaskIdIssued)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    created = g[1] if len(g) > 1 else None  # the creation issued with the id
    names = ("project_id", "title", "plan_path", "review_cycle_budget", "reviewer_roles")
    return k.create(x.state(TASK_IDS), c, **{name: getattr(created, name, "") for name in names})


@recheck(TaskClaimed)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return k.claim(_own(g, x), c)


_TRANSITIONS: dict[type, Callable[[Event], tuple[str, dict[str, Any]]]] = {
    EngineeringStarted: lambda e: ("engineering", {}),
    BuildReported: lambda e: ("built", {"buildStatus": e.build_status.value, "commitSha": e.commit_sha}),
    ReviewStarted: lambda e: ("reviewing", {}),
    ContradictionReported: lambda e: ("arbitrating", {"findingIds": list(e.finding_ids), "notes": e.notes}),
    TaskFailed: lambda e: ("failed", {"failureReason": e.failure_reason.value, "failureDetail": e.failure_detail}),
}


@recheck(*_TRANSITIONS)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    to, payload = _TRANSITIONS[type(g[0])](g[0])
    return k.transition(_own(g, x), c, to=to, payload=payload)


@recheck(ReviewConcluded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return review.conclude(_own(g, x), c)


@recheck(ReviewPosted)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ReviewPosted)
    findings = [FindingInput(severity=f.severity, title=f.title, description=f.description, evidence=f.evidence,
                             fix=f.fix, file_path=f.file_path, line=f.line, ordinal=f.ordinal) for f in e.findings]
    return review.post_review(_own(g, x), c, reviewer_role=e.reviewer_role, verdict=e.verdict, raw_markdown=e.raw_markdown,
                         findings=findings, cycle=e.cycle)


@recheck(RulingPosted)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, RulingPosted)
    state = _own(g, x)
    resolution = e.contradiction_resolution
    given = None if resolution is None else ResolutionInput(
        upheld_finding_id=resolution.upheld_finding_id, retired_finding_id=resolution.retired_finding_id,
        rationale=resolution.rationale)
    return arbitration.post_ruling(state, c, project_id=state.project_id if state else "", trigger=e.trigger.value,
                         ruling=e.ruling.value, ruling_markdown=e.ruling_markdown, resolution=given)


@recheck(RoleSessionEnded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, RoleSessionEnded)
    return k.end_role_session(_own(g, x), c, role=e.role, exit_code=e.exit_code)


@recheck(TaskReset)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return k.reset(_own(g, x), c)

