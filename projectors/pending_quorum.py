"""Quorum items of the ``pending`` view: electors vote while open; a coordinator breaks a tie."""

from __future__ import annotations

from functools import singledispatch

import msgspec

from athenaeum.events import Event
from athenaeum.events.quorum import (
    CoordinatorOverridden,
    CoordinatorTieBroken,
    ProposalAccepted,
    ProposalAcked,
    ProposalExpired,
    ProposalImported,
    ProposalNacked,
    ProposalOpened,
    ProposalRejected,
    ProposalVetoed,
    TieDeclared,
)
from athenaeum.projectors import quorum_status
from athenaeum.projectors.pending_work import Pending, pending_projector


def _clear(pending: Pending, proposal_id: str) -> None:
    """Nothing is left to do on a proposal once voting has ended."""
    status = pending.lookup(quorum_status.VIEW, proposal_id) or {}
    for agent in [*status.get("electorate", []), status.get("coordinator")]:
        if agent:
            pending.remove(agent, proposal_id)


@singledispatch
def _apply(event: Event, pending: Pending) -> None:
    pass


project = pending_projector("quorum", _apply)  # the cases below register on ``_apply``


@_apply.register
def _(event: ProposalOpened, pending: Pending) -> None:
    for agent in event.electorate:
        pending.add(agent, event.key, "vote", msgspec.to_builtins(event.deadline))


@_apply.register
def _(event: ProposalImported, pending: Pending) -> None:
    for step in event.history():
        _apply(step, pending)


@_apply.register(ProposalAcked)
@_apply.register(ProposalNacked)
def _(event: ProposalAcked | ProposalNacked, pending: Pending) -> None:
    pending.remove(event.agent, event.key, "vote")


@_apply.register
def _(event: TieDeclared, pending: Pending) -> None:
    _clear(pending, event.key)
    coordinator = (pending.lookup(quorum_status.VIEW, event.key) or {}).get("coordinator")
    if coordinator:
        pending.add(coordinator, event.key, "tiebreak")


@_apply.register(ProposalAccepted)
@_apply.register(ProposalRejected)
@_apply.register(ProposalVetoed)
@_apply.register(ProposalExpired)
@_apply.register(CoordinatorTieBroken)
@_apply.register(CoordinatorOverridden)
def _(event: Event, pending: Pending) -> None:
    _clear(pending, event.key)
