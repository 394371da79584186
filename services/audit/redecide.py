"""A stored command, decided again: the audit gives the family's ``decide`` the state before
the command, the command as stored and the context as it was recorded (the fleet's activity
read again at the position the record names, other aggregates as the ledger had them), and
what it appends must be exactly what the ledger holds, byte for byte."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import msgspec

from athenaeum.aggregates.context import Context, Member
from athenaeum.aggregates.rules import RuleViolation
from athenaeum.events import Event
from athenaeum.events.commands import CommandRecord, decode_record
from athenaeum.services.commands.handler import fingerprint, scoped
from athenaeum.services.commands.routes import BY_NAME
from athenaeum.services.commands.store import CommandKey
from athenaeum.services.jetstream.subjects import command_token

_encoder = msgspec.json.Encoder()
_decoders = {name: msgspec.json.Decoder(route.command) for name, route in BY_NAME.items()}  # by the record's route


class Knowledge(NamedTuple):
    """What the replay knows when a command comes up: states before it, the fleet as the views
    had it after a position, and who is human (None: it cannot tell, no humans were given)."""

    state: Callable[[str], Any]
    members: Callable[[int | None], Sequence[Member]]
    is_human: Callable[[str], bool | None]
    humans_configured: bool | None


class Problem(NamedTuple):
    code: str
    message: str
    severity: str = "HARD"


def record_of(raw: bytes) -> CommandRecord | Problem:
    try:
        return decode_record(raw)
    except msgspec.DecodeError as error:
        return Problem("undecodable_command", f"the command's record does not decode: {error}")


def redecide(record: CommandRecord, token: str, events: Sequence[Event], payloads: Sequence[bytes],
             known: Knowledge) -> Problem | None:
    """What is wrong with ``events`` (stored as ``payloads``, under ``token``) as the outcome
    of the command ``record`` stores; None when deciding it again gives exactly them."""
    route = BY_NAME.get(record.route)
    if route is None:
        return Problem("unknown_command", f"no command is called {record.route!r}")
    try:
        command = _decoders[record.route].decode(record.command)
    except msgspec.DecodeError as error:
        return Problem("undecodable_command", f"the stored {record.route} does not decode: {error}")
    aggregate_id = route.family.aggregate_of(command)
    if record.scoped != scoped(route, command.command_id or ""):
        return Problem("misfiled_command", f"{record.route} is stored as one id for "
                                           f"{'its sender alone' if record.scoped else 'everyone'}, which it is not")
    key = CommandKey(record.actor, aggregate_id, command.command_id or "", record.scoped)
    if command_token(key.text) != token or not events or events[0].originator_id != aggregate_id:
        return Problem("misfiled_command", f"{record.route} by {record.actor} on {aggregate_id} is not where its "
                                           "key puts it: its events are another command's")
    if fingerprint(command) != record.fingerprint:
        return Problem("fingerprint_mismatch", f"{record.route}'s fingerprint is not that of the command stored")
    if record.actor_is_human and known.is_human(record.actor) is False:
        return Problem("not_human", f"{record.route} was decided as from a human, but {record.actor} is none")
    if known.humans_configured is not None and record.humans_configured != known.humans_configured:
        return Problem("context_differs", f"{record.route} was decided as if the deployment "
                                          f"{'named' if record.humans_configured else 'named no'} humans")
    state = known.state(aggregate_id)
    context = Context(
        actor=record.actor, now=record.at, command_id=command.command_id or "", actor_is_human=record.actor_is_human,
        humans_configured=record.humans_configured,
        members=tuple(known.members(record.as_of_position)) if command.reads_fleet else (),
        as_of_position=record.as_of_position,
        states={other: known.state(other) for other in route.family.reads(command, state)},
    )
    where = f"{record.route} by {record.actor} on {aggregate_id}"
    try:
        produced = route.family.decide(state, command, context)
    except RuleViolation as violation:
        return Problem("rule_violation", f"{where}: the rules refuse it ({violation.code}: {violation.message})")
    except Exception as error:  # noqa: BLE001  a command the rules cannot even read is a finding, not a crash
        return Problem("rule_violation", f"{where}: the rules cannot apply: {error!r}")
    if [_encoder.encode(event) for event in produced] != list(payloads):
        return Problem("not_as_decided", f"{where}: deciding it again appends {[e.tag for e in produced]}, the "
                                         f"ledger holds {[e.tag for e in events]} with other contents")
    if command.reads_fleet and record.as_of_position is not None:
        return _on_stale_views(route.family, state, command, context, produced, known, where)
    if route.humans_only and not record.actor_is_human:  # taken before imports were a human's alone
        return Problem("imported_by_agent", f"{where}: imported by an agent, not a human: the outcomes it records "
                                            "are that agent's word", "WARN")
    return None


def _on_stale_views(family: Any, state: Any, command: Any, context: Context, produced: Sequence[Event],
                    known: Knowledge, where: str) -> Problem | None:
    """A decision on the fleet as the views stood behind the ledger: a WARN when the fleet as the
    ledger stood just before the command gives another outcome (the views lagged that much)."""
    now = replace(context, members=tuple(known.members(None)))
    try:
        current = family.decide(state, command, now)
    except RuleViolation as violation:
        return Problem("decided_on_stale_views", f"{where}: on the fleet as the ledger stood, the rules refuse it "
                                                 f"({violation.code})", "WARN")
    except Exception as error:  # noqa: BLE001  as in ``redecide``: a finding, not a crash
        return Problem("decided_on_stale_views", f"{where}: on the fleet as the ledger stood, the rules cannot "
                                                 f"apply: {error!r}", "WARN")
    if [e.tag for e in current] != [e.tag for e in produced]:
        return Problem("decided_on_stale_views", f"{where}: on the fleet as the ledger stood, it appends "
                                                 f"{[e.tag for e in current]}", "WARN")
    return None
