"""The ladder's SQLite file: its schema, opening it (read-write, read-only or immutable), the
format checks, and one writer's transaction at a time."""

from __future__ import annotations

import datetime
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core.board import DEFAULT_MAX_MOVES, MAX_MOVES_LIMIT
from ..core.checks import quoted, quoted_path

FORMAT = 1
#: PRAGMA application_id of a ladder database ("SATL"): a foreign SQLite file is refused
APPLICATION_ID = 0x5341544C
MAX_SEED = 2**32 - 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS agents (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, name TEXT NOT NULL UNIQUE,
    spec TEXT NOT NULL, roster INTEGER NOT NULL, added TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY, a INTEGER NOT NULL REFERENCES agents(id),
    b INTEGER NOT NULL REFERENCES agents(id), game INTEGER NOT NULL, seed INTEGER NOT NULL,
    a_red INTEGER NOT NULL, score REAL NOT NULL, winner TEXT, reason TEXT, moves INTEGER,
    record TEXT NOT NULL, played TEXT NOT NULL, UNIQUE (a, b, game));
CREATE TABLE IF NOT EXISTS claims (
    a INTEGER NOT NULL, b INTEGER NOT NULL, game INTEGER NOT NULL, owner TEXT NOT NULL,
    host TEXT NOT NULL, pid INTEGER NOT NULL, at REAL NOT NULL, PRIMARY KEY (a, b, game));
"""
#: the columns this code reads from each table
COLUMNS = {
    "meta": {"key", "value"},
    "agents": {"id", "key", "name", "spec", "roster", "added"},
    "games": {
        "id",
        "a",
        "b",
        "game",
        "seed",
        "a_red",
        "score",
        "winner",
        "reason",
        "moves",
        "record",
        "played",
    },
    "claims": {"a", "b", "game", "owner", "host", "pid", "at"},
}


class LadderError(ValueError):
    """A ladder database that cannot be used as asked (foreign, damaged, a bad argument)."""


def timestamp() -> str:
    """Now, local time with its offset, to the second (when an agent joined, a game ended)."""
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


class LadderDB:
    """An open ladder database, its format and settings checked: `db` the connection, `seed`
    and `max_moves` the ladder's settings (the arguments as `Ladder`'s)."""

    def __init__(
        self,
        path: str | Path = "ladder.db",
        create: bool = True,
        seed: int = 0,
        max_moves: int = DEFAULT_MAX_MOVES,
        readonly: bool = False,
    ):
        self.path = Path(path)
        self.readonly = readonly
        if self.path.is_symlink() and not self.path.exists():
            # SQLite would create the file wherever the link points
            raise LadderError(
                f"ladder database {quoted_path(self.path)} is a dangling symbolic "
                f"link (to {quoted_path(os.readlink(self.path))}); give the "
                f"database itself"
            )
        if self.path.is_dir():
            raise LadderError(f"ladder database {quoted_path(self.path)} is a directory")
        exists = self.path.exists()
        if exists and not self.path.is_file():
            raise LadderError(f"ladder database {quoted_path(self.path)} is not a regular file")
        if not exists and (not create or readonly):
            raise LadderError(f"ladder database {quoted_path(self.path)} does not exist")
        empty = exists and self.path.stat().st_size == 0
        if empty and (not create or readonly):
            raise LadderError(f"{quoted_path(self.path)} is not a ladder database (an empty file)")
        connection = None
        try:
            if readonly:
                connection = sqlite3.connect(
                    self._readonly_uri(), uri=True, timeout=60.0, isolation_level=None
                )
            else:
                connection = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self.db = connection
            self.seed, self.max_moves = self._check(exists and not empty, seed, max_moves)
        except sqlite3.DatabaseError as error:
            if connection is not None:
                connection.close()
            raise LadderError(
                f"{quoted_path(self.path)} is not a ladder database, or it is damaged: {error}"
            ) from None
        except LadderError:
            if connection is not None:
                connection.close()
            raise

    def _readonly_uri(self) -> str:
        """`mode=ro`; for a WAL-mode file with no write-ahead log beside it (no writer at
        work), `immutable=1`, which reads the file alone: `mode=ro` would leave a -wal and a
        -shm file beside it."""
        uri = self.path.absolute().as_uri()
        with open(self.path, "rb") as handle:
            header = handle.read(20)
        wal_mode = len(header) == 20 and header[18] == 2
        sidecar = self.path.with_name(self.path.name + "-wal")
        return uri + ("?immutable=1" if wal_mode and not sidecar.exists() else "?mode=ro")

    def _check(self, exists: bool, seed: int, max_moves: int) -> tuple[int, int]:
        """Make a new ladder (not `exists`), or check an old one's identity, tables and
        settings: its (seed, max_moves)."""
        application = self.db.execute("PRAGMA application_id").fetchone()[0]
        tables = {
            row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if exists and application != APPLICATION_ID:
            raise LadderError(
                f"{quoted_path(self.path)} is not a ladder database (an SQLite "
                f"file of something else)"
            )
        if not exists:
            if tables or application:
                raise LadderError(f"{quoted_path(self.path)} is not a ladder database")
            with self.transaction():
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                for statement in SCHEMA.split(";"):  # (executescript would commit first)
                    if statement.strip():
                        self.db.execute(statement)
                for key, value in (("format", FORMAT), ("seed", seed), ("max_moves", max_moves)):
                    self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, str(value)))
            tables = set(COLUMNS)
        for table, columns in COLUMNS.items():
            if table not in tables:
                raise LadderError(
                    f"{quoted_path(self.path)}: the ladder database has no "
                    f"table {table!r} (damaged)"
                )
            have = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            if not columns <= have:
                raise LadderError(
                    f"{quoted_path(self.path)}: table {table!r} lacks the "
                    f"columns {sorted(columns - have)} (damaged)"
                )
        if not self.readonly:
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA foreign_keys = ON")
        meta: dict[object, object] = {}
        for key, value in self.db.execute("SELECT key, value FROM meta"):
            meta[key] = value
        settings: dict[str, int] = {}
        for name, low, high in (
            ("format", 0, 10**6),
            ("seed", 0, MAX_SEED),
            ("max_moves", 1, MAX_MOVES_LIMIT),
        ):
            text = meta.get(name)
            number = None
            if (
                isinstance(text, str)
                and len(text) <= 20
                and text.strip().lstrip("-").isdigit()
                and text.isascii()
            ):
                number = int(text)
            if number is None or not low <= number <= high:
                raise LadderError(
                    f"{quoted_path(self.path)}: meta row {name!r} must be an "
                    f"integer from {low} to {high}, got {quoted(text)} "
                    f"(damaged settings)"
                )
            settings[name] = number
        if settings["format"] != FORMAT:
            raise LadderError(
                f"{quoted_path(self.path)} is a ladder of format "
                f"{settings['format']}; this code reads format {FORMAT}"
            )
        return settings["seed"], settings["max_moves"]

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT: one writer at a time, the others wait (timeout 60 s);
        an error rolls back."""
        if self.readonly:
            raise LadderError(f"{quoted_path(self.path)} is open for reading only")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def bad(self, table: str, row: object, problem: str) -> LadderError:
        """The error of a stored row that fails its checks, naming the database and the row."""
        return LadderError(
            f"ladder database {quoted_path(self.path)}: {table} row {quoted(row)}: {problem}"
        )
