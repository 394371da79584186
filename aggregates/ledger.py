"""The ledger's checkpoints as an aggregate: each records the running digest over the first
``count`` messages; one count is checkpointed once. Whether the digest is right, only a replay
of the whole ledger can tell: the audit and ``verify-export`` recompute it."""

from __future__ import annotations

from athenaeum.aggregates.context import Context
from athenaeum.aggregates.family import Family
from athenaeum.aggregates.rules import Invalid, Stamp
from athenaeum.aggregates.state import AggregateState, fold
from athenaeum.events import Event
from athenaeum.events.ledger import CHECKPOINTS_ID, LedgerCheckpoint, RecordCheckpoint


class Checkpoints(AggregateState, tag="Checkpoints"):
    count: int
    position: int
    sha256: str


def evolve(state: Checkpoints | None, event: Event) -> Checkpoints | None:
    if isinstance(event, LedgerCheckpoint):
        return Checkpoints(id=event.originator_id, version=event.originator_version, count=event.count,
                           position=event.position, sha256=event.sha256)
    return state


def decide(state: Checkpoints | None, command: RecordCheckpoint, context: Context) -> list[Event]:
    if state is not None and command.count <= state.count:
        raise Invalid(f"the ledger is checkpointed through {state.count} messages already", "count")
    return [Stamp(CHECKPOINTS_ID, state.version if state else 0, context)(
        LedgerCheckpoint, count=command.count, position=command.position, sha256=command.sha256)]


FAMILY = Family("ledger", lambda command: CHECKPOINTS_ID, fold(evolve), decide)
