"""`Ladder`: the one object over a ladder database's parts (the open file, its agents, the
games it plays and the ratings of them), each of its calls a guarded step: SQLite's own errors
(a locked or damaged file) come out as one `LadderError` naming the file."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

import numpy as np

from ..core.board import DEFAULT_MAX_MOVES
from ..core.checks import quoted_path
from ..placement import Placement
from ..rating import Ratings
from ..record import GameRecord
from .database import LadderDB, LadderError
from .playing import play_games
from .ratings import RateResult, fit_ratings, rate_agent, score_matrices
from .roster import add_agent, agents_of, entry_named, entry_of
from .rows import Entry, game_record, pairs, read_games

P = ParamSpec("P")
R = TypeVar("R")


def guarded(method: Callable[Concatenate[Ladder, P], R]) -> Callable[Concatenate[Ladder, P], R]:
    """SQLite's own errors (a locked or damaged file) as one LadderError naming the file."""

    @functools.wraps(method)
    def call(self: Ladder, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as error:
            raise LadderError(f"ladder database {quoted_path(self.path)}: {error}") from None

    return call


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
        self.database = LadderDB(path, create, seed, max_moves, readonly)
        self.allow_pickle = allow_pickle

    @property
    def path(self) -> Path:
        """The database file."""
        return self.database.path

    @property
    def readonly(self) -> bool:
        """Whether the file is open for reading only."""
        return self.database.readonly

    @property
    def db(self) -> sqlite3.Connection:
        """The SQLite connection."""
        return self.database.db

    @property
    def seed(self) -> int:
        """The ladder's seed (every pair's games' seeds come from it)."""
        return self.database.seed

    @property
    def max_moves(self) -> int:
        """The ladder's move cap."""
        return self.database.max_moves

    def close(self) -> None:
        self.database.close()

    def __enter__(self) -> Ladder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ agents

    @guarded
    def add(self, spec: str, name: str | None = None, roster: bool = True) -> Entry:
        """Add an agent (built once here: a bad spec or file is an error now). An agent the
        ladder already has (the same identity) is returned as it is, made a roster member."""
        return add_agent(self.database, spec, name, roster)

    @guarded
    def entry(self, id_: int) -> Entry:
        return entry_of(self.database, id_)

    @guarded
    def entry_named(self, name: str) -> Entry:
        return entry_named(self.database, name)

    @guarded
    def agents(self, roster_only: bool = True) -> list[Entry]:
        """The ladder's agents in the order they were added."""
        return agents_of(self.database, roster_only)

    # ------------------------------------------------------------------ games

    @guarded
    def games_count(self) -> int:
        count: int = self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        return count

    @guarded
    def play(
        self,
        pairs: list[tuple[Entry, Entry]],
        games: int,
        placement: Placement | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Play the games `pairs` still lack up to `games` each; returns how many this call
        stored. Games are claimed a few at a time, so runs beside it share the work."""
        return play_games(self.database, pairs, games, placement, progress, self.allow_pickle)

    @guarded
    def run(
        self,
        games_per_pair: int,
        placement: Placement | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Play every game the roster's pairs still lack (`games_per_pair` each)."""
        read_games(self.database)  # a damaged game is an error before any game is played
        return self.play(pairs(self.agents()), games_per_pair, placement, progress)

    @guarded
    def game_rows(self) -> list[tuple[int, int, int, GameRecord]]:
        """(game id, agent a's id, agent b's id, record) of every game, in the order played."""
        return [
            (row.id, row.a, row.b, game_record(self.database, row))
            for row in read_games(self.database)
        ]

    @guarded
    def records(self, agent: Entry | None = None) -> list[tuple[int, GameRecord]]:
        """(game id, record) of every game, or of `agent`'s games."""
        return [
            (row.id, game_record(self.database, row))
            for row in read_games(self.database)
            if agent is None or agent.id in (row.a, row.b)
        ]

    # ------------------------------------------------------------------ ratings

    @guarded
    def results(self, agents: list[Entry]) -> tuple[np.ndarray, np.ndarray]:
        """(scores, games): n x n matrices of the agents' games among themselves."""
        return score_matrices(self.database, agents)

    @guarded
    def ratings(self, agents: list[Entry] | None = None, prior_games: float = 1.0) -> Ratings:
        """Bradley-Terry ratings of the roster (or `agents`) from all their games, on the
        shipped scale: its anchor among the agents that played (by spec: `greedy` first) at
        its shipped rating, else the first of them at 0 (`satellites_env.rating.played_anchor`);
        an agent no chain of games links to it is unrated."""
        return fit_ratings(self.database, agents, prior_games)

    @guarded
    def rate(
        self,
        spec: str,
        games: int,
        placement: Placement | None = None,
        progress: Callable[[int, int], None] | None = None,
        name: str | None = None,
    ) -> RateResult:
        """Rate one agent against the roster's fixed ratings (the roster is not refitted; its
        unrated agents take no part): a third of the games spread over every rated roster
        agent, the rest against the two whose ratings are nearest the estimate. Its games
        are kept; it joins the roster only if added. `progress` is called as (games played,
        games to play) after each game."""
        return rate_agent(self.database, spec, games, placement, progress, name, self.allow_pickle)
