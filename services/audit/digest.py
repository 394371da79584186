"""The running SHA-256 over the ledger's events, in stream order.

Each event's position, aggregate id, version, tag and exact stored bytes are chained onto the
digest before it, so changing, removing or inserting any earlier event changes every later
digest. Checkpoints record it; audit and verify-export recompute it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

GENESIS = "0" * 64


@dataclass
class Digest:
    sha256: str = GENESIS
    count: int = 0  # events chained so far
    position: int = 0  # the last one's stream position

    def update(self, position: int, originator_id: str, version: int, tag: str, payload: bytes) -> str:
        chained = hashlib.sha256(bytes.fromhex(self.sha256))
        chained.update(f"{position}\n{originator_id}\n{version}\n{tag}\n".encode())
        chained.update(payload)
        self.sha256 = chained.hexdigest()
        self.count += 1
        self.position = position
        return self.sha256
