"""A ratification's state, folded from its events. Applies facts only: never raises."""

from __future__ import annotations

import enum
from datetime import datetime

import msgspec

from athenaeum.aggregates.state import AggregateState
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
    ImportedStatus,
    Mode,
    RatificationCanceled,
    RatificationImported,
    RatificationRejected,
    VoteCast,
    VotesTallied,
    atoms_of,
)


class Status(enum.Enum):
    OPEN = "open"
    PENDING_HUMAN = "pending-human"
    RATIFIED = "ratified"
    REJECTED = "rejected"
    CANCELED = "canceled"


class Vote(msgspec.Struct, frozen=True):
    agent: str
    decision: Decision | None  # None: an imported sealed vote, cast but not known how
    cast_at: datetime
    dissent: tuple[DissentItem, ...]


class Ratification(AggregateState, tag="Ratification"):
    initiator: str
    artifact_sha256: str
    roster: tuple[str, ...]
    mode: Mode
    expires_at: datetime
    status: Status = Status.OPEN
    votes: tuple[Vote, ...] = ()
    merge_writer: str | None = None
    atoms: tuple[ContestedAtom, ...] = ()
    abstentions: tuple[str, ...] = ()
    awaiting_split: tuple[str, ...] = ()  # atoms a human asked to decompose further
    last_atom_number: int = 0  # atom ids are never reused, even after a split
    imported_sha256: str | None = None  # an imported record's content: importing it again adds nothing

    def vote_of(self, agent: str) -> Vote | None:
        return next((vote for vote in self.votes if vote.agent == agent), None)

    def atom(self, atom_id: str) -> ContestedAtom | None:
        return next((atom for atom in self.atoms if atom.id == atom_id), None)


def _frozen(event: ArtifactFrozen) -> Ratification:
    return Ratification(
        id=event.originator_id,
        version=event.originator_version,
        initiator=event.initiator,
        artifact_sha256=event.artifact_sha256,
        roster=event.roster,
        mode=event.mode,
        expires_at=event.expires_at,
    )


def _imported(event: RatificationImported) -> Ratification:
    votes = tuple(Vote(v.agent, v.decision, v.cast_at, v.dissent) for v in event.counted_votes())
    status = Status(event.status.value)
    decomposed = event.status is ImportedStatus.PENDING_HUMAN
    voters = sorted(vote.agent for vote in votes)
    atoms = atoms_of(votes) if decomposed else ()
    return msgspec.structs.replace(
        _frozen(event),
        status=status,
        votes=votes,
        merge_writer=voters[0] if voters and status is not Status.OPEN else None,
        atoms=atoms,
        abstentions=tuple(a for a in sorted(event.roster) if a not in voters) if decomposed else (),
        last_atom_number=len(atoms),
        imported_sha256=event.content_sha256,
    )


def evolve(state: Ratification | None, event: Event) -> Ratification | None:
    replace = msgspec.structs.replace
    match event:
        case RatificationImported():  # (a kind of freeze: matched first)
            return _imported(event)
        case ArtifactFrozen():
            return _frozen(event)
    if state is None:
        return None  # history before the freeze is not a ratification; the audit reports it
    match event:
        case VoteCast():
            vote = Vote(event.agent, event.decision, event.timestamp, event.dissent)
            return replace(state, votes=(*state.votes, vote))
        case VotesTallied():
            return replace(state, merge_writer=event.merge_writer, abstentions=event.abstentions)
        case ArtifactDecomposed():
            return replace(
                state, status=Status.PENDING_HUMAN, atoms=event.atoms, last_atom_number=len(event.atoms)
            )
        case HumanDecisionRecorded(decision=HumanChoice.DECOMPOSE_FURTHER):
            return replace(state, awaiting_split=event.atoms)
        case AtomSplit():
            atoms = tuple(a for a in state.atoms if a.id != event.atom) + event.into
            awaiting = tuple(a for a in state.awaiting_split if a != event.atom)
            numbered = state.last_atom_number + len(event.into)
            return replace(state, atoms=atoms, awaiting_split=awaiting, last_atom_number=numbered)
        case ArtifactRatified():
            return replace(state, status=Status.RATIFIED)
        case RatificationRejected():
            return replace(state, status=Status.REJECTED)
        case RatificationCanceled():
            return replace(state, status=Status.CANCELED)
    return state
