"""Everything with I/O: the JetStream event store, the embedded server, services, CLI."""
