"""A ratification's ``log.md`` as the original tools append it, ``[<ISO8601 UTC>] <agent> |
<EVENT>: <detail>``, read: each line that is none is a finding, and the first line that records
the tally says when it was taken."""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from athenaeum.aggregates.rules import Invalid
from athenaeum.services.importing.findings import Findings
from athenaeum.services.importing.times import NO_TIME, moment

LOG = "log.md"
# The protocol's steps, and the failures dancer's REFERENCE.md (section 9) has its agents log.
STEPS = ("OPENED", "NOTIFY", "VOTE", "TALLY", "DECOMPOSED", "PENDING-HUMAN", "CONVERGE", "RATIFIED", "REJECTED")
FAILURES = ("TIMEOUT", "PARSE-FAIL", "IDENTITY-COLLISION", "SHA-MISMATCH", "HUMAN-TIMEOUT")
LOG_LINE = re.compile(rf"^\[([^\]]+)\] (\S+) \| ({'|'.join(STEPS + FAILURES)}): ?(.*)$")
# What the merge writer logs as it tallies: dancer's TALLY first, fleet-ratify's outcome alone.
TALLIES = frozenset({"TALLY", "DECOMPOSED", "PENDING-HUMAN", "RATIFIED", "REJECTED"})


class Tallied(NamedTuple):
    at: datetime
    line: int


def read(text: str, findings: Findings) -> Tallied | None:
    """When the tally was taken, by the log's first line that records it (None: no line does)."""
    tallied = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = LOG_LINE.match(line)
        if match is None:
            findings.add(Invalid.code, LOG, number, f"not a log line '[<ISO8601 UTC>] <agent> | <EVENT>: <detail>': "
                                                    f"{line[:80]!r}")
        elif (at := moment(match.group(1))) is None:
            findings.add(Invalid.code, LOG, number, f"{match.group(1)!r} {NO_TIME}")
        elif tallied is None and match.group(3) in TALLIES:
            tallied = Tallied(at, number)
    return tallied
