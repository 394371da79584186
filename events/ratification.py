"""Ratification events (PROTOCOLS.md section 1): a roster attests an immutable artifact.

The aggregate id (``originator_id``) is the topic.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from datetime import datetime
from pathlib import PurePath
from typing import Protocol

import msgspec

from athenaeum.events.base import Event
from athenaeum.events.constraints import Said, Text
from athenaeum.events.imported import ImportedFile, ImportFinding


class Mode(enum.Enum):
    STANDARD = "standard"  # any dissent or abstention decomposes, for a human to decide
    FAST = "fast"  # low stakes: any dissent or abstention rejects


class Decision(enum.Enum):
    SIGN = "SIGN"
    DISSENT = "DISSENT"


class Resolution(enum.Enum):
    VERIFIER = "verifier"
    TICKET = "ticket"
    REWRITE = "rewrite"
    CARVE_CAVEAT = "carve-caveat"


class HumanChoice(enum.Enum):
    ACCEPT_SPLIT = "accept-split"
    DECOMPOSE_FURTHER = "decompose-further"
    REWRITE_WITH_CAVEATS = "rewrite-with-caveats"
    REJECT = "reject"


class TallyOutcome(enum.Enum):
    RATIFIED = "ratified"  # every rostered agent signed
    DECOMPOSED = "decomposed"  # standard mode with a dissent or an abstention
    REJECTED = "rejected"  # fast mode with a dissent or an abstention


class AtomRef(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Where in the artifact an objection applies."""

    section: Said
    anchor: Said


class DissentItem(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    atom: AtomRef
    objection: Said
    proposed_resolution: Resolution


class ContestedAtom(msgspec.Struct, frozen=True):
    """A dissent lifted into the decomposition, with its stable id ``A1``, ``A2``, ..."""

    id: str
    section: str
    anchor: str
    objection: str
    raised_by: str
    proposed_resolution: Resolution


class Signature(msgspec.Struct, frozen=True):
    agent: str
    cast_at: datetime  # the vote's own time, never the tally's
    artifact_sha256: str


class Note(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    atom: Text
    note: Text


class Caveat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    atom: Text
    verifier: Text | None = None
    ticket: Text | None = None


class ImportedStatus(enum.Enum):
    """A ratification's status as the original manifest records it."""

    OPEN = "open"
    PENDING_HUMAN = "pending-human"
    RATIFIED = "ratified"
    REJECTED = "rejected"


class ImportedVote(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A vote file as found: the agent and the sha it names, however they disagree with the
    file's name or the artifact; the rules, not the import, decide whether it counts. No
    decision: the file is sealed (a replay of a vote cast before the tally, which is blind): it
    was cast, how is not known, so it is never a SIGN."""

    agent: Text
    decision: Decision | None
    artifact_sha256: Text
    cast_at: datetime
    dissent: tuple[DissentItem, ...] = ()


class ArtifactFrozen(Event, tag="ArtifactFrozen"):
    initiator: str
    artifact: str
    artifact_sha256: str
    artifact_origin: str
    roster: tuple[str, ...]
    mode: Mode
    expires_at: datetime
    supersedes: str | None = None


# The folders the original tools keep their topics in: dancer's (also the ledger's own) and fleet-ratify's.
RATIFICATION_FOLDERS = (".athenaeum", ".fleet-ratify")


class RatificationImported(ArtifactFrozen, tag="RatificationImported", kw_only=True):
    """An original ratification folder, recorded as found: a freeze whose history came with it.
    ``initiator`` and the votes are what the files say; the event's actor is the importer."""

    status: ImportedStatus
    votes: tuple[ImportedVote, ...]
    source: str  # where the folder was found
    content_sha256: str  # of the whole record: importing it again adds nothing
    files: tuple[ImportedFile, ...]  # every file but artifact.md, whose text is ``artifact``
    findings: tuple[ImportFinding, ...]

    def counted_votes(self) -> tuple[ImportedVote, ...]:
        """The votes the rules count: a rostered agent's first, on the artifact's sha (a
        mismatched hash is void). The others stay in the record, marked by its findings."""
        counted: dict[str, ImportedVote] = {}
        for vote in self.votes:
            if vote.agent in self.roster and vote.artifact_sha256.lower() == self.artifact_sha256:
                counted.setdefault(vote.agent, vote)
        return tuple(counted.values())

    def found_in(self) -> str:
        """The folder of topics it was found in: written back there, the tool that wrote it reads it."""
        folder = PurePath(self.source).parent.name
        return folder if folder in RATIFICATION_FOLDERS else RATIFICATION_FOLDERS[0]


class VoteCast(Event, tag="VoteCast"):
    agent: str
    decision: Decision
    artifact_sha256: str
    dissent: tuple[DissentItem, ...] = ()


class VotesTallied(Event, tag="VotesTallied"):
    merge_writer: str | None  # the first voter by slug; none when nobody voted
    signs: tuple[str, ...]
    dissents: tuple[str, ...]
    abstentions: tuple[str, ...]  # ABSTAIN_BY_TIMEOUT: a caveat for the human, never a yes
    outcome: TallyOutcome


class ArtifactDecomposed(Event, tag="ArtifactDecomposed"):
    atoms: tuple[ContestedAtom, ...]
    abstentions: tuple[str, ...]


class HumanDecisionRecorded(Event, tag="HumanDecisionRecorded"):
    decision: HumanChoice
    decided_by: str
    notes: tuple[Note, ...] = ()
    caveats: tuple[Caveat, ...] = ()
    atoms: tuple[str, ...] = ()  # the atoms to decompose further


class AtomSplit(Event, tag="AtomSplit"):
    """The merge writer splits an atom the human asked to decompose further."""

    atom: str
    into: tuple[ContestedAtom, ...]


class ArtifactRatified(Event, tag="ArtifactRatified"):
    path: str  # "all-SIGN" or "human-decision: <choice>"
    signatures: tuple[Signature, ...]
    ratified_atoms: tuple[str, ...] = ()
    caveats: tuple[Caveat, ...] = ()


class RatificationRejected(Event, tag="RatificationRejected"):
    reason: str


class RatificationCanceled(Event, tag="RatificationCanceled"):
    by: str


class Dissenting(Protocol):
    agent: str
    dissent: tuple[DissentItem, ...]


def atoms_of(votes: Iterable[Dissenting]) -> tuple[ContestedAtom, ...]:
    """The contested atoms a tally lifts from the dissents, numbered in the order of the
    dissenters' slugs: atoms come only from dissenters (the writer never invents a split)."""
    items = [(v.agent, item) for v in sorted(votes, key=lambda v: v.agent) for item in v.dissent]
    return tuple(
        ContestedAtom(
            id=f"A{number}",
            section=item.atom.section,
            anchor=item.atom.anchor,
            objection=item.objection,
            raised_by=agent,
            proposed_resolution=item.proposed_resolution,
        )
        for number, (agent, item) in enumerate(items, start=1)
    )


RatificationEvent = (
    ArtifactFrozen
    | RatificationImported
    | VoteCast
    | VotesTallied
    | ArtifactDecomposed
    | HumanDecisionRecorded
    | AtomSplit
    | ArtifactRatified
    | RatificationRejected
    | RatificationCanceled
)
