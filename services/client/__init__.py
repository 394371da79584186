"""The Python client: ``AthenaeumClient`` (async) and ``SyncClient`` send commands and ask queries
over NATS, as every other face of Athenaeum does."""

from athenaeum.services.client.nats_client import AthenaeumClient, SyncClient, Unreachable
from athenaeum.services.client.refusals import NotPermitted

__all__ = ["AthenaeumClient", "NotPermitted", "SyncClient", "Unreachable"]
