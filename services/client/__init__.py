"""The Python client: ``AthenaeumClient`` (async) and ``SyncClient`` send commands and ask queries
over NATS, as every other face of Athenaeum does."""

from athenaeum.services.client.nats_client import AthenaeumClient, SyncClient, Unreachable

__all__ = ["AthenaeumClient", "SyncClient", "Unreachable"]
