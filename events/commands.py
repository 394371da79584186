"""Commands: what agents ask for, validated at the edge. Unknown fields are refused."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar, Literal

import msgspec

from athenaeum.events.constraints import COMMAND_ID_LIMIT, NON_BLANK, schema_only, texts


class Command(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``command_id`` is the idempotency key: the same id again appends nothing and gets
    the first reply. Clients make one when the caller does not."""

    # Whether the decision weighs the fleet's activity (who is active, dormant, newly back):
    # the service then reads it, at a position it records with the command.
    reads_fleet: ClassVar[bool] = False
    # The fields naming agents the command asks to take part (a roster, an electorate, a
    # coordinator): the service warns of any the fleet's roster does not list.
    names_agents: ClassVar[tuple[str, ...]] = ()

    command_id: Annotated[str, texts(COMMAND_ID_LIMIT), schema_only(pattern=NON_BLANK)] | None = None


class Proof(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How the service knew who sent a command, stored with it so an audit can tell again:

    - ``signature``: signed with the key the roster binds the actor to (``public_key``), over
      the command's canonical bytes with ``signed_at`` and the ledger's id; verifiable offline;
    - ``token``: a bearer token the ledger issued to the actor (HTTP);
    - ``header``: only asserted, by a header a deployment chose to trust, or by a principal that
      no key binds yet;
    - ``service``: Athenaeum's own services (timers, checkpoints) or the deployment itself."""

    by: Literal["signature", "token", "header", "service"]
    public_key: str | None = None
    signed_at: datetime | None = None
    signature: str | None = None  # base64url of the Ed25519 signature
    command: str | None = None  # the command's JSON as signed, when the service filled in more (an id)
    token_sha256: str | None = None  # the bearer token's, as the roster knows it


class CommandRecord(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A command as the ledger stores it, with the events it appended: enough to decide it
    again, as the audit does, and to answer its retry as it was first answered.

    ``command`` is the command's own canonical JSON (its ``command_id`` filled in); the rest is
    the context it was decided in, as the service knew it: who sent it and when, whether the
    sender was a human principal and whether the deployment named its humans, and where the
    fleet's activity was read (for the rules that weigh it). Other aggregates a decision reads
    are not copied: the ledger holds them, as they stood."""

    route: str  # <family>.<verb>, as in the NATS subject athenaeum.cmd.<family>.<verb>
    command: msgspec.Raw
    fingerprint: str  # SHA-256 of the command without its id: an id reused for another command shows
    actor: str
    at: datetime
    events: int  # how many events it appended, the first on its own aggregate
    scoped: bool = True  # the id is the actor's on this aggregate; False: one id for everyone (A2A tasks)
    actor_is_human: bool = False
    humans_configured: bool = False
    as_of_position: int | None = None
    proof: Proof | None = None  # None: recorded before the ledger knew identities


decode_record = msgspec.json.Decoder(CommandRecord).decode
