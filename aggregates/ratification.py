"""Ratification rules (PROTOCOLS.md section 1): unanimous-or-decompose.

``decide`` takes one command of the family; each rule checks everything against the state
before anything happens and returns the new events, or raises the rule's violation. Nothing
reads a clock or writes: the time and all else arrive in the context.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import timedelta

from athenaeum.aggregates.family import Family, existing
from athenaeum.aggregates.ratification_import import import_ratification
from athenaeum.aggregates.ratification_state import Ratification, Status, Vote, evolve
from athenaeum.aggregates.rules import (
    ARTIFACT_LIMIT,
    ActorMismatch,
    AlreadyExists,
    AlreadyVoted,
    Context,
    Invalid,
    NotFound,
    NotHuman,
    NotOpen,
    RuleViolation,
    Stamp,
    VotingClosed,
    deadline_of,
    require_deadline,
    require_electorate,
    require_slug,
    require_text,
)
from athenaeum.aggregates.state import fold
from athenaeum.events import Event
from athenaeum.events.ratification import (
    ArtifactDecomposed,
    ArtifactFrozen,
    ArtifactRatified,
    AtomSplit,
    ContestedAtom,
    Decision,
    DissentItem,
    HumanChoice,
    HumanDecisionRecorded,
    Mode,
    RatificationCanceled,
    RatificationRejected,
    Signature,
    TallyOutcome,
    VoteCast,
    VotesTallied,
    atoms_of,
)
from athenaeum.events.ratification_commands import (
    CancelRatification,
    CastVote,
    ExpireRatification,
    ImportRatification,
    InitRatification,
    RatificationCommand,
    RecordHumanDecision,
    SplitAtom,
)

DEFAULT_WINDOW = timedelta(hours=72)


class NotRostered(RuleViolation):
    code = "not_rostered"


class ShaMismatch(RuleViolation):
    code = "sha_mismatch"


class NotPendingHuman(RuleViolation):
    code = "not_pending_human"


class CaveatIncomplete(RuleViolation):
    code = "caveat_incomplete"


def sha256_of(artifact: str) -> str:
    return hashlib.sha256(artifact.encode()).hexdigest()


def decide(state: Ratification | None, command: RatificationCommand, context: Context) -> list[Event]:
    match command:
        case InitRatification():
            return freeze(state, command, context)
        case CastVote():
            return cast_vote(_existing(state, command.topic), command, context)
        case RecordHumanDecision():
            return record_decision(_existing(state, command.topic), command, context)
        case SplitAtom():
            return split(_existing(state, command.topic), command, context)
        case CancelRatification():
            return cancel(_existing(state, command.topic), context)
        case ExpireRatification():
            return expire(_existing(state, command.topic), context)
        case ImportRatification():
            return import_ratification(state, command, context)
    raise TypeError(f"not a ratification command: {command!r}")


def _existing(state: Ratification | None, topic: str) -> Ratification:
    return existing(state, f"ratification {topic!r}", "topic")


def superseded(command: RatificationCommand, state: Ratification | None) -> Sequence[str]:
    """A freeze that supersedes a topic reads whether that topic exists."""
    return (command.supersedes,) if isinstance(command, InitRatification) and command.supersedes else ()


def freeze(state: Ratification | None, command: InitRatification, context: Context) -> list[Event]:
    topic = command.topic
    if state is not None:
        raise AlreadyExists(f"ratification {topic!r} already exists; re-open as a new topic with supersedes", "topic")
    require_slug(topic, "topic")
    require_text(command.artifact, "artifact", ARTIFACT_LIMIT)
    require_text(command.artifact_origin, "artifact_origin")  # path@git-sha, or inline
    require_electorate(command.roster, "roster")
    sha = sha256_of(command.artifact)
    if command.sha256 is not None and command.sha256.lower() != sha:
        raise ShaMismatch(f"declared sha256 {command.sha256} differs from the artifact's {sha}", "sha256")
    expires_at = deadline_of(command.expires_at, command.expires_in, DEFAULT_WINDOW, context.now,
                             ("expires_at", "expires_in"))
    expires_at = require_deadline(expires_at, context, "expires_at")
    if command.supersedes is not None and context.states.get(command.supersedes) is None:
        raise NotFound(f"supersedes names no ratification {command.supersedes!r}", "supersedes")
    stamp = Stamp(topic, 0, context)
    return [
        stamp(
            ArtifactFrozen,
            initiator=context.actor,
            artifact=command.artifact,
            artifact_sha256=sha,
            artifact_origin=command.artifact_origin,
            roster=tuple(command.roster),
            mode=command.mode,
            expires_at=expires_at,
            supersedes=command.supersedes,
        )
    ]


def cast_vote(state: Ratification, command: CastVote, context: Context) -> list[Event]:
    agent, decision, dissent = context.actor, command.decision, command.dissent
    _require_open(state)
    if context.now >= state.expires_at:
        raise VotingClosed(f"voting on {state.id!r} closed at {state.expires_at.isoformat()}")
    if agent not in state.roster:
        raise NotRostered(f"{agent!r} is not on the roster of {state.id!r}", "agent")
    if state.vote_of(agent) is not None:
        raise AlreadyVoted(f"{agent!r} has already voted on {state.id!r}; votes are immutable", "agent")
    if command.sha256.lower() != state.artifact_sha256:
        raise ShaMismatch(f"attested sha256 {command.sha256} is not the frozen {state.artifact_sha256}", "sha256")
    if decision is Decision.SIGN and dissent:
        raise Invalid("a SIGN carries no dissent", "dissent")
    if decision is Decision.DISSENT:
        if not dissent:
            raise Invalid("a DISSENT needs at least one dissent item", "dissent")
        for item in dissent:
            _require_dissent_text(item)
    stamp = Stamp(state.id, state.version, context)
    vote = stamp(VoteCast, agent=agent, decision=decision, artifact_sha256=state.artifact_sha256,
                 dissent=tuple(dissent))
    votes = (*state.votes, Vote(agent, decision, context.now, tuple(dissent)))
    if len(votes) < len(state.roster):
        return [vote]
    return [vote, *_tally(state, votes, stamp)]


def expire(state: Ratification, context: Context) -> list[Event]:
    """The expiry timer's command: tallies with abstentions; idempotent once tallied."""
    if state.status is not Status.OPEN or context.now < state.expires_at:
        return []
    return _tally(state, state.votes, Stamp(state.id, state.version, context))


def record_decision(state: Ratification, command: RecordHumanDecision, context: Context) -> list[Event]:
    decision, notes, caveats, atoms = command.decision, command.notes, command.caveats, command.atoms
    if state.status is not Status.PENDING_HUMAN:
        raise NotPendingHuman(f"ratification {state.id!r} is {state.status.value}, not pending-human")
    if not context.actor_is_human:
        raise NotHuman(f"{context.actor!r} is not a human principal; only a human decides", "actor")
    if state.awaiting_split:
        raise NotPendingHuman(
            f"ratification {state.id!r} waits for its merge writer to split {', '.join(state.awaiting_split)}"
        )
    for atom_id in [note.atom for note in notes] + [caveat.atom for caveat in caveats] + list(atoms):
        if state.atom(atom_id) is None:
            raise NotFound(f"no contested atom {atom_id!r} in {state.id!r}", "atom")
    if decision is HumanChoice.REWRITE_WITH_CAVEATS:
        covered = {c.atom for c in caveats if (c.verifier or "").strip() or (c.ticket or "").strip()}
        missing = [atom.id for atom in state.atoms if atom.id not in covered]
        if missing:
            raise CaveatIncomplete(f"rewrite-with-caveats needs a verifier or ticket on {', '.join(missing)}", "caveat")
    if decision is HumanChoice.DECOMPOSE_FURTHER and not atoms:
        raise Invalid("decompose-further names at least one atom", "atom")
    stamp = Stamp(state.id, state.version, context)
    recorded = stamp(
        HumanDecisionRecorded,
        decision=decision,
        decided_by=context.actor,
        notes=tuple(notes),
        caveats=tuple(caveats),
        atoms=tuple(atoms) if decision is HumanChoice.DECOMPOSE_FURTHER else (),
    )
    path = f"human-decision: {decision.value}"
    if decision is HumanChoice.ACCEPT_SPLIT:
        return [recorded, stamp(ArtifactRatified, path=path, signatures=_signatures(state, state.votes))]
    if decision is HumanChoice.REWRITE_WITH_CAVEATS:
        ratified = stamp(
            ArtifactRatified,
            path=path,
            signatures=_signatures(state, state.votes),
            ratified_atoms=tuple(atom.id for atom in state.atoms),
            caveats=tuple(caveats),
        )
        return [recorded, ratified]
    if decision is HumanChoice.REJECT:
        return [recorded, stamp(RatificationRejected, reason=path)]
    return [recorded]  # decompose-further: pending-human until the merge writer splits


def split(state: Ratification, command: SplitAtom, context: Context) -> list[Event]:
    """The merge writer splits an atom the human asked to decompose further."""
    atom, into = command.atom, command.into
    if state.status is not Status.PENDING_HUMAN:
        raise NotPendingHuman(f"ratification {state.id!r} is {state.status.value}, not pending-human")
    if context.actor != state.merge_writer:
        raise ActorMismatch(f"only the merge writer {state.merge_writer!r} splits atoms", "actor")
    if atom not in state.awaiting_split:
        raise Invalid(f"atom {atom!r} was not sent back for decomposition", "atom")
    if not into:
        raise Invalid("a split needs at least one new atom", "into")
    for item in into:
        _require_dissent_text(item)
    original = state.atom(atom)
    assert original is not None  # decide() admitted only existing atoms for a split
    first = state.last_atom_number + 1
    new_atoms = tuple(
        ContestedAtom(
            id=f"A{first + offset}",
            section=item.atom.section,
            anchor=item.atom.anchor,
            objection=item.objection,
            raised_by=original.raised_by,
            proposed_resolution=item.proposed_resolution,
        )
        for offset, item in enumerate(into)
    )
    return [Stamp(state.id, state.version, context)(AtomSplit, atom=atom, into=new_atoms)]


def cancel(state: Ratification, context: Context) -> list[Event]:
    if context.actor != state.initiator and not context.actor_is_human:
        raise ActorMismatch(f"only the initiator {state.initiator!r} or a human cancels", "actor")
    _require_open(state)
    if context.now >= state.expires_at:  # the votes as they stood at expiry are tallied, however late
        raise VotingClosed(f"ratification {state.id!r} closed at {state.expires_at.isoformat()}; it awaits its tally")
    return [Stamp(state.id, state.version, context)(RatificationCanceled, by=context.actor)]


def _require_open(state: Ratification) -> None:
    if state.status is not Status.OPEN:
        raise NotOpen(f"ratification {state.id!r} is {state.status.value}, not open")


def _require_dissent_text(item: DissentItem) -> None:
    require_text(item.atom.section, "dissent.atom.section")
    require_text(item.atom.anchor, "dissent.atom.anchor")
    require_text(item.objection, "dissent.objection")


def _tally(state: Ratification, votes: Sequence[Vote], stamp: Stamp) -> list[Event]:
    voted = {vote.agent for vote in votes}
    signs = tuple(sorted(v.agent for v in votes if v.decision is Decision.SIGN))
    dissents = tuple(sorted(v.agent for v in votes if v.decision is Decision.DISSENT))
    abstentions = tuple(sorted(agent for agent in state.roster if agent not in voted))
    merge_writer = min(voted) if voted else None
    if len(signs) == len(state.roster):  # (an imported sealed vote is cast, yet no SIGN)
        outcome = TallyOutcome.RATIFIED
    elif state.mode is Mode.FAST:
        outcome = TallyOutcome.REJECTED
    else:
        outcome = TallyOutcome.DECOMPOSED
    tallied = stamp(
        VotesTallied,
        merge_writer=merge_writer,
        signs=signs,
        dissents=dissents,
        abstentions=abstentions,
        outcome=outcome,
    )
    if outcome is TallyOutcome.RATIFIED:
        return [tallied, stamp(ArtifactRatified, path="all-SIGN", signatures=_signatures(state, votes))]
    if outcome is TallyOutcome.REJECTED:
        return [tallied, stamp(RatificationRejected, reason="fast mode: a dissent or an abstention")]
    return [tallied, stamp(ArtifactDecomposed, atoms=atoms_of(votes), abstentions=abstentions)]


def _signatures(state: Ratification, votes: Sequence[Vote]) -> tuple[Signature, ...]:
    return tuple(
        Signature(agent=v.agent, cast_at=v.cast_at, artifact_sha256=state.artifact_sha256)
        for v in sorted(votes, key=lambda v: v.agent)
        if v.decision is Decision.SIGN
    )


FAMILY = Family("ratification", lambda command: command.topic, fold(evolve), decide, superseded)
