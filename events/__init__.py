"""Athenaeum's events: the wire contract, msgspec Structs and nothing else."""

from athenaeum.events.base import Event, UnknownEventTag, decoder_for, event_types

__all__ = ["Event", "UnknownEventTag", "decoder_for", "event_types"]
