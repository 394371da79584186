"""The fleet roster: who the registered agents and human principals are.

One aggregate, ``fleet``, holds every registration.
"""

from __future__ import annotations

from athenaeum.events.base import Event, family_id

FLEET_ID = family_id("fleet", "roster")


class AgentRegistered(Event, tag="AgentRegistered"):
    name: str
    human: bool
    by: str
