"""The quorum rules the audit re-runs (PROTOCOLS section 2)."""

from __future__ import annotations

from collections.abc import Sequence

from athenaeum.aggregates import quorum as q
from athenaeum.aggregates.rules import Context
from athenaeum.events import Event
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
from athenaeum.services.audit.recheck import Rechecks, Replayed, own

RECHECKS = Rechecks()


@RECHECKS.of(ProposalOpened)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ProposalOpened)
    return q.open_proposal(own(g, x), c, proposal_id=e.key, text=e.text, electorate=e.electorate,
                           deadline=e.deadline, threshold=e.threshold, total=e.total, veto_on_nack=e.veto_on_nack,
                           coordinator=e.coordinator)


@RECHECKS.of(ProposalAcked)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return q.ack(own(g, x), c)


@RECHECKS.of(ProposalNacked)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, ProposalNacked)
    return q.nack(own(g, x), c, reason=e.reason)


@RECHECKS.of(ProposalVetoed)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return q.nack(own(g, x), c, reason=COORDINATOR_VETO)


@RECHECKS.of(ProposalExpired, TieDeclared)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    return q.expire(own(g, x), c)


@RECHECKS.of(CoordinatorTieBroken)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, CoordinatorTieBroken)
    return q.tiebreak(own(g, x), c, decision=e.decision)


@RECHECKS.of(CoordinatorOverridden)
def _(g: Sequence[Event], c: Context, x: Replayed) -> list[Event]:
    e = g[0]
    assert isinstance(e, CoordinatorOverridden)
    return q.override(own(g, x), c, decision=e.decision, reason=e.reason)
