"""What the rules would have appended: for the first event of each command in the ledger,
the rule call that produces it, re-run on the state before it. A history the rules would
have refused, or whose events differ from what they produce, did not pass the command service.
"""

from __future__ import annotations

from athenaeum.services import audit_rules_dialogue, audit_rules_quorum, audit_rules_ratification, audit_rules_tasks
from athenaeum.services.audit_recheck import Replayed

__all__ = ["RECHECKS", "Replayed"]

RECHECKS = (audit_rules_ratification.RECHECKS | audit_rules_quorum.RECHECKS | audit_rules_dialogue.RECHECKS
            | audit_rules_tasks.RECHECKS)
