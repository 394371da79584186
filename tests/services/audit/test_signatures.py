"""The audit's signature checks, inline for a few and by the verifier process in batches: each
failure reported at its own entry, in order, whichever way it was checked."""

from __future__ import annotations

from datetime import datetime, timezone

import msgspec
import pytest

from athenaeum.events.commands import CommandRecord
from athenaeum.services.audit.proofs import Signatures
from athenaeum.services.identity.keys import key_pair, new_seed, public_key
from athenaeum.services.identity.signing import sign
from athenaeum.services.jetstream.entries import Entry

KEY = key_pair(new_seed())


def record(n: int) -> CommandRecord:
    return CommandRecord(route="quorum.ack", command=msgspec.Raw(b"{}"), fingerprint="f", actor=f"agent-{n}",
                         at=datetime(2026, 12, 1, tzinfo=timezone.utc), events=1)


@pytest.mark.parametrize("batch", [1000, 3], ids=["inline", "verifier process"])
def test_every_bad_signature_is_reported_at_its_entry_in_order(batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Signatures, "BATCH", batch)
    bad = {2, 7, 9}
    with Signatures() as signatures:
        for n in range(10):
            message = f"command {n}".encode()
            signature = sign(KEY, b"another" if n in bad else message)
            assert signatures.verify_for(record(n), Entry.made(n + 1, "S.ev.s.x", {}, b""))(
                public_key(KEY), signature, message)
        found = [(entry.position, problem.code) for entry, problem in signatures.problems()]
    assert found == [(n + 1, "bad_signature") for n in sorted(bad)]
