"""The ratification rules the audit re-runs (PROTOCOLS section 1)."""

from __future__ import annotations

from collections.abc import Sequence

from athenaeum.aggregates import ratification as r
from athenaeum.aggregates.rules import Context
from athenaeum.events import Event
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
from athenaeum.services.audit.recheck import Rechecks, Replayed, own

RECHECKS = Rechecks()


@RECHECKS.of(ArtifactFrozen)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ArtifactFrozen)
    return r.freeze(own(g, x), c, topic=e.key, artifact=e.artifact, roster=e.roster, mode=e.mode,
                    expires_at=e.expires_at, artifact_origin=e.artifact_origin, supersedes=e.supersedes,
                    superseded_exists=bool(e.supersedes) and x.state(e.supersedes) is not None)


@RECHECKS.of(VoteCast)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, VoteCast)
    return r.cast_vote(own(g, x), c, decision=e.decision, artifact_sha256=e.artifact_sha256, dissent=e.dissent)


@RECHECKS.of(VotesTallied)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return r.expire(own(g, x), c)


@RECHECKS.of(HumanDecisionRecorded)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, HumanDecisionRecorded)
    return r.decide(own(g, x), c, decision=e.decision, notes=e.notes, caveats=e.caveats, atoms=e.atoms)


@RECHECKS.of(AtomSplit)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, AtomSplit)
    into = [DissentItem(atom=AtomRef(a.section, a.anchor), objection=a.objection,
                        proposed_resolution=a.proposed_resolution) for a in e.into]
    return r.split(own(g, x), c, atom=e.atom, into=into)


@RECHECKS.of(RatificationCanceled)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return r.cancel(own(g, x), c)
