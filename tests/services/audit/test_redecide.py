"""Deciding a stored command again, on the in-memory store: what the audit says of an import."""

from __future__ import annotations

import msgspec
import pytest

from athenaeum.aggregates.families import fold_of
from athenaeum.events.ratification_commands import ImportRatification
from athenaeum.services.audit.redecide import Knowledge, Problem, redecide
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.commands.routes import BY_COMMAND
from athenaeum.services.commands.store import Appending, MemoryStore
from athenaeum.services.jetstream.subjects import command_token
from tests.aggregates.test_ratification_import import importing


async def appended_by_an_agent(monkeypatch: pytest.MonkeyPatch) -> Appending:
    """An import as a ledger took it before imports were a human's alone: from ops, an agent."""
    monkeypatch.setitem(BY_COMMAND, ImportRatification, BY_COMMAND[ImportRatification]._replace(humans_only=False))
    store, taken = MemoryStore(fold_of), []
    original = store.append_together

    async def kept(commands):  # type: ignore[no-untyped-def]
        taken.extend(commands)
        return await original(commands)

    monkeypatch.setattr(store, "append_together", kept)
    assert (await CommandHandler(store).send(importing(), "ops")).ok
    [appending] = taken
    return appending


def audited(appending: Appending, human: bool) -> Problem | None:
    events, record, key = appending
    record = msgspec.structs.replace(record, actor_is_human=human)
    known = Knowledge(state=lambda _: None, members=lambda _: (), is_human=lambda _: human, humans_configured=None)
    return redecide(record, command_token(key.text), events, [msgspec.json.encode(e) for e in events], known)


async def test_an_import_an_agent_sent_is_a_warning_and_a_humans_is_no_finding(monkeypatch) -> None:
    appending = await appended_by_an_agent(monkeypatch)
    warned = audited(appending, human=False)
    assert warned is not None and (warned.code, warned.severity) == ("imported_by_agent", "WARN"), warned
    assert audited(appending, human=True) is None
