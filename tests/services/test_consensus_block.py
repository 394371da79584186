"""The consensus block a page carries, as ``page show --render consensus`` renders it."""

from __future__ import annotations

from datetime import timedelta

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


def test_the_active_agents_are_pending_and_one_idle_thirty_days_is_listed_only_with_a_standing() -> None:
    page = decided(FAMILY, [], InitPage(page="a.md", content="# A\n"), at(1, "alice"))
    now = T0 + timedelta(days=40)
    members = (Member("alice", T0, now), Member("bob", T0, now), Member("carol", T0, T0),
               Member("dave", T0 - timedelta(days=70), T0 - timedelta(days=70)))
    block = yaml.safe_load(consensus_block(FAMILY.project(None, page), Activity(members, 3), now))
    assert block["consensus"] == {"alice": "contributed | 2026-11-30 | rev: v1", "bob": "pending | rev: v1",
                                  "dave": "dormant | rev: v1"}  # carol, idle since T0, never looked at it
