"""Ratings from a ladder's games: Bradley-Terry over all of them on the shipped scale
(`satellites_env.rating`), and one agent rated against the roster's fixed ratings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.checks import quoted
from ..placement import Placement
from ..rating import Ratings, against_known, fit, played_anchor
from .database import LadderDB, LadderError
from .playing import play_games
from .roster import add_agent, agents_of, build
from .rows import MAX_GAMES_PER_PAIR, Entry, canonical, count_games, read_games


@dataclass
class RateResult:
    """An agent rated against a ladder's fixed ratings: Elo with its 95% interval, and the
    games it played against each roster agent."""

    name: str
    elo: float
    low: float
    high: float
    games: dict[str, int]


def score_matrices(ladder: LadderDB, players: list[Entry]) -> tuple[np.ndarray, np.ndarray]:
    """(scores, games): n x n matrices of the agents' games among themselves."""
    index = {entry.id: k for k, entry in enumerate(players)}
    n = len(players)
    scores, games = np.zeros((n, n)), np.zeros((n, n))
    for row in read_games(ladder):
        if row.a in index and row.b in index:
            i, j = index[row.a], index[row.b]
            scores[i, j] += row.score
            scores[j, i] += 1 - row.score
            games[i, j] += 1
            games[j, i] += 1
    return scores, games


def fit_ratings(
    ladder: LadderDB, players: list[Entry] | None = None, prior_games: float = 1.0
) -> Ratings:
    """Bradley-Terry ratings of the roster (or `players`) from all their games, on the
    shipped scale (see `Ladder.ratings`)."""
    players = agents_of(ladder) if players is None else players
    if not players:
        raise LadderError("the ladder has no agents yet: `satellites ladder add SPEC`")
    names = [entry.name for entry in players]
    scores, games = score_matrices(ladder, players)
    spec, elo = played_anchor([entry.spec for entry in players], games)
    anchor = next(e.name for e in players if e.spec == spec)
    return fit(names, scores, games, anchor, prior_games, anchor_elo=elo)


class Tally:
    """Games played over several `play` calls, reported to `progress` as one count of one
    total (each call counts its own games from 1)."""

    def __init__(self, progress: Callable[[int, int], None] | None):
        self.progress = progress
        self.base = self.done = self.total = 0

    def __call__(self, played: int, _total: int) -> None:
        self.done = self.base + played
        if self.progress:
            self.progress(self.done, max(self.total, self.done))


def rate_agent(
    ladder: LadderDB,
    spec: str,
    games: int,
    placement: Placement | None = None,
    progress: Callable[[int, int], None] | None = None,
    name: str | None = None,
    allow_pickle: bool = False,
) -> RateResult:
    """Rate one agent against the roster's fixed ratings (see `Ladder.rate`)."""
    roster = agents_of(ladder)
    if len(roster) < 2:
        raise LadderError("rating needs a ladder of at least 2 agents")
    if not 2 <= games <= MAX_GAMES_PER_PAIR:
        raise LadderError(f"--games must be in [2, {MAX_GAMES_PER_PAIR}], got {games}")
    for entry in roster:  # before the new agent is stored
        build(ladder, entry, allow_pickle)
    fixed = fit_ratings(ladder, roster)
    entry = add_agent(ladder, spec, name=name, roster=False)
    if entry.roster:
        raise LadderError(f"{quoted(entry.name)} is on the ladder already: `ladder show`")
    # only rated agents have a rating to be measured against
    roster = [r for r in roster if fixed.is_rated(r.name)]
    if len(roster) < 2:
        raise LadderError(
            "rating needs at least 2 rated agents (linked by games to the ladder's "
            "anchor): `satellites ladder run` first"
        )
    first = max(2, 2 * (games // (3 * 2 * len(roster))))  # even: both colours
    target = {r.id: first for r in roster}
    rest = max(0, games - sum(target.values()))
    later = 2 * ((rest + 3) // 4) + 2 * (rest // 4)  # even counts: both colours
    tally = Tally(progress)

    # the second part's games as if none were played yet: exact for a new agent, and
    # recounted once the nearest opponents are known
    tally.total = lacking(ladder, entry, roster, target) + later
    play_against(ladder, entry, roster, target, tally, placement, allow_pickle)
    estimate = against_roster(ladder, entry, roster, fixed)
    nearest = sorted(roster, key=lambda r: abs(fixed.rating(r.name) - estimate[0]))[:2]
    target[nearest[0].id] += 2 * ((rest + 3) // 4)
    target[nearest[1].id] += 2 * (rest // 4)
    tally.total = tally.done + lacking(ladder, entry, roster, target)
    play_against(ladder, entry, roster, target, tally, placement, allow_pickle)
    elo, low, high = against_roster(ladder, entry, roster, fixed)
    played = {r.name: count_games(ladder, *canonical(entry, r)) for r in roster}
    return RateResult(entry.name, elo, low, high, played)


def lacking(ladder: LadderDB, entry: Entry, roster: list[Entry], target: dict[int, int]) -> int:
    """Games `entry` still lacks to reach `target` against each roster agent."""
    return sum(max(0, target[r.id] - count_games(ladder, *canonical(entry, r))) for r in roster)


def play_against(
    ladder: LadderDB,
    entry: Entry,
    roster: list[Entry],
    target: dict[int, int],
    tally: Tally,
    placement: Placement | None,
    allow_pickle: bool,
) -> None:
    """Play the games `entry` lacks to reach `target` against each roster agent."""
    for r in roster:
        pair = canonical(entry, r)
        if count_games(ladder, *pair) < target[r.id]:
            tally.base = tally.done
            play_games(ladder, [pair], target[r.id], placement, tally, allow_pickle)


def against_roster(
    ladder: LadderDB, entry: Entry, roster: list[Entry], fixed: Ratings
) -> tuple[float, float, float]:
    """(Elo, low, high) of `entry` from its games against the roster's fixed ratings."""
    scores = {r.id: 0.0 for r in roster}
    counts = {r.id: 0 for r in roster}
    for row in read_games(ladder):
        for r in roster:
            if {row.a, row.b} == {entry.id, r.id}:
                scores[r.id] += row.score if row.a == entry.id else 1 - row.score
                counts[r.id] += 1
    return against_known([(fixed.rating(r.name), scores[r.id], counts[r.id]) for r in roster])
