"""The read-model store contract, run unchanged against SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from athenaeum.projectors.views import Change
from athenaeum.services.read_models import ReadModelStore

POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReadModelStore]:
    if request.param == "sqlite":
        store = ReadModelStore(str(tmp_path / "views.sqlite"))
        yield store
        store.close()
        return
    schema = f"t_{uuid.uuid4().hex[:12]}"
    store = ReadModelStore(POSTGRES, schema=schema)
    yield store
    store._database.connection.execute(f'DROP SCHEMA "{schema}" CASCADE')
    store.close()


def test_changes_and_their_position_are_recorded_together(store: ReadModelStore) -> None:
    assert store.position("views") is None
    store.apply("views", 3, [Change("v", "a", {"n": 1}), Change("v", "b", {"n": 2})])
    assert store.get("v", "a") == {"n": 1} and store.position("views") == 3
    store.apply("views", 5, [Change("v", "a", {"n": 9}), Change("v", "b", None)])
    assert store.get("v", "a") == {"n": 9} and store.get("v", "b") is None


def test_a_views_documents_come_with_the_position_they_reflect(store: ReadModelStore) -> None:
    assert store.documents_at("v", "views") == ({}, None)
    store.apply("views", 4, [Change("v", "a", {"n": 1}), Change("w", "x", {"n": 2})])
    assert store.documents_at("v", "views") == ({"a": {"n": 1}}, 4)
    assert store.documents_at("empty", "views") == ({}, 4)


def test_replicas_sharing_the_store_apply_each_event_once_and_in_order(store: ReadModelStore) -> None:
    from concurrent.futures import ThreadPoolExecutor

    replica = ReadModelStore(store.url, schema=store.schema)
    applied: list[int] = []

    def follow(follower: ReadModelStore) -> None:
        for position in range(1, 151):  # each replica folds every event, as projector replicas do
            if follower.apply("race", position, [Change("v", "k", {"n": position})]):
                applied.append(position)

    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(follow, (store, replica)))
    finally:
        replica.close()
    assert sorted(applied) == list(range(1, 151))
    assert store.position("race") == 150 and store.get("v", "k") == {"n": 150}


def test_an_event_never_applies_twice(store: ReadModelStore) -> None:
    assert store.apply("views", 7, [Change("v", "a", {"n": 1})])
    assert not store.apply("views", 7, [Change("v", "a", {"n": 2})])
    assert store.get("v", "a") == {"n": 1} and store.position("views") == 7


def test_a_failed_apply_writes_nothing(store: ReadModelStore) -> None:
    with pytest.raises(TypeError):
        store.apply("views", 1, [Change("v", "a", {"n": 1}), Change("v", "b", {"bad": object()})])
    assert store.get("v", "a") is None and store.position("views") is None
