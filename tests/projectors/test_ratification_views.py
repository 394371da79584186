"""The ratification views, folded from real rule outcomes: status, blindness, pending work."""

from __future__ import annotations

from athenaeum.aggregates.ratification import FAMILY
from athenaeum.events import Event
from athenaeum.events.ratification import Decision, HumanChoice
from athenaeum.projectors.views import Document, project_all
from athenaeum.projectors.registry import PROJECTORS
from tests.aggregates.given import at, decided
from tests.aggregates.test_ratification import decomposed, frozen, human, objection, split, vote


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
    history += decided(FAMILY, history, vote(Decision.DISSENT, (objection(),)), at(1, "bob"))
    document = views(history)[("ratifications", "adr-7")]
    assert document["status"] == "open" and document["voted"] == ["bob"]
    assert "DISSENT" not in str(document) and "too broad" not in str(document)


def test_every_rostered_agent_must_vote_until_they_have() -> None:
    history = frozen()
    assert items(views(history), "carol") == [("adr-7", "vote")]
    history += decided(FAMILY, history, vote(Decision.SIGN), at(1, "carol"))
    assert items(views(history), "carol") == [] and items(views(history), "alice") == [("adr-7", "vote")]


def test_a_decomposition_waits_on_the_humans_and_shows_the_tally() -> None:
    documents = views(decomposed())
    assert items(documents, "@humans") == [("adr-7", "decide")]
    assert documents[("ratifications", "adr-7")]["tally"]["dissents"] == ["bob"]
    assert [a["id"] for a in documents[("ratifications", "adr-7")]["atoms"]] == ["A1", "A2"]


def test_decompose_further_hands_the_split_to_the_merge_writer_and_back() -> None:
    history = decomposed()
    history += decided(FAMILY, history, human(HumanChoice.DECOMPOSE_FURTHER, atoms=["A1"]), at(5, "ada"))
    assert items(views(history), "alice") == [("adr-7", "split")] and items(views(history), "@humans") == []
    history += decided(FAMILY, history, split("A1", objection("Scope", "narrow")), at(6, "alice"))
    assert items(views(history), "alice") == [] and items(views(history), "@humans") == [("adr-7", "decide")]


def test_a_ratified_topic_leaves_nothing_pending() -> None:
    history = decomposed()
    history += decided(FAMILY, history, human(HumanChoice.ACCEPT_SPLIT), at(5, "ada"))
    documents = views(history)
    assert documents[("ratifications", "adr-7")]["status"] == "ratified"
    assert all(items(documents, agent) == [] for agent in ("alice", "bob", "carol", "@humans"))


def test_the_human_is_asked_again_only_once_every_atom_sent_back_is_split() -> None:
    history = decomposed()
    history += decided(FAMILY, history, human(HumanChoice.DECOMPOSE_FURTHER,
                        atoms=("A1", "A2")), at(5, "ada"))
    history += decided(FAMILY, history, split("A1", objection("Scope", "one")), at(6, "alice"))
    assert items(views(history), "alice") == [("adr-7", "split")] and items(views(history), "@humans") == []
    history += decided(FAMILY, history, split("A2", objection("Logs", "two")), at(7, "alice"))
    assert items(views(history), "alice") == [] and items(views(history), "@humans") == [("adr-7", "decide")]
