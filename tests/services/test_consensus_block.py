"""The consensus block a page carries, as ``page show --render consensus`` renders it."""

from __future__ import annotations

import yaml

from athenaeum.aggregates.context import Member
from athenaeum.aggregates.page import FAMILY
from athenaeum.events.page_commands import DisputePage, InitPage
from athenaeum.services.commands.handler import Activity
from athenaeum.services.queries.pages import consensus_block
from tests.aggregates.given import T0, at, decided


def test_the_consensus_block_is_yaml_even_with_quotes_and_newlines() -> None:
    page = decided(FAMILY, [], InitPage(page="wiki/a.md", content="# A\n"), at(1, "alice"))
    page += decided(FAMILY, page, DisputePage(page="wiki/a.md", section='the "2/3" rule\nand more'), at(2, "bob"))
    members = tuple(Member(name, T0, T0) for name in ("alice", "bob"))
    block = yaml.safe_load(consensus_block(FAMILY.project(None, page), Activity(members, 3), T0))
    assert block["rev"] == "v1" and block["consensus"]["bob"].startswith('disputed | section: the "2/3" rule\nand more')
    # A dispute by someone outside the fleet's agents holds canon back too, so it is listed.
    page += decided(FAMILY, page, DisputePage(page="wiki/a.md", section="§2"), at(3, "ada"))
    block = yaml.safe_load(consensus_block(FAMILY.project(None, page), Activity(members, 4), T0))
    assert block["consensus"]["ada"].startswith("disputed | section: §2 | ")
