"""The fleet roster: who the registered agents and human principals are.

One aggregate, ``fleet``, holds every registration.
"""

from __future__ import annotations

from athenaeum.events.base import Event

FLEET_ID = "fleet"


class AgentRegistered(Event, tag="AgentRegistered"):
    name: str
    human: bool
    by: str
