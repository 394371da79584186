"""Athenaeum's events: the wire contract, msgspec Structs and nothing else."""

from athenaeum.events.base import Event, TagRegistry, UnknownEventTag, event_registry, family_id, family_of_id, natural_key

__all__ = ["Event", "TagRegistry", "UnknownEventTag", "event_registry", "family_id", "family_of_id", "natural_key"]
