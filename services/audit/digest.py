"""The running SHA-256 over the ledger's entries, in stream order.

Each entry's position, subject, meaningful headers (Athenaeum's own: an event's version and tag,
the record of the command that appended it) and exact stored bytes, each with its length, are
chained onto the digest before it, so changing, removing or inserting any earlier entry, a command's record included,
changes every later digest. Checkpoints record it; audit and verify-export recompute it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from athenaeum.services.jetstream.entries import Entry

GENESIS = "0" * 64
SHA256_TEXT = re.compile(r"[0-9a-f]{64}")  # a digest as it is written down


@dataclass
class Digest:
    sha256: str = GENESIS
    count: int = 0  # entries chained so far
    position: int = 0  # the last one's stream position

    def update(self, entry: Entry) -> str:
        # Every part goes in with its length first: no choice of subject, header or payload
        # bytes reads as another split of the same bytes.
        subject = entry.subject.encode()
        chained = hashlib.sha256(bytes.fromhex(self.sha256))
        chained.update(b"%d|%d:%s" % (entry.position, len(subject), subject))
        for name in sorted(entry.headers):
            encoded_name, value = name.encode(), entry.headers[name].encode()
            chained.update(b"|%d:%s|%d:" % (len(encoded_name), encoded_name, len(value)))
            chained.update(value)  # apart: a command's record is most of an entry, and is not copied again
        chained.update(b"|%d:" % len(entry.payload))
        chained.update(entry.payload)
        self.sha256 = chained.hexdigest()
        self.count += 1
        self.position = entry.position
        return self.sha256
