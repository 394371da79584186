"""The vote files of an original ratification folder, ``<agent>.vote.yaml``, read: the votes
as found, and every rule of PROTOCOLS.md a vote breaks, by file and line. A vote the rules void
(another sha, an agent off the roster) is kept, marked; one whose decision or time cannot be
read is not counted."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from athenaeum.aggregates.ratification import NotRostered, ShaMismatch
from athenaeum.aggregates.rules import ActorMismatch, Invalid, VotingClosed
from athenaeum.events.constraints import AGENT_SLUG
from athenaeum.events.ratification import Decision, DissentItem, ImportedStatus, ImportedVote
from athenaeum.services.importing.findings import Findings
from athenaeum.services.importing.original_yaml import FLEET_RATIFY_OBJECTION, TextFields, mapping, one_of
from athenaeum.services.importing.times import NO_TIME, moment
from athenaeum.services.importing.yaml_lines import Located

VOTE = re.compile(rf"^({AGENT_SLUG[1:-1]})\.vote\.yaml$")
ABSTAINED = "ABSTAIN_BY_TIMEOUT"  # a vote file the tally writes: no vote was cast
TEXTS: TextFields = frozenset({("agent",), ("artifact_sha256",), ("dissent", "objection"),
                               ("dissent", "atom", "section"), ("dissent", "atom", "anchor")})
_dissent = msgspec.convert


def read(texts: dict[str, str], fields: dict[str, Any], sha: str, findings: Findings) -> list[ImportedVote]:
    """The votes of the folder whose files are ``texts``, its manifest's ``fields`` and its
    artifact's ``sha``."""
    votes = []
    for name, text in texts.items():
        if (named := VOTE.match(name)) is None:
            continue
        found = mapping(text, name, findings, TEXTS, FLEET_RATIFY_OBJECTION)
        if found is not None and (vote := _vote(found, name, named.group(1), fields, sha, findings)) is not None:
            votes.append(vote)
    return votes


def _vote(found: Located, name: str, named: str, fields: dict[str, Any], sha: str,
          findings: Findings) -> ImportedVote | None:
    value, line = found.value, found.line
    decision = value.get("decision")
    if decision == ABSTAINED:
        if fields["status"] is ImportedStatus.OPEN:
            findings.add(Invalid.code, name, line("decision"), "an abstention recorded while the vote is open")
        return None
    agent = value.get("agent")
    if agent != named:
        findings.add(ActorMismatch.code, name, line("agent"), f"agent {agent!r} votes in {named}'s file")
    if not isinstance(agent, str) or not agent:
        return None
    if agent not in fields["roster"]:
        findings.add(NotRostered.code, name, line("agent"), f"{agent!r} is not on the roster")
    attested = value.get("artifact_sha256")
    if not isinstance(attested, str) or attested.lower() != sha:
        findings.add(ShaMismatch.code, name, line("artifact_sha256"),
                     f"attested artifact_sha256 {attested!r} is not the frozen {sha}: the vote is void")
    cast_at = moment(value.get("timestamp"))
    if cast_at is None:
        findings.add(Invalid.code, name, line("timestamp"), f"timestamp {value.get('timestamp')!r} {NO_TIME}; the vote "
                                                             "is not counted")
        return None
    if cast_at >= fields["expires_at"]:
        findings.add(VotingClosed.code, name, line("timestamp"), f"cast at {cast_at.isoformat()}, after expires_at")
    if decision is None and value.get("sealed") is True:  # Athenaeum's replay of a vote before the tally
        return ImportedVote(agent=agent, decision=None, artifact_sha256=str(attested), cast_at=cast_at)
    if not one_of(decision, Decision):
        findings.add(Invalid.code, name, line("decision"), f"decision {decision!r} is not SIGN or DISSENT; "
                                                           "the vote is not counted")
        return None
    dissent = _dissent_items(value.get("dissent") or [], found, name, findings)
    if dissent is None:
        return None
    if decision == Decision.SIGN.value and dissent:
        findings.add(Invalid.code, name, line("dissent"), "a SIGN carries no dissent")
    if decision == Decision.DISSENT.value and not dissent:
        findings.add(Invalid.code, name, line("decision"), "a DISSENT needs at least one dissent item")
    return ImportedVote(agent=agent, decision=Decision(decision), artifact_sha256=str(attested), cast_at=cast_at,
                        dissent=tuple(dissent))


def _dissent_items(items: Any, found: Located, name: str, findings: Findings) -> list[DissentItem] | None:
    if not isinstance(items, list):
        findings.add(Invalid.code, name, found.line("dissent"), "dissent is not a list; the vote is not counted")
        return None
    parsed = []
    for index, item in enumerate(items):
        try:
            parsed.append(_dissent(item, DissentItem))
        except msgspec.ValidationError as error:
            findings.add(Invalid.code, name, found.line("dissent", index), f"dissent item: {error}; the vote is "
                                                                          "not counted")
            return None
    return parsed
