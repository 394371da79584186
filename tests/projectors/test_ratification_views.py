"""The ratification views, folded from real rule outcomes: status, blindness, pending work."""

from __future__ import annotations

from athenaeum.aggregates import ratification as r
from athenaeum.aggregates.ratification_state import evolve
from athenaeum.events import Event
from athenaeum.events.ratification import Decision, HumanChoice
from athenaeum.projectors.views import Document, project_all
from athenaeum.projectors.registry import PROJECTORS
from tests.aggregates.given import at, given
from tests.aggregates.test_ratification import SHA, decomposed, frozen, objection


def views(history: list[Event]) -> dict[tuple[str, str], Document]:
    documents: dict[tuple[str, str], Document] = {}
    for event in history:
        for change in project_all(PROJECTORS, event, lambda view, key: documents.get((view, key))):
            documents[(change.view, change.key)] = change.document
    return documents


def items(documents: dict, agent: str) -> list[tuple[str, str]]:
    return [(i["id"], i["action"]) for i in documents.get(("pending", agent), {}).get("items", [])]


def test_while_open_the_view_names_who_voted_never_how() -> None:
    history = frozen()
    history += r.cast_vote(given(evolve, history).state, at(1, "bob"), decision=Decision.DISSENT,
                           artifact_sha256=SHA, dissent=(objection(),))
    document = views(history)[("ratifications", "adr-7")]
    assert document["status"] == "open" and document["voted"] == ["bob"]
    assert "DISSENT" not in str(document) and "too broad" not in str(document)


def test_every_rostered_agent_must_vote_until_they_have() -> None:
    history = frozen()
    assert items(views(history), "carol") == [("adr-7", "vote")]
    history += r.cast_vote(given(evolve, history).state, at(1, "carol"), decision=Decision.SIGN, artifact_sha256=SHA)
    assert items(views(history), "carol") == [] and items(views(history), "alice") == [("adr-7", "vote")]


def test_a_decomposition_waits_on_the_humans_and_shows_the_tally() -> None:
    documents = views(decomposed())
    assert items(documents, "@humans") == [("adr-7", "decide")]
    assert documents[("ratifications", "adr-7")]["tally"]["dissents"] == ["bob"]
    assert [a["id"] for a in documents[("ratifications", "adr-7")]["atoms"]] == ["A1", "A2"]


def test_decompose_further_hands_the_split_to_the_merge_writer_and_back() -> None:
    history = decomposed()
    history += r.decide(given(evolve, history).state, at(5, "ada"), decision=HumanChoice.DECOMPOSE_FURTHER, atoms=("A1",))
    assert items(views(history), "alice") == [("adr-7", "split")] and items(views(history), "@humans") == []
    history += r.split(given(evolve, history).state, at(6, "alice"), atom="A1", into=(objection("Scope", "narrow"),))
    assert items(views(history), "alice") == [] and items(views(history), "@humans") == [("adr-7", "decide")]


def test_a_ratified_topic_leaves_nothing_pending() -> None:
    history = decomposed()
    history += r.decide(given(evolve, history).state, at(5, "ada"), decision=HumanChoice.ACCEPT_SPLIT)
    documents = views(history)
    assert documents[("ratifications", "adr-7")]["status"] == "ratified"
    assert all(items(documents, agent) == [] for agent in ("alice", "bob", "carol", "@humans"))


def test_the_human_is_asked_again_only_once_every_atom_sent_back_is_split() -> None:
    history = decomposed()
    history += r.decide(given(evolve, history).state, at(5, "ada"), decision=HumanChoice.DECOMPOSE_FURTHER,
                        atoms=("A1", "A2"))
    history += r.split(given(evolve, history).state, at(6, "alice"), atom="A1", into=(objection("Scope", "one"),))
    assert items(views(history), "alice") == [("adr-7", "split")] and items(views(history), "@humans") == []
    history += r.split(given(evolve, history).state, at(7, "alice"), atom="A2", into=(objection("Logs", "two"),))
    assert items(views(history), "alice") == [] and items(views(history), "@humans") == [("adr-7", "decide")]
