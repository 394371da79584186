"""The running digest: every entry's parts go in with their lengths, so no two entries read alike."""

from __future__ import annotations

from athenaeum.services.audit.digest import Digest
from athenaeum.services.jetstream.entries import Entry


def digest(*entries: Entry) -> str:
    running = Digest()
    for entry in entries:
        running.update(entry)
    return running.sha256


def test_headers_folded_into_one_another_change_the_digest() -> None:
    apart = Entry.made(3, "S.ev.s.t1", {"Athenaeum-Topic": "VoteCast", "Athenaeum-Version": "2"}, b"{}")
    folded = Entry.made(3, "S.ev.s.t1", {"Athenaeum-Topic": "VoteCast\nAthenaeum-Version: 2"}, b"{}")
    assert digest(apart) != digest(folded)


def test_bytes_moved_between_the_subject_headers_and_payload_change_the_digest() -> None:
    one = Entry.made(3, "S.ev.s.t1", {"Athenaeum-Version": "2"}, b"ab")
    other = Entry.made(3, "S.ev.s.t1", {"Athenaeum-Version": "2a"}, b"b")
    assert digest(one) != digest(other) and digest(one) == digest(one)
