"""An original quorum scratchpad imported (``athenaeum import``): recorded as found, the rules
it breaks marked, never refused for them; from then on an open one continues under the rules
(its electors ACK and NACK it, it resolves the moment its outcome is certain, or at its deadline)."""

from __future__ import annotations

from athenaeum.aggregates.imported import recorded
from athenaeum.aggregates.quorum_state import Proposal
from athenaeum.aggregates.rules import (
    Context, Invalid, Stamp, require_electorate, require_schedulable, require_text,
)
from athenaeum.events import Event, family_id
from athenaeum.events.quorum import ImportedStatus, ProposalImported
from athenaeum.events.quorum_commands import ImportProposal


def import_proposal(state: Proposal | None, command: ImportProposal, context: Context) -> list[Event]:
    require_text(command.text, "text")
    n = len(command.electorate)
    if command.status is ImportedStatus.OPEN:  # it continues live: the rules of an opening hold
        require_electorate(command.electorate, "electorate")
        if not 1 <= command.threshold <= n:
            raise Invalid(f"threshold {command.threshold} is not between 1 and the electorate's {n}", "threshold")
    elif len(set(command.electorate)) != n:
        raise Invalid("electorate names an agent twice", "electorate")
    counted = [*command.acks, *(nack.agent for nack in command.nacks)]
    if len(set(counted)) != len(counted) or not set(counted) <= set(command.electorate):
        raise Invalid("acks and nacks count one vote per agent of the electorate", "acks")
    found = recorded(command.files, False if state is None else state.imported_sha256,
                     f"proposal {command.proposal_id}", "proposal_id")
    if found is None:
        return []
    require_schedulable(command.deadline, "deadline")  # an open one's timer meets it; the same bound for any
    files, digest = found
    return [
        Stamp(family_id("quorum", command.proposal_id), 0, context)(
            ProposalImported,
            proposer=command.proposer,
            text=command.text,
            electorate=tuple(command.electorate),
            threshold=command.threshold,
            total=n,
            deadline=command.deadline,
            opened_at=command.opened_at,
            status=command.status,
            acks=tuple(command.acks),
            nacks=tuple(command.nacks),
            closed_at=command.closed_at,
            reason=command.reason,
            decided_by=command.decided_by,
            source=command.source,
            content_sha256=digest,
            files=files,
            findings=tuple(command.findings),
        )
    ]
