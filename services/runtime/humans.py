"""The deployment's humans, made ledger facts at the first start: ``serve --humans ada``
registers each with a key (made in ``<data-dir>/keys`` when there is none), and from then on
the roster, not the flag, says who is human."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from athenaeum.events.fleet import FLEET_ID
from athenaeum.events.fleet_commands import RegisterAgent
from athenaeum.services.commands.credentials import SERVICE, deployment_command_id
from athenaeum.services.commands.handler import CommandHandler
from athenaeum.services.identity.keys import key_path, new_seed, public_key, read_key, write_seed

log = logging.getLogger(__name__)


class NoHumans(ValueError):
    """A new ledger behind a NATS server that admits only the roster's keys, and no human to
    put on its roster: nobody could ever connect to register anyone."""

    def __init__(self) -> None:
        super().__init__("a new ledger needs its humans: its NATS admits only the keys the roster binds, and the "
                         "roster is empty, so nobody could ever connect; start it with --humans NAME[,NAME] "
                         "(or $ATHENAEUM_HUMANS), who then register the agents")


async def record_humans(handler: CommandHandler, humans: frozenset[str], data_dir: Path,
                        public_keys: Mapping[str, str] = {}, admits_only_the_roster: bool = False) -> list[str]:
    """Register the deployment's ``humans`` unless the roster names humans already, each bound
    to its key in ``public_keys`` or else in ``data_dir`` (made when there is none); what to
    tell the operator (keys made, names ignored). Raises ``NoHumans`` for an empty roster and
    no humans when the server ``admits_only_the_roster``."""
    roster = await handler.load(FLEET_ID)
    if admits_only_the_roster and not humans and (roster is None or not (roster.agents or roster.humans)):
        raise NoHumans()
    if roster is not None and roster.humans:
        ignored = sorted(humans - set(roster.humans))
        return [f"--humans {', '.join(ignored)}: ignored, the ledger names its humans ({', '.join(roster.humans)}); "
                "a human registers another with `athenaeum agent register NAME --human`"] if ignored else []
    said = []
    for name in sorted(humans):
        path = key_path(data_dir, name)
        if name not in public_keys and not path.exists():
            write_seed(path, new_seed())
            said.append(f"made {name}'s key in {path}")
        command = RegisterAgent(name=name, human=True, public_key=public_keys.get(name) or public_key(read_key(path)),
                                command_id=deployment_command_id(name))
        reply = await handler.send(command, name, SERVICE)
        if not reply.ok and reply.error is not None and reply.error.code != "already_exists":
            raise RuntimeError(f"could not record {name} as a human: {reply.error.message}")
    return said
