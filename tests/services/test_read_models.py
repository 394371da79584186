"""The read-model store contract, run unchanged against SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from eventsourcing.persistence import OperationalError

from athenaeum.projectors.views import Change
from athenaeum.services.views.read_models import ReadModelStore, Written
from tests.postgres import with_options


def written(*changes: Change) -> list[Written]:
    return [Written.of(change) for change in changes]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReadModelStore]:
    if request.param == "sqlite":
        store = ReadModelStore(str(tmp_path / "views.sqlite"))
        yield store
        store.close()
        return
    schema = f"t_{uuid.uuid4().hex[:12]}"
    store = ReadModelStore(request.getfixturevalue("postgres_url"), schema=schema)
    yield store
    store._database.connection.execute(f'DROP SCHEMA "{schema}" CASCADE')
    store.close()


def test_changes_and_their_position_are_recorded_together(store: ReadModelStore) -> None:
    assert store.position("views") is None
    store.apply("views", 3, written(Change("v", "a", {"n": 1}), Change("v", "b", {"n": 2})))
    assert store.get("v", "a") == {"n": 1} and store.position("views") == 3
    store.apply("views", 5, written(Change("v", "a", {"n": 9}), Change("v", "b", None)))
    assert store.get("v", "a") == {"n": 9} and store.get("v", "b") is None


def test_a_views_documents_come_with_the_position_they_reflect(store: ReadModelStore) -> None:
    assert store.documents_at("v", "views") == ({}, None)
    store.apply("views", 4, written(Change("v", "a", {"n": 1}), Change("w", "x", {"n": 2})))
    assert store.documents_at("v", "views") == ({"a": {"n": 1}}, 4)
    assert store.documents_at("empty", "views") == ({}, 4)


def test_replicas_sharing_the_store_apply_each_event_once_and_in_order(store: ReadModelStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    replica = ReadModelStore(store.url, schema=store.schema)
    applied: list[int] = []

    def follow(follower: ReadModelStore) -> None:
        for position in range(1, 151):  # each replica folds every event, as projector replicas do
            if follower.apply("race", position, written(Change("v", "k", {"n": position}))):
                applied.append(position)

    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(follow, (store, replica)))
    finally:
        replica.close()
    assert sorted(applied) == list(range(1, 151))
    assert store.position("race") == 150 and store.get("v", "k") == {"n": 150}


def test_an_event_never_applies_twice(store: ReadModelStore) -> None:
    assert store.apply("views", 7, written(Change("v", "a", {"n": 1})))
    assert not store.apply("views", 7, written(Change("v", "a", {"n": 2})))
    assert store.get("v", "a") == {"n": 1} and store.position("views") == 7


def test_a_failed_apply_writes_nothing(store: ReadModelStore) -> None:
    with pytest.raises(UnicodeDecodeError):
        store.apply("views", 1, [*written(Change("v", "a", {"n": 1})), Written("v", "b", b"\xff")])
    assert store.get("v", "a") is None and store.position("views") is None


def test_changes_claimed_after_a_position_are_recorded_only_where_the_views_stand_there(store: ReadModelStore) -> None:
    assert store.apply("views", 4, written(Change("v", "a", {"n": 1})), after=0)  # nowhere yet
    assert not store.apply("views", 6, written(Change("v", "a", {"n": 2})), after=0)
    assert store.apply("views", 6, written(Change("v", "a", {"n": 3})), after=4)
    assert store.apply("views", 7, [])  # a replica's event
    assert not store.apply("views", 9, written(Change("v", "a", {"n": 4})), after=6)
    assert store.get("v", "a") == {"n": 3} and store.position("views") == 7


def test_a_reader_opens_only_read_models_that_exist_and_changes_nothing(tmp_path: Path) -> None:
    with pytest.raises(OperationalError, match="there are no read models"):
        ReadModelStore(str(tmp_path / "missing.sqlite"), create=False)
    assert not (tmp_path / "missing.sqlite").exists()
    (tmp_path / "other.sqlite").write_bytes(b"not a database")
    with pytest.raises(OperationalError, match="cannot read the read models"):
        ReadModelStore(str(tmp_path / "other.sqlite"), create=False)
    writer = ReadModelStore(str(tmp_path / "views.sqlite"))
    writer.apply("views", 3, written(Change("v", "a", {"n": 1})))
    reader = ReadModelStore(str(tmp_path / "views.sqlite"), create=False)
    assert reader.get("v", "a") == {"n": 1}
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader.apply("views", 4, [])
    reader.close()
    writer.close()


def test_a_store_that_cannot_be_used_is_named_clearly(tmp_path: Path, postgres_url: str) -> None:
    with pytest.raises(ValueError, match="neither postgresql"):
        ReadModelStore("mysql://x")
    with pytest.raises(OperationalError, match="cannot prepare the read models"):
        ReadModelStore(str(tmp_path))  # a directory
    nowhere = with_options(postgres_url, f"-csearch_path=t_{uuid.uuid4().hex[:12]}")  # a schema with no tables
    with pytest.raises(OperationalError, match="cannot read the read models"):
        ReadModelStore(nowhere, create=False)
    with pytest.raises(OperationalError, match="cannot prepare the read models"):
        ReadModelStore(nowhere)  # it does not exist: serve will not create it
