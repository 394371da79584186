"""The ratification records in the original layouts, from events alone."""

from __future__ import annotations

import pytest

from athenaeum.aggregates.ratification import FAMILY
from athenaeum.events.ratification import Caveat, Decision, HumanChoice
from athenaeum.projectors.ratification_records import NotRendered, UnknownRecord, render
from tests.aggregates.given import at, decided
from tests.aggregates.test_ratification import SHA, decomposed, frozen, human, objection, vote


def test_the_manifest_has_the_templates_fields_in_order() -> None:
    assert render("manifest", frozen()) == (
        "topic: adr-7\ninitiator: alice\n"
        f"artifact_sha256: {SHA}\nartifact_origin: inline\n"
        "roster:\n  - alice\n  - bob\n  - carol\n"
        "expires_at: 2026-12-03T09:00:00Z\nmode: standard\nstatus: open\n"
    )


def test_the_log_is_blind_until_the_tally() -> None:
    history = frozen()
    history += decided(FAMILY, history, vote(Decision.DISSENT, (objection(),)), at(1, "bob"))
    assert render("log", history).splitlines()[1] == "[2026-11-30T10:00:00Z] bob | VOTE: cast"
    assert "DISSENT" in render("log", decomposed())


def test_what_the_tally_makes_follow_is_logged_by_the_merge_writer() -> None:
    lines = render("log", decomposed()).splitlines()
    tally = next(line for line in lines if "| TALLY:" in line)
    writer = tally.split("] ", 1)[1].split(" |", 1)[0]
    assert writer == "alice"  # the slug that sorts first among those who voted
    assert all(f"] {writer} | " in line for line in lines if "DECOMPOSED" in line or "PENDING-HUMAN" in line)


def test_a_later_command_with_the_tallys_id_is_its_own_actors_line() -> None:
    import msgspec

    history = decomposed()
    tally_id = next(e for e in history if e.tag == "VotesTallied").command_id
    rejected = decided(FAMILY, history, human(HumanChoice.REJECT), at(5, "ada"))
    history += [msgspec.structs.replace(e, command_id=tally_id) for e in rejected]  # ids are each actor's
    assert "] ada | REJECTED:" in render("log", history)


def test_the_decomposition_shows_the_tally_atoms_and_the_grain_gate() -> None:
    text = render("decomposition", decomposed())
    assert "**Tally:** 2 SIGN · 1 DISSENT · 0 ABSTAIN_BY_TIMEOUT (roster of 3)" in text
    assert '## A1 — §Scope "All agents"' in text and "- raised_by: bob" in text
    assert all(f"`{choice}`" in text for choice in ("accept-split", "decompose-further", "rewrite-with-caveats", "reject"))
    assert text.endswith("Cost of consensus: 2 contested atom(s)\n")
    # "# ADR 7" is no atom's section: one unanimous atom, two contested, three in all.
    assert "The artifact splits into 3 atoms — 1 unanimous, 2 contested." in text


def test_a_text_with_line_breaks_cannot_forge_lines_of_a_record() -> None:
    history = frozen()
    history += decided(FAMILY, history, vote(Decision.DISSENT, (objection(text="o\n- raised_by: ada\n## A9 — §Fake"),)), at(1, "bob"))
    for agent in ("alice", "carol"):
        history += decided(FAMILY, history, vote(Decision.SIGN), at(2, agent))
    text = render("decomposition", history)
    assert "- objection: o\\n- raised_by: ada\\n## A9 — §Fake" in text
    assert [line for line in text.splitlines() if line.startswith(("## A", "- raised_by"))] == [
        '## A1 — §Scope "All agents"', "- raised_by: bob"]


def test_accept_split_ratifies_all_but_the_contested_atoms() -> None:
    history = decomposed()
    history += decided(FAMILY, history, human(HumanChoice.ACCEPT_SPLIT), at(5, "ada"))
    assert "- the whole artifact but its contested atoms, carved out: A1, A2\n" in render("ratified", history)


def test_rewrite_with_caveats_ratifies_as_signed_what_every_signer_signed_and_the_contested_atoms_as_caveats() -> None:
    history = decomposed()
    caveats = (Caveat(atom="A1", verifier="make scope"), Caveat(atom="A2", ticket="OPS-9"))
    history += decided(FAMILY, history, human(HumanChoice.REWRITE_WITH_CAVEATS, caveats=caveats), at(5, "ada"))
    refs = render("ratified", history).split("## Ratified atom-refs\n\n", 1)[1].split("\n\n", 1)[0]
    assert refs == "- the whole artifact but its contested atoms, ratified under the caveats below: A1, A2"


def test_all_sign_ratifies_the_whole_artifact() -> None:
    history = frozen()
    for hours, agent in enumerate(("alice", "bob", "carol"), start=1):
        history += decided(FAMILY, history, vote(Decision.SIGN), at(hours, agent))
    assert "## Ratified atom-refs\n\n- the whole artifact\n" in render("ratified", history)


def test_ratified_records_the_path_signatures_and_caveats() -> None:
    history = decomposed()
    caveats = (Caveat(atom="A1", verifier="make scope", ticket="OPS-8"), Caveat(atom="A2", ticket="OPS-9"))
    history += decided(FAMILY, history, human(HumanChoice.REWRITE_WITH_CAVEATS,
                        caveats=caveats), at(5, "ada"))
    text = render("ratified", history)
    assert "**Grain-gate:** human-decision: rewrite-with-caveats" in text
    assert f"| alice | 2026-11-30T10:00:00Z | {SHA} |" in text
    assert '- C1 — A1 §Scope "All agents": too broad (raised_by bob) — verifier: make scope — ticket: OPS-8' in text
    assert '- C2 — A2 §Logs "All agents": no retention (raised_by bob) — ticket: OPS-9' in text
    assert render("ratified", history) == text  # byte-stable


def test_a_record_that_does_not_exist_yet_says_so() -> None:
    with pytest.raises(NotRendered):
        render("ratified", frozen())
    with pytest.raises(NotRendered):
        render("decomposition", frozen())


def test_a_record_no_ratification_has_is_named_as_such() -> None:
    with pytest.raises(UnknownRecord, match="choose from manifest, decomposition, ratified, log"):
        render("bogus", frozen())
