"""A rating ladder: every game between its agents kept in a SQLite database, Bradley-Terry
ratings with 95% intervals over all of them (:mod:`satellites_env.rating`).

Chess engine testers keep rating lists this way (CCRL, CEGT, rated with Ordo or BayesElo): a
new agent plays only its own games, and every rating sits on one stable scale, `random` = 0.

The database (`ladder.db`; SQLite in WAL mode, so readers do not block the writer):

* `agents`: one row per player: its `name`, the `spec` that builds it, and its identity `key`
  (:meth:`Agent.identity <satellites_env.agents.Agent.identity>`: the spec, or for a
  file agent the sha256 of the file: a renamed file is the same player, a changed file a new
  one). `roster` is 1 for the ladder's agents (`add`), 0 for an agent only rated against them
  (`rate`).
* `games`: one row per game: the two agents in canonical order (`a`, `b`: by key), the game
  index, its set-up seed, the colours, a's score (1, 0.5, 0) and the whole record (start
  position and moves, JSON), so that every game replays.
* `claims`: the games being played now, by which process (two `ladder run` at once never play
  a game twice; the claims of a process that died are taken over).
* `meta`: the format and the ladder's settings (`seed`, `max_moves`).

Game i of the pair (a, b) is the arena's pairing game i (:func:`~satellites_env.arena.
play_pairing_game`: a is red in even games, set-ups shared by pairs of games) from the seed
`pair_seed(ladder seed, key a, key b)`: a pure function of the ladder, the pair and the index,
so two ladders fed the same agents hold the same games.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import socket
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .agents import Agent, make_agent
from .arena import init_worker, play_pairing_game
from .core.board import DEFAULT_MAX_MOVES
from .core.checks import quoted, quoted_path
from .jobs import Workers
from .rating import Ratings, against_known, fit
from .record import GameRecord

FORMAT = 1
#: PRAGMA application_id of a ladder database ("SATL"): a foreign SQLite file is refused
APPLICATION_ID = 0x5341544C
#: a claim older than this (seconds) is taken over even if its process may live elsewhere
CLAIM_LEASE = 24 * 3600.0
MAX_GAMES_PER_PAIR = 100_000
MAX_NAME = 100

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


def pair_seed(ladder_seed: int, key_a: str, key_b: str) -> int:
    """The seed of the pair's games: a pure function of the ladder's seed and the two keys."""
    text = f"{ladder_seed}\0{key_a}\0{key_b}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big") & 0x7FFFFFFF


def _now() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


_agents: dict[str, Agent] = {}  # this process's agents, one per spec (workers build their own)


def play_job(spec_a: str, spec_b: str, game: int, seed: int, max_moves: int) -> dict:
    """Play one ladder game (in this process or a worker): the record as a dict."""
    for spec in (spec_a, spec_b):
        if spec not in _agents:
            _agents[spec] = make_agent(spec, seed=0)
    record = play_pairing_game(_agents[spec_a], _agents[spec_b], game, seed, max_moves)
    return record.as_dict()


def play_ray_job(job: tuple, agents: dict | None = None) -> dict:
    """`play_job` in a Ray actor (the actor keeps its agents between jobs)."""
    return play_job(*job)


class Ladder:
    """A ladder database: `Ladder(path)` opens it, creating it when `create` (the default)."""

    def __init__(self, path: str | Path = "ladder.db", create: bool = True, seed: int = 0,
                 max_moves: int = DEFAULT_MAX_MOVES):
        self.path = Path(path)
        if self.path.is_symlink() and not self.path.exists():
            # SQLite would create the file wherever the link points
            raise LadderError(f"ladder database {quoted_path(self.path)} is a dangling symbolic "
                              f"link (to {quoted_path(os.readlink(self.path))}); give the "
                              f"database itself")
        if self.path.is_dir():
            raise LadderError(f"ladder database {quoted_path(self.path)} is a directory")
        exists = self.path.exists()
        if exists and not self.path.is_file():
            raise LadderError(f"ladder database {quoted_path(self.path)} is not a regular file")
        if not exists and not create:
            raise LadderError(f"ladder database {quoted_path(self.path)} does not exist")
        try:
            self.db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self._check(exists, seed, max_moves)
        except sqlite3.DatabaseError as error:
            raise LadderError(f"{quoted_path(self.path)} is not a ladder database, or it is "
                              f"damaged: {error}") from None

    def _check(self, exists: bool, seed: int, max_moves: int) -> None:
        application = self.db.execute("PRAGMA application_id").fetchone()[0]
        tables = {row[0] for row in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if exists and (application != APPLICATION_ID or not {"meta", "agents", "games"} <= tables):
            if application == 0 and not tables:
                exists = False  # an empty file: a new ladder
            else:
                raise LadderError(f"{quoted_path(self.path)} is not a ladder database (an SQLite "
                                  f"file of something else)")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA foreign_keys = ON")
        if not exists:
            with self._transaction():
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                for statement in SCHEMA.split(";"):  # (executescript would commit first)
                    if statement.strip():
                        self.db.execute(statement)
                for key, value in (("format", FORMAT), ("seed", seed), ("max_moves", max_moves)):
                    self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, str(value)))
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        try:
            if int(meta["format"]) != FORMAT:
                raise LadderError(f"{quoted_path(self.path)} is a ladder of format "
                                  f"{meta['format']}; this code reads format {FORMAT}")
            self.seed, self.max_moves = int(meta["seed"]), int(meta["max_moves"])
        except (KeyError, ValueError):
            raise LadderError(f"{quoted_path(self.path)}: its settings are damaged") from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Ladder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _transaction(self):
        """BEGIN IMMEDIATE ... COMMIT: one writer at a time, the others wait (timeout 60 s)."""
        ladder = self

        class _Tx:
            def __enter__(self):
                ladder.db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind, value, trace):
                ladder.db.execute("COMMIT" if kind is None else "ROLLBACK")

        return _Tx()

    # ------------------------------------------------------------------ agents

    def add(self, spec: str, name: str | None = None, roster: bool = True) -> Entry:
        """Add an agent (built once here: a bad spec or file is an error now). An agent the
        ladder already has (the same identity) is returned as it is, made a roster member."""
        agent = make_agent(spec, seed=0)
        key = agent.identity()
        name = spec if name is None else name
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or any(
                not c.isprintable() for c in name):
            raise LadderError(f"agent name {quoted(str(name))} must be 1 to {MAX_NAME} printable "
                              f"characters")
        with self._transaction():
            row = self.db.execute("SELECT id, name, spec, key, roster FROM agents WHERE key = ?",
                                  (key,)).fetchone()
            if row is not None:
                if roster and not row[4]:
                    self.db.execute("UPDATE agents SET roster = 1 WHERE id = ?", (row[0],))
                if row[2] != spec:  # a renamed or moved file: play it from where it is now
                    self.db.execute("UPDATE agents SET spec = ? WHERE id = ?", (spec, row[0]))
                return self.entry(row[0])
            taken = self.db.execute("SELECT key FROM agents WHERE name = ?", (name,)).fetchone()
            if taken is not None:
                raise LadderError(f"the name {quoted(name)} is taken by another agent; give "
                                  f"--name")
            self.db.execute("INSERT INTO agents (key, name, spec, roster, added) VALUES "
                            "(?, ?, ?, ?, ?)", (key, name, spec, int(roster), _now()))
        return self.entry_named(name)

    def entry(self, id_: int) -> Entry:
        row = self.db.execute("SELECT id, name, spec, key, roster FROM agents WHERE id = ?",
                              (id_,)).fetchone()
        return Entry(row[0], row[1], row[2], row[3], bool(row[4]))

    def entry_named(self, name: str) -> Entry:
        row = self.db.execute("SELECT id FROM agents WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise LadderError(f"the ladder has no agent named {quoted(name)}")
        return self.entry(row[0])

    def agents(self, roster_only: bool = True) -> list[Entry]:
        """The ladder's agents in the order they were added."""
        rows = self.db.execute("SELECT id FROM agents" + (" WHERE roster = 1" if roster_only
                                                          else "") + " ORDER BY id")
        return [self.entry(row[0]) for row in rows.fetchall()]

    # ------------------------------------------------------------------ games

    def games_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def _pairs(self, agents: list[Entry], others: list[Entry] | None = None):
        """Canonical (a, b) pairs: every pair of `agents`, or each of `agents` with `others`."""
        pairs = ([(x, y) for k, x in enumerate(agents) for y in agents[k + 1:]]
                 if others is None else [(x, y) for x in agents for y in others if x.id != y.id])
        return [(x, y) if x.key < y.key else (y, x) for x, y in pairs]

    def _missing(self, pairs, games: int, now: float, limit: int) -> list[Job]:
        jobs = []
        for a, b in pairs:
            done = {row[0] for row in self.db.execute(
                "SELECT game FROM games WHERE a = ? AND b = ?", (a.id, b.id))}
            claimed = {row[0] for row in self.db.execute(
                "SELECT game, host, pid, at FROM claims WHERE a = ? AND b = ?", (a.id, b.id))
                if self._alive(row[1], row[2], row[3], now)}
            seed = pair_seed(self.seed, a.key, b.key)
            jobs += [Job(a, b, i, seed) for i in range(games) if i not in done | claimed]
            if len(jobs) >= limit:
                break
        return jobs[:limit]

    @staticmethod
    def _alive(host: str, pid: int, at: float, now: float) -> bool:
        """Whether a claim's process may still be playing its game."""
        if now - at > CLAIM_LEASE:
            return False
        if host != socket.gethostname():
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def _claim(self, pairs, games: int, limit: int, owner: str) -> list[Job]:
        with self._transaction():
            now = time.time()
            jobs = self._missing(pairs, games, now, limit)
            self.db.executemany(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(j.a.id, j.b.id, j.game, owner, socket.gethostname(), os.getpid(), now)
                 for j in jobs])
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
                (job.a.id, job.b.id, job.game, job.seed, int(a_red), score, winner,
                 record["result"].get("reason"), len(record["moves"]), json.dumps(record),
                 _now()))
            self.db.execute("DELETE FROM claims WHERE a = ? AND b = ? AND game = ? AND "
                            "owner = ?", (job.a.id, job.b.id, job.game, owner))
        return cursor.rowcount == 1

    def play(self, pairs, games: int, workers: int = 1, ray_address: str | None = None,
             progress: Callable[[int, int], None] | None = None) -> int:
        """Play the games `pairs` still lack up to `games` each; returns how many this call
        stored. Games are claimed a few at a time, so runs beside it share the work."""
        if not 1 <= games <= MAX_GAMES_PER_PAIR:
            raise LadderError(f"games per pair must be in [1, {MAX_GAMES_PER_PAIR}], got {games}")
        for a, b in pairs:  # every agent builds before a game is played
            make_agent(a.spec, seed=0), make_agent(b.spec, seed=0)
        owner = uuid.uuid4().hex
        total = sum(max(0, games - self._count(a, b)) for a, b in pairs)
        stored = played = 0

        def store(job: Job, record: dict) -> None:
            nonlocal stored, played
            stored += self._store(job, record, owner)
            played += 1
            if progress:
                progress(played, total)

        batch = 1 if workers == 1 and ray_address is None else 2 * workers
        try:
            with Workers(workers, ray=ray_address is not None, ray_address=ray_address or None,
                         init=init_worker) as pool:
                while True:
                    jobs = self._claim(pairs, games, batch, owner)
                    if not jobs:
                        return stored
                    # a finished game is stored as it arrives (Ctrl-C keeps it)
                    pool.run([(j.a.spec, j.b.spec, j.game, j.seed, self.max_moves) for j in jobs],
                             play_ray_job,
                             lambda index, record, jobs=jobs: store(jobs[index], record))
        finally:
            self._release(None, owner)

    def _release(self, jobs: list[Job] | None, owner: str) -> None:
        with self._transaction():
            if jobs is None:
                self.db.execute("DELETE FROM claims WHERE owner = ?", (owner,))
            else:
                self.db.executemany("DELETE FROM claims WHERE a = ? AND b = ? AND game = ? AND "
                                    "owner = ?", [(j.a.id, j.b.id, j.game, owner) for j in jobs])

    def _count(self, a: Entry, b: Entry) -> int:
        return self.db.execute("SELECT COUNT(*) FROM games WHERE a = ? AND b = ?",
                               (a.id, b.id)).fetchone()[0]

    def run(self, games_per_pair: int, workers: int = 1, ray_address: str | None = None,
            progress: Callable[[int, int], None] | None = None) -> int:
        """Play every game the roster's pairs still lack (`games_per_pair` each)."""
        return self.play(self._pairs(self.agents()), games_per_pair, workers, ray_address,
                         progress)

    def game_rows(self) -> list[tuple[int, int, int, GameRecord]]:
        """(game id, agent a's id, agent b's id, record) of every game, in the order played."""
        return [(row[0], row[1], row[2],
                 GameRecord.from_dict(json.loads(row[3]), f"ladder game {row[0]}"))
                for row in self.db.execute("SELECT id, a, b, record FROM games ORDER BY id")]

    def records(self, agent: Entry | None = None) -> list[tuple[int, GameRecord]]:
        """(game id, record) of every game, or of `agent`'s games."""
        query = "SELECT id, record FROM games"
        rows = (self.db.execute(query + " WHERE a = ? OR b = ? ORDER BY id", (agent.id, agent.id))
                if agent else self.db.execute(query + " ORDER BY id"))
        return [(row[0], GameRecord.from_dict(json.loads(row[1]), f"ladder game {row[0]}"))
                for row in rows.fetchall()]

    # ------------------------------------------------------------------ ratings

    def results(self, agents: list[Entry]) -> tuple[np.ndarray, np.ndarray]:
        """(scores, games): n x n matrices of the agents' games among themselves."""
        index = {entry.id: k for k, entry in enumerate(agents)}
        n = len(agents)
        scores, games = np.zeros((n, n)), np.zeros((n, n))
        for a, b, score, count in self.db.execute(
                "SELECT a, b, SUM(score), COUNT(*) FROM games GROUP BY a, b"):
            if a in index and b in index:
                i, j = index[a], index[b]
                scores[i, j] += score
                scores[j, i] += count - score
                games[i, j] += count
                games[j, i] += count
        return scores, games

    def ratings(self, agents: list[Entry] | None = None, prior_games: float = 1.0) -> Ratings:
        """Bradley-Terry ratings of the roster (or `agents`) from all their games, `random`
        at 0 when it plays, else the first agent."""
        agents = self.agents() if agents is None else agents
        if not agents:
            raise LadderError("the ladder has no agents yet: `satellites ladder add SPEC`")
        names = [entry.name for entry in agents]
        anchor = next((e.name for e in agents if e.spec == "random"), names[0])
        scores, games = self.results(agents)
        return fit(names, scores, games, anchor, prior_games)

    def rate(self, spec: str, games: int, workers: int = 1, ray_address: str | None = None,
             progress: Callable[[int, int], None] | None = None, name: str | None = None
             ) -> "RateResult":
        """Rate one agent against the roster's fixed ratings (the roster is not refitted):
        a third of the games spread over every roster agent, the rest against the two whose
        ratings are nearest the estimate. Its games are kept; it joins the roster only if
        added."""
        roster = self.agents()
        if len(roster) < 2:
            raise LadderError("rating needs a ladder of at least 2 agents")
        if not 2 <= games <= MAX_GAMES_PER_PAIR:
            raise LadderError(f"--games must be in [2, {MAX_GAMES_PER_PAIR}], got {games}")
        fixed = self.ratings(roster)
        entry = self.add(spec, name=name, roster=False)
        if entry.roster:
            raise LadderError(f"{quoted(entry.name)} is on the ladder already: `ladder show`")
        first = max(2, 2 * (games // (3 * 2 * len(roster))))  # even: both colours
        target = {r.id: first for r in roster}
        self._play_against(entry, roster, target, workers, ray_address, progress)
        estimate = self._estimate(entry, roster, fixed)
        nearest = sorted(roster, key=lambda r: abs(fixed.rating(r.name) - estimate[0]))[:2]
        rest = max(0, games - sum(target.values()))
        target[nearest[0].id] += 2 * ((rest + 3) // 4)  # even counts: both colours
        target[nearest[1].id] += 2 * (rest // 4)
        self._play_against(entry, roster, target, workers, ray_address, progress)
        elo, low, high = self._estimate(entry, roster, fixed)
        played = {r.name: self._count(*self._order(entry, r)) for r in roster}
        return RateResult(entry.name, elo, low, high, played)

    def _order(self, x: Entry, y: Entry) -> tuple[Entry, Entry]:
        return (x, y) if x.key < y.key else (y, x)

    def _play_against(self, entry, roster, target, workers, ray_address, progress) -> None:
        for r in roster:
            pair = self._order(entry, r)
            if self._count(*pair) < target[r.id]:
                self.play([pair], target[r.id], workers, ray_address, progress)

    def _estimate(self, entry: Entry, roster: list[Entry], fixed: Ratings):
        results = []
        for r in roster:
            a, b = self._order(entry, r)
            row = self.db.execute("SELECT SUM(score), COUNT(*) FROM games WHERE a = ? AND b = ?",
                                  (a.id, b.id)).fetchone()
            count = row[1]
            score = (row[0] or 0.0) if a.id == entry.id else count - (row[0] or 0.0)
            results.append((fixed.rating(r.name), score, count))
        return against_known(results)


@dataclass
class RateResult:
    """An agent rated against a ladder's fixed ratings: Elo with its 95% interval, and the
    games it played against each roster agent."""

    name: str
    elo: float
    low: float
    high: float
    games: dict[str, int]
