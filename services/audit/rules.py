"""What the rules would have appended: for the first event of each command in the ledger,
the rule call that produces it, re-run on the state before it. A history the rules would
have refused, or whose events differ from what they produce, did not pass the command service.
"""

from __future__ import annotations

from athenaeum.services.audit import rules_dialogue, rules_quorum, rules_ratification, rules_tasks
from athenaeum.services.audit.recheck import Replayed

__all__ = ["RECHECKS", "Replayed"]

_PROTOCOLS = (rules_ratification, rules_quorum, rules_dialogue, rules_tasks)
RECHECKS = {kind: recheck for protocol in _PROTOCOLS for kind, recheck in protocol.RECHECKS.items()}
# Each event type belongs to one protocol: none may silently take over another's re-check.
assert len(RECHECKS) == sum(len(protocol.RECHECKS) for protocol in _PROTOCOLS)
