"""The Python client as an agent's script uses it: errors it can act on, and a retry that is safe."""

from __future__ import annotations


import pytest

from athenaeum.events.quorum_commands import ProposeQuorum
from athenaeum.services.client import SyncClient, Unreachable
from tests.services.conftest import Served


def test_a_lost_server_and_a_misspelt_query_are_named(served: Served) -> None:
    url, alice = served.url, served.enrol("alice")
    with SyncClient(url, "alice", timeout=5, seed=alice) as client:
        with pytest.raises(Unreachable, match="'ratification.shwo'"):
            client.query("ratification.shwo", topic="x")
        served.stop()
        for _ in range(2):  # the server is gone: each try says so, with the id to send it again by
            with pytest.raises(Unreachable) as lost:
                client.send(ProposeQuorum(text="x", electorate=["bob"], threshold=1, command_id="retry-me"))
            assert lost.value.command_id == "retry-me"
    with pytest.raises(Unreachable, match="cannot reach"):
        SyncClient(url, "alice", timeout=2, seed=alice)
