"""The consensus block a page carries, as ``page show --render consensus`` renders it."""

from __future__ import annotations

import yaml

from athenaeum.aggregates import page as p
from athenaeum.aggregates.page_consensus import Member
from athenaeum.aggregates.page_state import evolve as page_evolve
from athenaeum.services.commands.handler import Activity
from athenaeum.services.queries.pages import consensus_block
from tests.aggregates.given import T0, at, given


def test_the_consensus_block_is_yaml_even_with_quotes_and_newlines() -> None:
    page = p.init_page(None, at(1, "alice"), page="wiki/a.md", content="# A\n")
    page += p.dispute(given(page_evolve, page).state, at(2, "bob"), section='the "2/3" rule\nand more')
    members = tuple(Member(name, T0, T0) for name in ("alice", "bob"))
    block = yaml.safe_load(consensus_block(given(page_evolve, page).state, Activity(members, 3), T0))
    assert block["rev"] == "v1" and block["consensus"]["bob"].startswith('disputed | section: the "2/3" rule\nand more')
    # A dispute by someone outside the fleet's agents holds canon back too, so it is listed.
    page += p.dispute(given(page_evolve, page).state, at(3, "ada"), section="§2")
    block = yaml.safe_load(consensus_block(given(page_evolve, page).state, Activity(members, 4), T0))
    assert block["consensus"]["ada"].startswith("disputed | section: §2 | ")
