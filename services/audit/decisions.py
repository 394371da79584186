"""Each command the audit reads, checked as a decision: its record against what the ledger
itself says of its context, the command decided again on the state before it (``redecide``),
and how its sender was proven (``proofs``). Decisions recorded as a human's that no humans
given to the audit can check are counted, and said once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from athenaeum.aggregates.context import Member
from athenaeum.events import Event
from athenaeum.events.commands import CommandRecord
from athenaeum.events.fleet import FLEET_ID
from athenaeum.services.audit.commands import Appended
from athenaeum.services.audit.findings import Finding, found_at
from athenaeum.services.audit.proofs import Signatures, proof_problem
from athenaeum.services.audit.redecide import Knowledge, Problem, redecide
from athenaeum.services.jetstream.entries import Entry


class Decisions:
    def __init__(self, states: Mapping[str, Any], members: Callable[[int | None], Sequence[Member]],
                 humans: frozenset[str], ledger_id: str) -> None:
        """``states``: every aggregate's, as the audit folds them; ``members``: the fleet as the
        views had it after a position; ``ledger_id``: what signatures name."""
        self.states = states
        self.humans = humans
        self.ledger_id = ledger_id
        self.last_times: dict[str, datetime] = {}  # each aggregate's last event's time
        self.humans_unchecked = 0
        self.signatures = Signatures()  # a context, for one audit's run
        self.known = Knowledge(states.get, members, self.is_human, bool(humans) if humans else None)

    def problem(self, appended: Appended) -> Problem | None:
        """What is wrong with a command's entries: its record, or what deciding it again gives."""
        problem = appended.record if isinstance(appended.record, Problem) else None
        if appended.record is None:
            problem = Problem("incomplete_command", "the marker with the command's record is missing after its events")
        if isinstance(appended.record, CommandRecord):
            record = appended.record
            events = [event for _, event in appended.events]
            if None in events or len(events) != record.events:
                readable = len(events) - events.count(None)
                problem = Problem("incomplete_command", f"the command's record names {record.events} events; "
                                                        f"{len(events)} carry it, {readable} of them events the "
                                                        "ledger can hold")
            else:
                problem = self._out_of_place(record, appended.first, events[0]) or redecide(
                    record, appended.token, events,  # type: ignore[arg-type]
                    [entry.payload for entry, _ in appended.events], self.known)
            problem = problem or proof_problem(record, self.states.get(FLEET_ID), self.ledger_id,
                                               self.signatures.verify_for(record, appended.first))
            by_deployment = record.proof is not None and record.proof.by == "service"
            if record.actor_is_human and not by_deployment and self.is_human(record.actor) is None:
                self.humans_unchecked += 1
        return problem

    def _out_of_place(self, record: CommandRecord, first: Entry, event: Event) -> Problem | None:
        """What the record says of its context that the ledger itself contradicts: a time before
        its aggregate's last event, or the fleet read at a position the command had not reached.
        ``event``: the first's, decoded (so stored where it names)."""
        before = self.last_times.get(event.originator_id)
        if before is not None and record.at < before:
            return Problem("time_travel", f"{record.route} is stamped {record.at.isoformat()}, before its "
                                          f"aggregate's last event ({before.isoformat()})")
        if record.as_of_position is not None and not 0 <= record.as_of_position < first.position:
            return Problem("context_differs", f"{record.route} says it read the fleet at position "
                                              f"{record.as_of_position}, which it had not reached")
        return None

    def is_human(self, principal: str) -> bool | None:
        """Whether ``principal`` is human: a configured human or one the roster registers as
        such; None when it is neither and no configured humans were given to tell."""
        roster = self.states.get(FLEET_ID)
        if principal in self.humans or (roster is not None and principal in roster.humans):
            return True
        return False if self.humans or (roster is not None and roster.humans) else None

    def findings(self) -> list[Finding]:
        """Once every command is read: the signatures that do not verify, and what was unchecked."""
        findings = [found_at(entry, problem.severity, problem.code, problem.message)
                    for entry, problem in self.signatures.problems()]
        if self.humans_unchecked:
            findings.append(Finding("INFO", "humans_unchecked", "fleet", "*", None, f"{self.humans_unchecked} "
                                    "decisions were recorded as a human's by a principal the fleet roster does not "
                                    "name human: give --humans to check them"))
        return findings
