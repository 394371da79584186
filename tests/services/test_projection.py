"""The projector service's runner: events read together are applied together, and a replica
sharing the views never has them rolled back by what a runner kept in memory."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec
import nats

from athenaeum.aggregates.application import AthenaeumApplication
from athenaeum.aggregates.context import Context
from athenaeum.aggregates.rules import Stamp
from athenaeum.events import family_id
from athenaeum.events.quorum import ProposalAcked, ProposalOpened
from athenaeum.events.ratification import ArtifactFrozen, Decision, Mode, VoteCast
from athenaeum.projectors import pending_work
from athenaeum.services.jetstream.log import TOPIC
from athenaeum.services.jetstream.positions import VERSION
from athenaeum.services.jetstream.subjects import StreamSubjects
from athenaeum.services.views.kept import ENTRY, KeptDocuments
from athenaeum.services.views.projection import PROJECTION, ProjectionRunner, ViewsUnreadable
from athenaeum.services.views.read_models import ReadModelStore, Written
from tests.services.conftest import until

NOW = datetime.now(timezone.utc)
ROSTER = ("alice", "bob", "carol")


def frozen(topic: str) -> ArtifactFrozen:
    return Stamp(topic, 0, Context(actor="alice", now=NOW, command_id=uuid.uuid4().hex))(
        ArtifactFrozen, initiator="alice", artifact="a", artifact_sha256="s", artifact_origin="inline",
        roster=ROSTER, mode=Mode.STANDARD, expires_at=NOW + timedelta(days=3))


def voted(topic: str, version: int, agent: str) -> VoteCast:
    return Stamp(topic, version, Context(actor=agent, now=NOW, command_id=uuid.uuid4().hex))(
        VoteCast, agent=agent, decision=Decision.SIGN, artifact_sha256="s")


ELECTORATE = tuple(f"agent-{n}" for n in range(16))


def opened(proposal: str) -> ProposalOpened:
    return Stamp(family_id("quorum", proposal), 0, Context(actor="alice", now=NOW, command_id=uuid.uuid4().hex))(
        ProposalOpened, proposer="alice", text="t", electorate=ELECTORATE, threshold=len(ELECTORATE),
        total=len(ELECTORATE), deadline=NOW + timedelta(days=3))


def acked(proposal: str, version: int, agent: str) -> ProposalAcked:
    return Stamp(family_id("quorum", proposal), version, Context(actor=agent, now=NOW, command_id=uuid.uuid4().hex))(
        ProposalAcked, agent=agent)


def views(store: ReadModelStore) -> dict[str, dict]:
    return {view: store.documents(view) for view in store.views()}


def caught_up(runners: Sequence[ProjectionRunner], app: AthenaeumApplication) -> None:
    head = app.recorder.max_notification_id()
    assert until(lambda: [runner.position for runner in runners], lambda at: min(at) >= head) == [head] * len(runners)


def test_events_read_together_are_applied_together_each_on_the_views_the_ones_before_left(
        store_env: dict[str, str], tmp_path: Path) -> None:
    topic = f"adr-{uuid.uuid4().hex[:8]}"
    handed: list[tuple[int, list[Written]]] = []
    with AthenaeumApplication(env=store_env) as app:
        # Saved before the runner starts: it reads them in one go.
        app.save(frozen(topic), voted(topic, 1, "alice"), voted(topic, 2, "bob"))
        store = ReadModelStore(str(tmp_path / "views.sqlite"))
        runner = ProjectionRunner(app, store, on_change=lambda position, changes: handed.append((position, changes)))
        runner.start()
        try:
            caught_up([runner], app)
        finally:
            runner.stop()
        pending = {agent: [item["id"] for item in store.get(pending_work.VIEW, agent)["items"]] for agent in ROSTER}
        assert pending == {"alice": [], "bob": [], "carol": [topic]}
        head = app.recorder.max_notification_id()
        assert store.position(PROJECTION) == head
        # Handed to the bucket once, at the last position: the pending documents the three
        # events changed in turn, each as the last of them left it.
        [(position, changes)] = handed
        assert position == head
        handed_pending = {change.key: change.json for change in changes if change.view == pending_work.VIEW}
        assert handed_pending.keys() == set(ROSTER)
        assert all(msgspec.json.decode(handed_pending[agent]) == store.get(pending_work.VIEW, agent) for agent in ROSTER)
        store.close()


def test_an_event_stored_on_another_aggregates_subject_is_passed_over_as_a_load_passes_it_over(
        store_env: dict[str, str], tmp_path: Path) -> None:
    """alice's vote on one ratification, put by a holder of the services' key on another's
    subject: a command's load of either passes over it, and so do the views."""
    ours, other = f"adr-{uuid.uuid4().hex[:8]}", f"adr-{uuid.uuid4().hex[:8]}"
    with AthenaeumApplication(env=store_env) as app:
        app.save(frozen(ours), frozen(other))
        misplaced = app.mapper.to_stored_event(voted(ours, 1, "alice"))

        async def put() -> None:
            nc = await nats.connect(store_env["ATHENAEUM_NATS_URL"])
            subject = StreamSubjects(store_env["ATHENAEUM_STREAM"]).aggregate(other)
            await nc.jetstream().publish(subject, misplaced.state, headers={TOPIC: misplaced.topic, VERSION: "2"})
            await nc.close()

        asyncio.run(put())
        store = ReadModelStore(str(tmp_path / "views.sqlite"))
        runner = ProjectionRunner(app, store).start()
        try:
            caught_up([runner], app)
        finally:
            runner.stop()
        assert sorted(item["id"] for item in store.get(pending_work.VIEW, "alice")["items"]) == sorted([ours, other])
        store.close()


def test_replicas_sharing_the_views_leave_them_as_one_runner_alone_would(
        store_env: dict[str, str], tmp_path: Path) -> None:
    shared = str(tmp_path / "shared.sqlite")
    with AthenaeumApplication(env=store_env) as app:
        stores = [ReadModelStore(shared), ReadModelStore(shared), ReadModelStore(str(tmp_path / "alone.sqlite"))]
        runners = [ProjectionRunner(app, store).start() for store in stores]
        try:
            # Each ack adds its agent to the proposal's list: applied twice (on a document kept
            # in memory by a runner after its replica had applied it), it would show twice.
            proposals = [f"p{n}-{uuid.uuid4().hex[:6]}" for n in range(6)]
            for proposal in proposals:
                app.save(opened(proposal))
            for version, agent in enumerate(ELECTORATE, start=1):
                for proposal in proposals:
                    app.save(acked(proposal, version, agent))
            caught_up(runners, app)
        finally:
            for runner in runners:
                runner.stop()
        assert views(stores[0]) == views(stores[2])
        assert stores[0].position(PROJECTION) == stores[2].position(PROJECTION)
        for store in stores:
            store.close()


def test_a_runner_that_finds_a_replica_wrote_the_views_since_it_read_them_applies_nothing_twice(
        store_env: dict[str, str], tmp_path: Path) -> None:
    shared = ReadModelStore(str(tmp_path / "shared.sqlite"))

    def projected(store: ReadModelStore) -> ReadModelStore:
        runner = ProjectionRunner(app, store).start()
        caught_up([runner], app)
        runner.stop()
        return store

    with AthenaeumApplication(env=store_env) as app:
        proposal = f"p-{uuid.uuid4().hex[:6]}"
        app.save(opened(proposal))
        projected(shared)
        app.save(*(acked(proposal, version, agent) for version, agent in enumerate(ELECTORATE[:3], 1)))
        replica = projected(ReadModelStore(str(tmp_path / "replica.sqlite")))  # its views after three acks
        app.save(*(acked(proposal, version, agent) for version, agent in enumerate(ELECTORATE[3:5], 4)))
        late = ProjectionRunner(app, shared)  # it last saw the views with no ack; it reads all five in one go
        # The replica records its three acks in the shared views before the runner applies them.
        shared.apply(PROJECTION, replica.position(PROJECTION) or 0,
                     [Written(view, key, msgspec.json.encode(document))
                      for view, documents in views(replica).items() for key, document in documents.items()])
        late.start()
        caught_up([late], app)
        late.stop()
        assert shared.get("proposals", proposal)["acks"] == list(ELECTORATE[:5])
        assert views(shared) == views(projected(ReadModelStore(str(tmp_path / "alone.sqlite"))))


class FailingReads(ReadModelStore):
    def stored(self, view: str, key: str) -> str | None:
        raise sqlite3.OperationalError("disk I/O error")


def test_views_that_cannot_be_read_stop_the_runner_rather_than_lose_the_event(
        store_env: dict[str, str], tmp_path: Path) -> None:
    with AthenaeumApplication(env=store_env) as app:
        topic = f"adr-{uuid.uuid4().hex[:8]}"
        app.save(frozen(topic))
        runner = ProjectionRunner(app, FailingReads(str(tmp_path / "views.sqlite"))).start()
        assert until(lambda: runner.error, lambda error: error is not None, timeout=10) is not None
        runner.stop()
        assert isinstance(runner.error, ViewsUnreadable)
        assert runner.store.position(PROJECTION) is None  # nothing recorded past the event


def test_kept_documents_stay_within_their_budget_of_json_the_least_recently_used_forgotten_first() -> None:
    kept = KeptDocuments(budget=100 + 2 * ENTRY)
    kept.put("v", "a", {"n": 1}, 40)
    kept.put("v", "b", None, 40)
    assert kept.get("v", "a") is not None  # a used again: b is now the oldest
    kept.put("v", "c", {"n": 3}, 40)
    assert kept.get("v", "b") is None and kept.get("v", "a").document == {"n": 1}
    kept.put("v", "a", {"n": 2}, 90)  # a replaced, larger: c goes
    assert kept.get("v", "c") is None and kept.get("v", "a").document == {"n": 2}
    kept.clear()
    assert kept.get("v", "a") is None


def test_documents_known_to_be_absent_count_against_the_budget_too() -> None:
    kept = KeptDocuments(budget=10 * ENTRY)
    for n in range(100):
        kept.put("pending", f"agent-{n}", None, 0)
    assert kept.get("pending", "agent-89") is None and kept.get("pending", "agent-99") is not None
