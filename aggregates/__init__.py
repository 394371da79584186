"""Aggregate state and rules per family, run by eventsourcing; never NATS."""
