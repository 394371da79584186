"""The read-model store: view documents and the position they reflect, changed together in
one transaction so each event applies exactly once. SQLite by default; PostgreSQL when the
URL says ``postgresql://``. It also keeps each ledger's latest checkpoint (its anchor, see
``audit.checkpoints``), one more place outside the ledger that remembers how far it reached."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
from eventsourcing.persistence import OperationalError

from athenaeum.projectors.views import Change, Document

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS athenaeum_views (view TEXT NOT NULL, key TEXT NOT NULL, "
    "document TEXT NOT NULL, PRIMARY KEY (view, key))",
    "CREATE TABLE IF NOT EXISTS athenaeum_positions (projection TEXT PRIMARY KEY, position BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS athenaeum_anchors (ledger TEXT PRIMARY KEY, count BIGINT NOT NULL, "
    "anchor TEXT NOT NULL)",
)
_PROBES = ("SELECT 1 FROM athenaeum_views LIMIT 1", "SELECT 1 FROM athenaeum_positions LIMIT 1")


class _SQLite:
    marker = "?"

    def __init__(self, url: str, create: bool) -> None:
        path = Path(url.removeprefix("sqlite:///"))
        if not create:  # a reader: it changes nothing in the file, journal mode included
            if not path.is_file():
                raise OperationalError(f"there are no read models at {path}")
            self.connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                              check_same_thread=False, isolation_level=None)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.connection.execute("PRAGMA journal_mode=WAL")
        # Views are derived and carry their position in the same transaction: a commit lost to
        # a power cut is simply applied again from the ledger, so no fsync per event is needed.
        self.connection.execute("PRAGMA synchronous=NORMAL")

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        cursor = self.connection.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            yield cursor
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        cursor.execute("COMMIT")


class _PostgreSQL:
    marker = "%s"

    def __init__(self, url: str, schema: str | None) -> None:
        import psycopg

        try:
            self.connection = psycopg.connect(url, autocommit=True)
        except psycopg.OperationalError as error:
            raise OperationalError(f"cannot reach PostgreSQL at {url}: {error}") from error
        if schema:  # tests keep to a schema of their own
            self.connection.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            self.connection.execute(f'SET search_path TO "{schema}"')

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        with self.connection.transaction(), self.connection.cursor() as cursor:
            yield cursor


class Written(NamedTuple):
    """A view change as it is stored: its document's JSON (None: the document is removed),
    encoded once for the read models and the KV bucket alike."""

    view: str
    key: str
    json: bytes | None

    @classmethod
    def of(cls, change: Change) -> Written:
        return cls(change.view, change.key, None if change.document is None else msgspec.json.encode(change.document))


def scheme_of(url: str) -> str:
    """``sqlite``, ``postgresql`` or ``postgres``, or "" for a file path; else a ValueError."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in ("", "sqlite", "postgresql", "postgres"):
        raise ValueError(f"read models: {url!r} is neither postgresql://... nor a file path")
    return scheme


class ReadModelStore:
    """Documents by (view, key) and, per projection, the last stream position applied."""

    def __init__(self, url: str, schema: str | None = None, *, create: bool = True) -> None:
        """``url``: ``postgresql://...``, ``sqlite:///path`` or a file path. ``create=False``
        (a reader, like the audit) refuses a store without the tables rather than make them."""
        self.url = url
        self.schema = schema
        self._lock = threading.Lock()
        scheme = scheme_of(url)
        try:
            self._database = _SQLite(url, create) if scheme in ("", "sqlite") else _PostgreSQL(url, schema)
            with self._transaction() as cursor:
                for statement in _SCHEMA if create else _PROBES:
                    cursor.execute(statement)
        except OperationalError:
            raise
        except Exception as error:  # sqlite3.Error, psycopg.Error: not a store to use
            if hasattr(self, "_database"):
                self.close()
            doing = "prepare" if create else "read"
            raise OperationalError(f"cannot {doing} the read models at {url}: {error}") from error

    @property
    def place(self) -> str:
        """Where the read models are, for a message (a PostgreSQL URL may hold a password)."""
        if scheme_of(self.url) in ("", "sqlite"):
            return f"the read models at {self.url.removeprefix('sqlite:///')}"
        return "the read models in PostgreSQL" + (f" (schema {self.schema})" if self.schema else "")

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._lock, self._database.transaction() as cursor:
            yield cursor

    @contextmanager
    def _statement(self) -> Iterator[Any]:
        """A cursor for one statement, atomic on its own: no transaction to begin and commit
        around it (the projector reads a few documents for every event)."""
        with self._lock:
            cursor = self._database.connection.cursor()
            try:
                yield cursor
            finally:
                cursor.close()

    def _sql(self, statement: str) -> str:
        return statement.replace("?", self._database.marker)

    def get(self, view: str, key: str) -> Document | None:
        stored = self.stored(view, key)
        return None if stored is None else msgspec.json.decode(stored)

    def stored(self, view: str, key: str) -> str | None:
        """A document's JSON as stored."""
        with self._statement() as cursor:
            cursor.execute(self._sql("SELECT document FROM athenaeum_views WHERE view = ? AND key = ?"), (view, key))
            row = cursor.fetchone()
        return None if row is None else str(row[0])

    def documents(self, view: str) -> dict[str, Document]:
        """Every document of ``view``, by key."""
        with self._statement() as cursor:
            cursor.execute(self._sql("SELECT key, document FROM athenaeum_views WHERE view = ? ORDER BY key"), (view,))
            return {key: msgspec.json.decode(document) for key, document in cursor.fetchall()}

    def documents_at(self, view: str, projection: str) -> tuple[dict[str, Document], int | None]:
        """Every document of ``view``, and the position of ``projection`` they reflect: read in
        one statement, so one snapshot even where a transaction alone would not give one."""
        with self._statement() as cursor:
            cursor.execute(self._sql(
                "SELECT NULL, NULL, (SELECT position FROM athenaeum_positions WHERE projection = ?) "
                "UNION ALL SELECT key, document, NULL FROM athenaeum_views WHERE view = ?"), (projection, view))
            rows = cursor.fetchall()
        position = next((row[2] for row in rows if row[0] is None), None)
        documents = {key: msgspec.json.decode(document) for key, document, _ in rows if key is not None}
        return documents, None if position is None else int(position)

    def views(self) -> list[str]:
        """The name of every view with a document."""
        with self._statement() as cursor:
            cursor.execute("SELECT DISTINCT view FROM athenaeum_views ORDER BY view")
            return [row[0] for row in cursor.fetchall()]

    def position(self, projection: str) -> int | None:
        with self._statement() as cursor:
            cursor.execute(self._sql("SELECT position FROM athenaeum_positions WHERE projection = ?"), (projection,))
            row = cursor.fetchone()
        return None if row is None else int(row[0])

    def apply(self, projection: str, position: int, changes: Sequence[Written], after: int | None = None) -> bool:
        """Record ``changes`` and ``position`` atomically; whether they were recorded. Without
        ``after``, a position not past the recorded one (another replica got there first) is
        skipped, so an event never applies twice. With it, they are recorded only where the
        projection stands at ``after`` (0: nowhere yet), as it did when they were worked out: a
        projector that keeps the views it wrote in memory so learns that nobody else wrote since."""
        with self._transaction() as cursor:
            # Claim the position before writing anything. One statement that moves it forward
            # only from where it was: PostgreSQL locks the row and re-reads it if a replica moved
            # it meanwhile, where a SELECT then a write would let both replicas through.
            moving_from = "position < ?" if after is None else "position = ?"
            cursor.execute(self._sql("UPDATE athenaeum_positions SET position = ? WHERE projection = ? AND "
                                     f"{moving_from}"),
                           (position, projection, position if after is None else after))
            if cursor.rowcount == 0:
                if after:
                    return False  # moved from where it was
                cursor.execute(self._sql(
                    "INSERT INTO athenaeum_positions (projection, position) VALUES (?, ?) ON CONFLICT DO NOTHING"),
                    (projection, position))
                if cursor.rowcount == 0:
                    return False  # at or past it already
            for change in changes:
                if change.json is None:
                    cursor.execute(self._sql("DELETE FROM athenaeum_views WHERE view = ? AND key = ?"), (change.view, change.key))
                else:
                    cursor.execute(
                        self._sql(
                            "INSERT INTO athenaeum_views (view, key, document) VALUES (?, ?, ?) "
                            "ON CONFLICT (view, key) DO UPDATE SET document = excluded.document"
                        ),
                        (change.view, change.key, change.json.decode()),
                    )
        return True

    def keep_anchor(self, ledger: str, count: int, anchor: str) -> None:
        """Keep ``anchor``, the latest checkpoint of ``ledger`` (of ``count`` entries), unless one
        of more entries is kept already: an anchor only moves forward."""
        with self._transaction() as cursor:
            cursor.execute(self._sql(
                "INSERT INTO athenaeum_anchors (ledger, count, anchor) VALUES (?, ?, ?) ON CONFLICT (ledger) "
                "DO UPDATE SET count = excluded.count, anchor = excluded.anchor WHERE athenaeum_anchors.count < "
                "excluded.count"), (ledger, count, anchor))

    def anchor(self, ledger: str) -> str | None:
        """The anchor kept for ``ledger``, if any (a store from before anchors has none)."""
        try:
            with self._transaction() as cursor:
                cursor.execute(self._sql("SELECT anchor FROM athenaeum_anchors WHERE ledger = ?"), (ledger,))
                row = cursor.fetchone()
        except Exception as error:  # noqa: BLE001  sqlite3.Error, psycopg.Error: no such table, read-only
            if "athenaeum_anchors" not in str(error):
                raise
            return None
        return None if row is None else str(row[0])

    def close(self) -> None:
        self._database.connection.close()
