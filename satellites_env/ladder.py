"""A rating ladder: every game between its agents kept in a SQLite database, Bradley-Terry
ratings with 95% intervals over all of them (`satellites_env.rating`).

Chess engine testers keep rating lists this way (CCRL, CEGT, rated with Ordo or BayesElo): a
new agent plays only its own games, and every rating sits on one stable scale, the shipped
scale of `satellites_env.rating.SCALE` (`greedy` = +400 when it plays).

The database (`ladder.db`; SQLite in WAL mode while it is written, so readers do not block
the writer):

* `agents`: one row per player: its `name`, the `spec` that builds it, and its identity `key`
  ([`Agent.identity`][satellites_env.agents.Agent.identity]: the spec, or for a file agent
  the sha256 of the file: a renamed file is the same player, a changed file a new one).
  `roster` is 1 for the ladder's agents (`add`), 0 for an agent only rated against them
  (`rate`).
* `games`: one row per game: the two agents in canonical order (`a`, `b`: by key), the game
  index, its set-up seed, the colours, a's score (1, 0.5, 0) and the whole record (start
  position and moves, JSON), so that every game replays.
* `claims`: the games being played now, by which process (two `ladder run` at once never play
  a game twice). A claim is a lease: its run renews `at` every `HEARTBEAT` seconds, and a
  claim not renewed for `CLAIM_LEASE` seconds is taken over; on the claim's own host, a claim
  whose process is gone, or whose pid now belongs to a process started at another time (the
  claim's `owner` records its process's start time), is taken over at once. A live process
  that is not a ladder run cannot renew a lease, so it holds no game for longer than the
  lease.
* `meta`: the format and the ladder's settings (`seed`, `max_moves`).

A database is data from whoever wrote it. Every row is checked where it is read (types,
ranges, references between tables, each game's score against its winner and its stored
record); a row that fails is one [`LadderError`][satellites_env.ladder.LadderError] naming
the database and the row. Specs read from the database build only agents that load data
(`random`, `greedy`, `mcts:N`, `checkpoint:PATH`, `az:PATH`) unless `allow_pickle`: an
`rllib:PATH` agent, or one of another package, may unpickle its files, which runs code. A
file agent plays only while its file still has the sha256 it joined with. Read-only use
(`Ladder(path, readonly=True)`) never writes the file and leaves nothing beside it.

Game i of the pair (a, b) is the arena's pairing game i
([`play_pairing_game`][satellites_env.arena.play_pairing_game]: a is red in even games,
set-ups shared by pairs of games) from the seed `pair_seed(ladder seed, key a, key b)`: a
pure function of the ladder, the pair and the index, so two ladders fed the same agents hold
the same games.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import math
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .agents import Agent, make_agent
from .arena import init_worker, play_pairing_game
from .core.board import DEFAULT_MAX_MOVES, MAX_MOVES_LIMIT
from .core.checks import quoted, quoted_path
from .jobs import Workers
from .rating import Ratings, against_known, fit, scale_anchor
from .record import MAX_RECORD_BYTES, GameRecord, RecordError

FORMAT = 1
#: PRAGMA application_id of a ladder database ("SATL"): a foreign SQLite file is refused
APPLICATION_ID = 0x5341544C
#: a claim not renewed for this long (seconds) is taken over, wherever its process runs
CLAIM_LEASE = 120.0
#: how often (seconds) a run renews its claims
HEARTBEAT = 20.0
MAX_GAMES_PER_PAIR = 100_000
MAX_NAME = 100
MAX_SPEC = 4096
MAX_SEED = 2**32 - 1
#: the agent kinds whose specs, read from a database, may be built without `allow_pickle`:
#: they load data only (`checkpoint:` and `az:` read networks with torch's weights-only
#: loader)
DATA_ONLY_KINDS = ("random", "greedy", "mcts", "checkpoint", "az")

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


@dataclass(frozen=True)
class Entry:
    """An agent of the ladder."""

    id: int
    name: str
    spec: str
    key: str
    roster: bool


@dataclass(frozen=True)
class Job:
    """One game to play: the pair (a, b) in canonical order, its index and seed."""

    a: Entry
    b: Entry
    game: int
    seed: int


@dataclass(frozen=True)
class GameRow:
    """One stored game, checked: its row id, the pair (agent ids a, b), index, a's score and
    the winner, and its record's JSON text."""

    id: int
    a: int
    b: int
    game: int
    score: float
    winner: str | None
    record: str


def pair_seed(ladder_seed: int, key_a: str, key_b: str) -> int:
    """The seed of the pair's games: a pure function of the ladder's seed and the two keys."""
    text = f"{ladder_seed}\0{key_a}\0{key_b}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big") & 0x7FFFFFFF


def _now() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def _is_int(value, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _name_problem(name) -> str | None:
    if (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_NAME
        or any(not c.isprintable() for c in name)
    ):
        return f"an agent name must be 1 to {MAX_NAME} printable characters, got {quoted(name)}"
    return None


# this process's agents, one per spec and identity (workers build their own)
_agents: dict[tuple[str, str | None], Agent] = {}


def play_job(
    spec_a: str,
    spec_b: str,
    game: int,
    seed: int,
    max_moves: int,
    key_a: str | None = None,
    key_b: str | None = None,
) -> dict:
    """Play one ladder game (in this process or a worker): the record as a dict. With
    `key_a`/`key_b`, an agent whose identity is not that key (its file changed) is refused."""
    for spec, key in ((spec_a, key_a), (spec_b, key_b)):
        if (spec, key) not in _agents:
            agent = make_agent(spec, seed=0)
            if key is not None and agent.identity() != key:
                raise LadderError(
                    f"agent {quoted(spec)} is no longer the player it was when "
                    f"it joined the ladder (its file changed)"
                )
            _agents[spec, key] = agent
    record = play_pairing_game(
        _agents[spec_a, key_a], _agents[spec_b, key_b], game, seed, max_moves
    )
    return record.as_dict()


def play_ray_job(job: tuple, agents: dict | None = None) -> dict:
    """`play_job` in a Ray actor (the actor keeps its agents between jobs)."""
    return play_job(*job)


def _process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, from /proc), or None where that
    cannot be read (another system, a process gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rpartition(b")")[2].split()
        return fields[19].decode()  # field 22 of stat(5); fields[0] is field 3
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def _guarded(method):
    """SQLite's own errors (a locked or damaged file) as one LadderError naming the file."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as error:
            raise LadderError(f"ladder database {quoted_path(self.path)}: {error}") from None

    return guarded


class _Heartbeat(threading.Thread):
    """Renews a run's claims every `HEARTBEAT` seconds, on its own connection, while the run
    plays (a game in this process blocks the run's own thread)."""

    def __init__(self, path: Path, owner: str, every: float):
        super().__init__(daemon=True, name="ladder-heartbeat")
        self.path, self.owner, self.every = path, owner, every
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None)
        except sqlite3.Error:
            return
        try:
            while not self.stopped.wait(self.every):
                try:
                    db.execute(
                        "UPDATE claims SET at = ? WHERE owner = ?", (time.time(), self.owner)
                    )
                except sqlite3.Error:
                    pass  # busy: the next beat renews (a lease spans several beats)
        finally:
            db.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join()


class Ladder:
    """A ladder database: `Ladder(path)` opens it, creating it when `create` (the default).

    Args:
        path: the database file.
        create: make a new ladder when the file is missing (or empty).
        seed: a new ladder's seed.
        max_moves: a new ladder's move cap.
        readonly: open for reading only: nothing is written to the file or beside it.
        allow_pickle: let specs read from the database build agents that may unpickle
            their files (`rllib:PATH` and the agents of other packages), which runs code.

    Raises:
        LadderError: the file is missing, foreign, damaged, or holds a row that fails its
            checks.
    """

    def __init__(
        self,
        path: str | Path = "ladder.db",
        create: bool = True,
        seed: int = 0,
        max_moves: int = DEFAULT_MAX_MOVES,
        readonly: bool = False,
        allow_pickle: bool = False,
    ):
        self.path = Path(path)
        self.readonly = readonly
        self.allow_pickle = allow_pickle
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
        try:
            if readonly:
                self.db = sqlite3.connect(
                    self._readonly_uri(), uri=True, timeout=60.0, isolation_level=None
                )
            else:
                self.db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self._check(exists and not empty, seed, max_moves)
        except sqlite3.DatabaseError as error:
            self._close_quietly()
            raise LadderError(
                f"{quoted_path(self.path)} is not a ladder database, or it is damaged: {error}"
            ) from None
        except LadderError:
            self._close_quietly()
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

    def _close_quietly(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            db.close()

    def _check(self, exists: bool, seed: int, max_moves: int) -> None:
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
            with self._transaction():
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
        meta = {}
        for key, value in self.db.execute("SELECT key, value FROM meta"):
            meta[key] = value
        settings = {}
        for key, low, high in (
            ("format", 0, 10**6),
            ("seed", 0, MAX_SEED),
            ("max_moves", 1, MAX_MOVES_LIMIT),
        ):
            value = meta.get(key)
            number = None
            if (
                isinstance(value, str)
                and len(value) <= 20
                and value.strip().lstrip("-").isdigit()
                and value.isascii()
            ):
                number = int(value)
            if number is None or not low <= number <= high:
                raise LadderError(
                    f"{quoted_path(self.path)}: meta row {key!r} must be an "
                    f"integer from {low} to {high}, got {quoted(value)} "
                    f"(damaged settings)"
                )
            settings[key] = number
        if settings["format"] != FORMAT:
            raise LadderError(
                f"{quoted_path(self.path)} is a ladder of format "
                f"{settings['format']}; this code reads format {FORMAT}"
            )
        self.seed, self.max_moves = settings["seed"], settings["max_moves"]

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Ladder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _transaction(self):
        """BEGIN IMMEDIATE ... COMMIT: one writer at a time, the others wait (timeout 60 s)."""
        ladder = self

        class _Tx:
            def __enter__(self):
                if ladder.readonly:
                    raise LadderError(f"{quoted_path(ladder.path)} is open for reading only")
                ladder.db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind, value, trace):
                ladder.db.execute("COMMIT" if kind is None else "ROLLBACK")

        return _Tx()

    def _bad(self, table: str, row, problem: str) -> LadderError:
        return LadderError(
            f"ladder database {quoted_path(self.path)}: {table} row {quoted(row)}: {problem}"
        )

    # ------------------------------------------------------------------ agents

    @_guarded
    def add(self, spec: str, name: str | None = None, roster: bool = True) -> Entry:
        """Add an agent (built once here: a bad spec or file is an error now). An agent the
        ladder already has (the same identity) is returned as it is, made a roster member."""
        agent = make_agent(spec, seed=0)
        key = agent.identity()
        name = spec if name is None else name
        problem = _name_problem(name)
        if problem is not None:
            raise LadderError(problem)
        if len(spec) > MAX_SPEC:
            raise LadderError(f"agent spec {quoted(spec)} is longer than {MAX_SPEC} characters")
        with self._transaction():
            known = {e.key: e for e in self._entries().values()}
            if key in known:
                entry = known[key]
                if roster and not entry.roster:
                    self.db.execute("UPDATE agents SET roster = 1 WHERE id = ?", (entry.id,))
                if entry.spec != spec:  # a renamed or moved file: play it from where it is now
                    self.db.execute("UPDATE agents SET spec = ? WHERE id = ?", (spec, entry.id))
                return self.entry(entry.id)
            if any(e.name == name for e in known.values()):
                raise LadderError(f"the name {quoted(name)} is taken by another agent; give --name")
            self.db.execute(
                "INSERT INTO agents (key, name, spec, roster, added) VALUES (?, ?, ?, ?, ?)",
                (key, name, spec, int(roster), _now()),
            )
        return self.entry_named(name)

    def _entries(self) -> dict[int, Entry]:
        """Every agent, checked: id -> Entry, in the order added."""
        entries: dict[int, Entry] = {}
        names, keys = set(), set()
        for row in self.db.execute("SELECT id, name, spec, key, roster FROM agents ORDER BY id"):
            id_, name, spec, key, roster = row
            if not _is_int(id_, 1, 2**63 - 1):
                raise self._bad("agents", id_, "its id must be a positive integer")
            problem = _name_problem(name)
            if problem is not None:
                raise self._bad("agents", id_, problem)
            if not isinstance(spec, str) or not 0 < len(spec) <= MAX_SPEC:
                raise self._bad(
                    "agents",
                    id_,
                    f"its spec must be a string of 1 to {MAX_SPEC} characters, got {quoted(spec)}",
                )
            if not isinstance(key, str) or not 0 < len(key) <= 2 * MAX_SPEC:
                raise self._bad("agents", id_, f"its key must be a string, got {quoted(key)}")
            if roster not in (0, 1) or type(roster) is not int:
                raise self._bad("agents", id_, f"roster must be 0 or 1, got {quoted(roster)}")
            if name in names or key in keys:
                raise self._bad("agents", id_, "its name or key repeats another agent's")
            names.add(name)
            keys.add(key)
            entries[id_] = Entry(id_, name, spec, key, bool(roster))
        return entries

    @_guarded
    def entry(self, id_: int) -> Entry:
        entries = self._entries()
        if id_ not in entries:
            raise LadderError(f"the ladder has no agent {id_}")
        return entries[id_]

    @_guarded
    def entry_named(self, name: str) -> Entry:
        for entry in self._entries().values():
            if entry.name == name:
                return entry
        raise LadderError(f"the ladder has no agent named {quoted(name)}")

    @_guarded
    def agents(self, roster_only: bool = True) -> list[Entry]:
        """The ladder's agents in the order they were added."""
        return [e for e in self._entries().values() if e.roster or not roster_only]

    def _build(self, entry: Entry) -> Agent:
        """The agent of a stored entry: only a data-only kind without `allow_pickle`, and
        only while it is the player its key names."""
        kind = entry.spec.partition(":")[0]
        if kind not in DATA_ONLY_KINDS and not self.allow_pickle:
            raise LadderError(
                f"ladder database {quoted_path(self.path)}: agent {quoted(entry.name)} has the "
                f"spec {quoted(entry.spec)}, which may unpickle files and so run code from "
                f"them; give --allow-pickle only if you trust this database and those files"
            )
        agent = make_agent(entry.spec, seed=0)
        if agent.identity() != entry.key:
            raise LadderError(
                f"agent {quoted(entry.name)} ({quoted(entry.spec)}) is no longer the player "
                f"it was when it joined the ladder: its file changed (identity now "
                f"{quoted(agent.identity(), 90)}, stored {quoted(entry.key, 90)}); put the "
                f"file it joined with back, or add the new file under a new name "
                f"(`satellites ladder add {entry.spec} --name NEW`)"
            )
        return agent

    # ------------------------------------------------------------------ games

    @_guarded
    def games_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def _games(self, entries: dict[int, Entry] | None = None) -> list[GameRow]:
        """Every stored game, checked against its agents, its pair's seed and its record."""
        entries = self._entries() if entries is None else entries
        rows, seen = [], set()
        for row in self.db.execute(
            "SELECT id, a, b, game, seed, a_red, score, winner, reason, "
            "moves, record FROM games ORDER BY id"
        ):
            rows.append(self._game_row(row, entries, seen))
        return rows

    def _game_row(self, row, entries: dict[int, Entry], seen: set) -> GameRow:
        id_, a, b, game, seed, a_red, score, winner, reason, moves, record = row

        def bad(problem: str) -> LadderError:
            return self._bad("games", id_, problem)

        if not _is_int(id_, 1, 2**63 - 1):
            raise bad("its id must be a positive integer")
        for side, agent in (("a", a), ("b", b)):
            if type(agent) is not int or agent not in entries:
                raise bad(f"agent {side} = {quoted(agent)} is no agent of the ladder")
        if a == b or not entries[a].key < entries[b].key:
            raise bad("its agents a and b must be two agents in canonical order")
        if not _is_int(game, 0, MAX_GAMES_PER_PAIR - 1):
            raise bad(
                f"game must be an index from 0 to {MAX_GAMES_PER_PAIR - 1}, got {quoted(game)}"
            )
        if (a, b, game) in seen:
            raise bad(f"game {game} of its pair is stored twice")
        seen.add((a, b, game))
        if seed != pair_seed(self.seed, entries[a].key, entries[b].key):
            raise bad(f"seed {quoted(seed)} is not its pair's seed")
        if a_red not in (0, 1) or type(a_red) is not int or bool(a_red) != (game % 2 == 0):
            raise bad(f"a_red must be 1 in even games and 0 in odd ones, got {quoted(a_red)}")
        if winner not in ("red", "blue", None):
            raise bad(f"winner must be 'red', 'blue' or null, got {quoted(winner)}")
        expected = 0.5 if winner is None else float((winner == "red") == bool(a_red))
        if type(score) not in (int, float) or score != expected:
            raise bad(
                f"score {quoted(score)} does not agree with its winner {quoted(winner)} "
                f"(a's score must be {expected:g})"
            )
        if reason is not None and not isinstance(reason, str):
            raise bad(f"reason must be text or null, got {quoted(reason)}")
        if not isinstance(record, str) or len(record) > MAX_RECORD_BYTES:
            raise bad("its record must be JSON text")
        try:
            data = json.loads(record)
        except (ValueError, RecursionError):
            raise bad("its record is not JSON") from None
        result = data.get("result") if isinstance(data, dict) else None
        if not isinstance(result, dict) or not isinstance(data.get("moves"), list):
            raise bad("its record must be an object with 'moves' and 'result'")
        stored = result.get("winner")
        if (None if stored == "draw" else stored) != winner:
            raise bad(f"winner {quoted(winner)} is not its record's winner {quoted(stored)}")
        if type(moves) is not int or moves != len(data["moves"]):
            raise bad(f"moves {quoted(moves)} is not the number of moves in its record")
        return GameRow(id_, a, b, game, float(score), winner, record)

    def _pairs(self, agents: list[Entry], others: list[Entry] | None = None):
        """Canonical (a, b) pairs: every pair of `agents`, or each of `agents` with `others`."""
        pairs = (
            [(x, y) for k, x in enumerate(agents) for y in agents[k + 1 :]]
            if others is None
            else [(x, y) for x in agents for y in others if x.id != y.id]
        )
        return [(x, y) if x.key < y.key else (y, x) for x, y in pairs]

    def _missing(self, pairs, games: int, now: float, limit: int) -> list[Job]:
        jobs = []
        for a, b in pairs:
            done = set()
            for row_id, game in self.db.execute(
                "SELECT id, game FROM games WHERE a = ? AND b = ?", (a.id, b.id)
            ):
                if not _is_int(game, 0, MAX_GAMES_PER_PAIR - 1):
                    raise self._bad(
                        "games",
                        row_id,
                        f"game must be an index from 0 to "
                        f"{MAX_GAMES_PER_PAIR - 1}, got {quoted(game)}",
                    )
                done.add(game)
            claimed = {game for game, *claim in self._claims(a, b, now) if self._alive(*claim, now)}
            seed = pair_seed(self.seed, a.key, b.key)
            jobs += [Job(a, b, i, seed) for i in range(games) if i not in done | claimed]
            if len(jobs) >= limit:
                break
        return jobs[:limit]

    def _claims(self, a: Entry, b: Entry, now: float) -> list[tuple[int, str, int, float, str]]:
        """(game, host, pid, at, owner) of the pair's claims, checked."""
        claims = []
        for row in self.db.execute(
            "SELECT rowid, game, owner, host, pid, at FROM claims WHERE a = ? AND b = ?",
            (a.id, b.id),
        ):
            rowid, game, owner, host, pid, at = row
            if not _is_int(game, 0, MAX_GAMES_PER_PAIR - 1):
                raise self._bad("claims", rowid, f"game must be an index, got {quoted(game)}")
            if not isinstance(owner, str) or not isinstance(host, str):
                raise self._bad("claims", rowid, "owner and host must be text")
            if not _is_int(pid, 1, 2**31 - 1):
                raise self._bad("claims", rowid, f"pid must be a process id, got {quoted(pid)}")
            if type(at) not in (int, float) or not math.isfinite(at) or at > now + CLAIM_LEASE:
                raise self._bad(
                    "claims",
                    rowid,
                    f"at must be a time (seconds since 1970) not in the future, got {quoted(at)}",
                )
            claims.append((game, host, pid, float(at), owner))
        return claims

    @staticmethod
    def _alive(host: str, pid: int, at: float, owner: str, now: float) -> bool:
        """Whether a claim's run may still be playing its game: its lease was renewed within
        `CLAIM_LEASE`, and on this host its process still exists and started when the claim
        says (a reused pid is another process). A live unrelated process does not keep a
        claim: it cannot renew the lease."""
        if now - at > CLAIM_LEASE:
            return False
        if host != socket.gethostname():
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except (PermissionError, OverflowError):
            pass
        started = owner.partition("/")[2]
        return not started or _process_start(pid) in (None, started)

    def _claim(self, pairs, games: int, limit: int, owner: str) -> list[Job]:
        with self._transaction():
            now = time.time()
            jobs = self._missing(pairs, games, now, limit)
            self.db.executemany(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (j.a.id, j.b.id, j.game, owner, socket.gethostname(), os.getpid(), now)
                    for j in jobs
                ],
            )
        return jobs

    def _store(self, job: Job, record: dict, owner: str) -> bool:
        """Keep a finished game (once: a game another run stored first is dropped)."""
        winner = record["result"].get("winner")
        a_red = job.game % 2 == 0
        score = 0.5 if winner is None else float((winner == "red") == a_red)
        with self._transaction():
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO games (a, b, game, seed, a_red, score, winner, reason, "
                "moves, record, played) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job.a.id,
                    job.b.id,
                    job.game,
                    job.seed,
                    int(a_red),
                    score,
                    winner,
                    record["result"].get("reason"),
                    len(record["moves"]),
                    json.dumps(record),
                    _now(),
                ),
            )
            self.db.execute(
                "DELETE FROM claims WHERE a = ? AND b = ? AND game = ? AND owner = ?",
                (job.a.id, job.b.id, job.game, owner),
            )
        return cursor.rowcount == 1

    @_guarded
    def play(
        self,
        pairs,
        games: int,
        workers: int = 1,
        ray_address: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Play the games `pairs` still lack up to `games` each; returns how many this call
        stored. Games are claimed a few at a time, so runs beside it share the work."""
        if not 1 <= games <= MAX_GAMES_PER_PAIR:
            raise LadderError(f"games per pair must be in [1, {MAX_GAMES_PER_PAIR}], got {games}")
        # every agent builds, and is still itself, before a game is played
        for entry in {e.id: e for pair in pairs for e in pair}.values():
            self._build(entry)
        # the run's id, and its process's start time: a claim of a reused pid is stale
        owner = f"{uuid.uuid4().hex}/{_process_start(os.getpid()) or ''}"
        total = sum(max(0, games - self._count(a, b)) for a, b in pairs)
        stored = played = 0

        def store(job: Job, record: dict) -> None:
            nonlocal stored, played
            stored += self._store(job, record, owner)
            played += 1
            if progress:
                progress(played, total)

        batch = 1 if workers == 1 and ray_address is None else 2 * workers
        heartbeat = _Heartbeat(self.path, owner, HEARTBEAT)
        heartbeat.start()
        try:
            with Workers(
                workers,
                ray=ray_address is not None,
                ray_address=ray_address or None,
                init=init_worker,
            ) as pool:
                while True:
                    jobs = self._claim(pairs, games, batch, owner)
                    if not jobs:
                        return stored
                    # a finished game is stored as it arrives (Ctrl-C keeps it)
                    pool.run(
                        [
                            (j.a.spec, j.b.spec, j.game, j.seed, self.max_moves, j.a.key, j.b.key)
                            for j in jobs
                        ],
                        play_ray_job,
                        lambda index, record, jobs=jobs: store(jobs[index], record),
                    )
        finally:
            heartbeat.stop()
            self._release(None, owner)

    def _release(self, jobs: list[Job] | None, owner: str) -> None:
        with self._transaction():
            if jobs is None:
                self.db.execute("DELETE FROM claims WHERE owner = ?", (owner,))
            else:
                self.db.executemany(
                    "DELETE FROM claims WHERE a = ? AND b = ? AND game = ? AND owner = ?",
                    [(j.a.id, j.b.id, j.game, owner) for j in jobs],
                )

    def _count(self, a: Entry, b: Entry) -> int:
        return self.db.execute(
            "SELECT COUNT(*) FROM games WHERE a = ? AND b = ?", (a.id, b.id)
        ).fetchone()[0]

    @_guarded
    def run(
        self,
        games_per_pair: int,
        workers: int = 1,
        ray_address: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Play every game the roster's pairs still lack (`games_per_pair` each)."""
        self._games()  # a damaged game is an error before any game is played
        return self.play(self._pairs(self.agents()), games_per_pair, workers, ray_address, progress)

    def _record(self, row: GameRow) -> GameRecord:
        try:
            return GameRecord.from_dict(json.loads(row.record), f"ladder game {row.id}")
        except RecordError as error:
            raise self._bad("games", row.id, str(error)) from None

    @_guarded
    def game_rows(self) -> list[tuple[int, int, int, GameRecord]]:
        """(game id, agent a's id, agent b's id, record) of every game, in the order played."""
        return [(row.id, row.a, row.b, self._record(row)) for row in self._games()]

    @_guarded
    def records(self, agent: Entry | None = None) -> list[tuple[int, GameRecord]]:
        """(game id, record) of every game, or of `agent`'s games."""
        return [
            (row.id, self._record(row))
            for row in self._games()
            if agent is None or agent.id in (row.a, row.b)
        ]

    # ------------------------------------------------------------------ ratings

    @_guarded
    def results(self, agents: list[Entry]) -> tuple[np.ndarray, np.ndarray]:
        """(scores, games): n x n matrices of the agents' games among themselves."""
        index = {entry.id: k for k, entry in enumerate(agents)}
        n = len(agents)
        scores, games = np.zeros((n, n)), np.zeros((n, n))
        for row in self._games():
            if row.a in index and row.b in index:
                i, j = index[row.a], index[row.b]
                scores[i, j] += row.score
                scores[j, i] += 1 - row.score
                games[i, j] += 1
                games[j, i] += 1
        return scores, games

    @_guarded
    def ratings(self, agents: list[Entry] | None = None, prior_games: float = 1.0) -> Ratings:
        """Bradley-Terry ratings of the roster (or `agents`) from all their games, on the
        shipped scale: its anchor among the agents (by spec: `greedy` first) at its shipped
        rating, else the first agent at 0 (`satellites_env.rating.scale_anchor`)."""
        agents = self.agents() if agents is None else agents
        if not agents:
            raise LadderError("the ladder has no agents yet: `satellites ladder add SPEC`")
        names = [entry.name for entry in agents]
        spec, elo = scale_anchor([entry.spec for entry in agents])
        anchor = next(e.name for e in agents if e.spec == spec)
        scores, games = self.results(agents)
        return fit(names, scores, games, anchor, prior_games, anchor_elo=elo)

    @_guarded
    def rate(
        self,
        spec: str,
        games: int,
        workers: int = 1,
        ray_address: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        name: str | None = None,
    ) -> RateResult:
        """Rate one agent against the roster's fixed ratings (the roster is not refitted):
        a third of the games spread over every roster agent, the rest against the two whose
        ratings are nearest the estimate. Its games are kept; it joins the roster only if
        added. `progress` is called as (games played, games to play) after each game."""
        roster = self.agents()
        if len(roster) < 2:
            raise LadderError("rating needs a ladder of at least 2 agents")
        if not 2 <= games <= MAX_GAMES_PER_PAIR:
            raise LadderError(f"--games must be in [2, {MAX_GAMES_PER_PAIR}], got {games}")
        for entry in roster:  # before the new agent is stored
            self._build(entry)
        fixed = self.ratings(roster)
        entry = self.add(spec, name=name, roster=False)
        if entry.roster:
            raise LadderError(f"{quoted(entry.name)} is on the ladder already: `ladder show`")
        first = max(2, 2 * (games // (3 * 2 * len(roster))))  # even: both colours
        target = {r.id: first for r in roster}
        rest = max(0, games - sum(target.values()))
        later = 2 * ((rest + 3) // 4) + 2 * (rest // 4)  # even counts: both colours
        tally = _Tally(progress)
        # the second part's games as if none were played yet: exact for a new agent, and
        # recounted once the nearest opponents are known
        tally.total = self._lacking(entry, roster, target) + later
        self._play_against(entry, roster, target, workers, ray_address, tally)
        estimate = self._estimate(entry, roster, fixed)
        nearest = sorted(roster, key=lambda r: abs(fixed.rating(r.name) - estimate[0]))[:2]
        target[nearest[0].id] += 2 * ((rest + 3) // 4)
        target[nearest[1].id] += 2 * (rest // 4)
        tally.total = tally.done + self._lacking(entry, roster, target)
        self._play_against(entry, roster, target, workers, ray_address, tally)
        elo, low, high = self._estimate(entry, roster, fixed)
        played = {r.name: self._count(*self._order(entry, r)) for r in roster}
        return RateResult(entry.name, elo, low, high, played)

    def _order(self, x: Entry, y: Entry) -> tuple[Entry, Entry]:
        return (x, y) if x.key < y.key else (y, x)

    def _lacking(self, entry: Entry, roster: list[Entry], target: dict[int, int]) -> int:
        """Games `entry` still lacks to reach `target` against each roster agent."""
        return sum(max(0, target[r.id] - self._count(*self._order(entry, r))) for r in roster)

    def _play_against(self, entry, roster, target, workers, ray_address, tally) -> None:
        for r in roster:
            pair = self._order(entry, r)
            if self._count(*pair) < target[r.id]:
                tally.base = tally.done
                self.play([pair], target[r.id], workers, ray_address, tally)

    def _estimate(self, entry: Entry, roster: list[Entry], fixed: Ratings):
        totals: dict[int, list[float]] = {r.id: [0.0, 0] for r in roster}
        for row in self._games():
            for r in roster:
                if {row.a, row.b} == {entry.id, r.id}:
                    totals[r.id][0] += row.score if row.a == entry.id else 1 - row.score
                    totals[r.id][1] += 1
        return against_known(
            [(fixed.rating(r.name), totals[r.id][0], totals[r.id][1]) for r in roster]
        )


class _Tally:
    """Games played over several `Ladder.play` calls, reported to `progress` as one count
    of one total (each call counts its own games from 1)."""

    def __init__(self, progress: Callable[[int, int], None] | None):
        self.progress = progress
        self.base = self.done = self.total = 0

    def __call__(self, played: int, _total: int) -> None:
        self.done = self.base + played
        if self.progress:
            self.progress(self.done, max(self.total, self.done))


@dataclass
class RateResult:
    """An agent rated against a ladder's fixed ratings: Elo with its 95% interval, and the
    games it played against each roster agent."""

    name: str
    elo: float
    low: float
    high: float
    games: dict[str, int]
