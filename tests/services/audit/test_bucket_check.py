"""The bucket's entries against the views as the replay rebuilt them: an entry must hold what
the views held at the position it claims; one the views have changed since, or a document
the bucket has yet to hold, is a put on its way (INFO), as a live bucket a little behind is."""

from __future__ import annotations

from athenaeum.services.audit.bucket_check import BucketCheck
from athenaeum.services.views.bucket_entries import Entry


def checked(entries: dict[str, Entry], changes: list[tuple[int, str, dict | None]], end: int = 20) -> list[tuple]:
    """The findings once the views took ``changes`` (position, key in ``pending``, document)."""
    check = BucketCheck(entries)
    views: dict[tuple[str, str], dict] = {}
    for position, key, document in changes:
        check.changed("pending", key, position, document)
        if document is None:
            views.pop(("pending", key), None)
        else:
            views[("pending", key)] = document
    return [(f.severity, f.code, f.id, f.position) for f in check.findings(views, end)]


def test_an_entry_is_what_the_views_held_at_the_position_it_claims() -> None:
    changes = [(3, "bob", {"n": 3}), (7, "bob", {"n": 7}), (9, "carol", {"n": 9}), (11, "carol", None)]
    assert checked({"pending.bob": Entry(7, 1, b'{"n": 7}'), "pending.carol": Entry(11, 2, None)}, changes) == []
    # Behind: what the views held where it claims, changed since; a document not in it yet.
    assert checked({"pending.bob": Entry(3, 1, b'{"n":3}')}, changes) == [
        ("INFO", "bucket_behind", "*", None)]
    assert checked({"pending.carol": Entry(9, 1, b'{"n":9}')}, changes + [(12, "dave", {"n": 12})]) == [
        ("INFO", "bucket_behind", "*", None)]


def test_an_entry_no_projector_wrote_is_hard() -> None:
    changes = [(3, "bob", {"n": 3}), (7, "bob", {"n": 7})]
    assert checked({"pending.bob": Entry(7, 1, b'{"n": 8}'), "pending.eve": Entry(5, 2, b"{}"),
                    "pending.zed": Entry(21, 3, None), "pending.old": Entry(0, 4, b"{}"),
                    "pending.bad": Entry(4, 5, b"not json")}, changes) == [
        ("HARD", "bucket_differs", "pending.bad", 4), ("HARD", "bucket_differs", "pending.bob", 7),
        ("HARD", "bucket_differs", "pending.eve", 5), ("HARD", "bucket_differs", "pending.old", None),
        ("HARD", "bucket_differs", "pending.zed", 21)]


def test_a_bucket_that_could_not_be_read_is_said_so() -> None:
    finding = BucketCheck(None, "there is no views bucket athenaeum-views").findings({}, 5)
    assert [(f.severity, f.code, f.message) for f in finding] == [
        ("INFO", "bucket_not_compared", "there is no views bucket athenaeum-views")]
