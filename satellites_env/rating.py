"""Ratings: Bradley-Terry by maximum likelihood on the Elo scale, with 95% intervals and the
likelihood of superiority, as Ordo and BayesElo report them.

The model: player i beats player j with probability 1 / (1 + 10^((r_j - r_i) / 400)). A draw
counts as half a win each way. Every pairing that played also gets `prior_games` virtual
drawn games (BayesElo's prior, one game by default), which keeps the ratings finite when a
pairing is one-sided. Its pull is not always small: it moves a rating most where a player's
results are nearly all wins or all losses. On the shipped scale `random` (one game won of 120)
sits at +1 with the prior and at -222 without it, while the five other agents it does not pin
move by 28 to 55 Elo (with `random` as the anchor instead, the prior moved all six by 223 to
278).

Every fit is placed on one scale, the shipped ladder's (`ladders/scale.db`, `SCALE`): one
player of the fit, the anchor, is fixed at its rating there. `greedy` is pinned at +400 and
preferred as the anchor because it is well connected (it scored 27.5% on the ladder, and
neither won nor lost every game of any pairing); `random`, which nearly always loses, is the
anchor of last resort, since its rating is the one the prior decides. A fit with no player
of the scale fixes its first player at 0.

Only players linked to the anchor by a chain of games are rated: a player without games, or
whose games never reach the anchor through any chain of opponents (two agents that only ever
played each other), has no rating, no interval and no likelihood of superiority (`rated`
false, its Elo NaN, `as_dict` None), since nothing places it on the scale. The anchor is the
scale's agent among those that played.

Intervals come from the likelihood's curvature: the covariance of the ratings is the inverse
of the observed information (the Hessian of the negative log-likelihood) over the free
ratings, and an interval is the rating +- 1.96 standard deviations (a Wald interval). The
likelihood of superiority of i over j is Phi((r_i - r_j) / sd(r_i - r_j)), the probability,
under the same normal approximation, that i is the stronger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ELO_PER_NAT = 400 / math.log(10)
Z95 = 1.959963984540054

#: The rating the scale pins its anchor, `greedy`, at: +400 kept `random` near 0, where the
#: ladder's older anchor put it.
SCALE_ANCHOR = ("greedy", 400.0)
#: The shipped rating scale: the ratings `ladders/scale.db` fits to (`satellites ladder show
#: --db ladders/scale.db`: 20 games per pair, one virtual draw per pairing, greedy at +400).
#: Evaluations during training, `satellites evaluate` and every ladder read their anchor's
#: rating here (a test keeps these equal to the database's fit).
SCALE = {
    "random": 0.5,
    "greedy": 400.0,
    "mcts:50": 595.9,
    "mcts:200": 744.1,
    "mcts:1000": 787.9,
    "checkpoint:pretrained": 572.9,
    "az:pretrained:32": 841.7,
}
#: Which player of a fit is its anchor: the first of these that played. Best connected first
#: (greedy, then by how near 50% each scored on the ladder); random last.
ANCHOR_ORDER = (
    "greedy",
    "mcts:50",
    "checkpoint:pretrained",
    "mcts:200",
    "mcts:1000",
    "az:pretrained:32",
    "random",
)


def scale_anchor(players: list[str]) -> tuple[str, float]:
    """The player (an agent spec) a fit of `players` fixes, and the rating it is fixed at:
    the first of `ANCHOR_ORDER` among them at its rating in `SCALE`, else the first player
    at 0."""
    for spec in ANCHOR_ORDER:
        if spec in players:
            return spec, SCALE[spec]
    if not players:
        raise ValueError("a rating needs at least one player")
    return players[0], 0.0


def anchor_text(anchor: str, elo: float) -> str:
    """How a table names its anchor: `greedy = +400 (the shipped scale)`, or `x = +0 (no
    agent of the shipped scale played)`. An anchor fixed away from 0 is on the shipped scale
    (none of its ratings is 0), whatever the agent's name on a ladder."""
    if elo != 0.0:
        return f"{anchor} = {elo:+.0f} (the shipped scale)"
    return f"{anchor} = {elo:+.0f} (no agent of the shipped scale played)"


@dataclass
class Ratings:
    """A fit: `elo[i]` of `players[i]` (the anchor at `anchor_elo`), their covariance
    (Elo^2)."""

    players: list[str]
    elo: np.ndarray
    covariance: np.ndarray
    anchor: str
    anchor_elo: float = 0.0
    rated: np.ndarray | None = None  # linked to the anchor by games (None: every player)

    def __post_init__(self) -> None:
        if self.rated is None:
            self.rated = np.ones(len(self.players), dtype=bool)

    def is_rated(self, player: str) -> bool:
        """Whether a chain of games links `player` to the anchor (else it has no rating)."""
        assert self.rated is not None
        return bool(self.rated[self.players.index(player)])

    def _index(self, player: str) -> int:
        if not self.is_rated(player):
            raise ValueError(f"{player!r} is unrated: no chain of games links it to the anchor")
        return self.players.index(player)

    def rating(self, player: str) -> float:
        """A rated player's rating (ValueError for an unrated one)."""
        return float(self.elo[self._index(player)])

    def interval(self, player: str, z: float = Z95) -> tuple[float, float]:
        """The (low, high) interval of a rated player's rating (95% by default)."""
        i = self._index(player)
        half = z * math.sqrt(max(self.covariance[i, i], 0.0))
        return float(self.elo[i] - half), float(self.elo[i] + half)

    def superiority(self, a: str, b: str) -> float:
        """The likelihood that `a` is stronger than `b` (both rated)."""
        i, j = self._index(a), self._index(b)
        variance = self.covariance[i, i] + self.covariance[j, j] - 2 * self.covariance[i, j]
        difference = self.elo[i] - self.elo[j]
        if variance <= 0:
            return 0.5 if difference == 0 else float(difference > 0)
        return 0.5 * (1 + math.erf(difference / math.sqrt(2 * variance)))

    def as_dict(self) -> dict[str, float | None]:
        """Each player's rating; None for an unrated one."""
        assert self.rated is not None
        return {
            p: float(r) if rated else None
            for p, r, rated in zip(self.players, self.elo, self.rated, strict=True)
        }


def _reach(start: int, edges: np.ndarray) -> np.ndarray:
    reached = np.zeros(len(edges), dtype=bool)
    reached[start] = True
    frontier = [start]
    while frontier:
        found = np.flatnonzero(edges[frontier].any(axis=0) & ~reached)
        reached[found] = True
        frontier = found.tolist()
    return reached


def finite(start: int, scores: np.ndarray, games: np.ndarray) -> np.ndarray:
    """The players whose Bradley-Terry rating against player `start` is finite: a boolean per
    player. Each must score against some chain to `start` and concede along another (results
    running both ways: the strongly connected component of "i scored against j"); without
    that, a player that only won (or only lost) has no finite maximum-likelihood rating.
    With prior draws on every pairing that played, these are the players any chain of games
    links to `start`."""
    if not (np.asarray(games)[start] > 0).any():
        return np.zeros(len(games), dtype=bool)
    took = (np.asarray(scores) > 0) & (np.asarray(games) > 0)
    rated: np.ndarray = _reach(start, took) & _reach(start, took.T)
    return rated


def played_anchor(players: list[str], games: np.ndarray) -> tuple[str, float]:
    """`scale_anchor` among the players that played (all of them when none did)."""
    played = [p for k, p in enumerate(players) if (np.asarray(games)[k] > 0).any()]
    return scale_anchor(played or list(players))


def fit(
    players: list[str],
    scores: np.ndarray,
    games: np.ndarray,
    anchor: str | None = None,
    prior_games: float = 1.0,
    iterations: int = 200,
    anchor_elo: float | None = None,
) -> Ratings:
    """Bradley-Terry ratings of `players` from `scores[i, j]` (i's score against j: wins plus
    half the draws) and `games[i, j]` (games between them, symmetric).

    Args:
        players: the players' names (agent specs, for the scale's anchor to be found).
        scores: n x n, i's score against j.
        games: n x n, symmetric, the games between i and j.
        anchor: the player fixed at `anchor_elo`; default: the scale's anchor among the
            players that played ([`played_anchor`][satellites_env.rating.played_anchor]).
        prior_games: virtual drawn games added to every pairing that played.
        iterations: the most Newton steps.
        anchor_elo: the anchor's rating; default its shipped rating when `anchor` is
            None, else 0.

    Returns:
        The ratings with their covariance; players no chain of games links to the anchor
        (with `prior_games` 0: no chain of results running both ways) are unrated (NaN).
    """
    n = len(players)
    scores = np.asarray(scores, dtype=np.float64)
    games = np.asarray(games, dtype=np.float64)
    if scores.shape != (n, n) or games.shape != (n, n) or not np.allclose(games, games.T):
        raise ValueError("scores and games must be n x n, games symmetric")
    if anchor is None:
        anchor, default_elo = played_anchor(list(players), games)
    else:
        default_elo = 0.0
    anchor_elo = default_elo if anchor_elo is None else float(anchor_elo)
    fixed = players.index(anchor)
    played = games > 0
    scores = scores + 0.5 * prior_games * played
    games = games + prior_games * played
    rated = finite(fixed, scores, games)
    free = [i for i in range(n) if i != fixed and rated[i]]
    theta = np.zeros(n)  # natural-log strengths
    for _ in range(iterations):  # Newton's method on the concave log-likelihood
        gradient, hessian = _derivatives(theta, scores, games)
        g, h = gradient[free], hessian[np.ix_(free, free)]
        if not free:
            break
        try:
            step = np.linalg.solve(h, -g)
        except np.linalg.LinAlgError:
            step = -np.linalg.lstsq(h, g, rcond=None)[0]
        step = np.clip(step, -2.0, 2.0)
        theta[free] += step
        if np.abs(step).max() < 1e-12:
            break
    _, hessian = _derivatives(theta, scores, games)
    covariance = np.zeros((n, n))
    if free:
        information = -hessian[np.ix_(free, free)]
        covariance[np.ix_(free, free)] = np.linalg.pinv(information) * ELO_PER_NAT**2
    elo = (theta - theta[fixed]) * ELO_PER_NAT + anchor_elo
    elo[~rated] = math.nan
    covariance[~rated, :] = math.nan
    covariance[:, ~rated] = math.nan
    return Ratings(list(players), elo, covariance, anchor, anchor_elo, rated)


def _derivatives(
    theta: np.ndarray, scores: np.ndarray, games: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of the log-likelihood in the natural-log strengths."""
    p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j]: i beats j
    gradient = (scores - games * p).sum(axis=1)
    w = games * p * (1 - p)
    hessian = w.copy()
    np.fill_diagonal(hessian, 0.0)
    hessian[np.diag_indices_from(hessian)] = -w.sum(axis=1) + np.diag(w)
    return gradient, hessian


def against_known(
    results: list[tuple[float, float, int]], z: float = Z95, prior_games: float = 1.0
) -> tuple[float, float, float]:
    """(Elo, low, high): one player's rating from its games against opponents of known, fixed
    ratings; `results` holds (opponent Elo, score, games) per opponent."""
    if not any(n > 0 for _, _, n in results):
        raise ValueError("a rating needs at least one game")
    elo = np.array([0.0] + [r for r, _, _ in results]) / ELO_PER_NAT
    score = np.array([s for _, s, n in results], dtype=np.float64)
    count = np.array([n for _, _, n in results], dtype=np.float64)
    played = count > 0
    score, count = score + 0.5 * prior_games * played, count + prior_games * played
    theta = 0.0
    for _ in range(200):
        p = 1 / (1 + np.exp(elo[1:] - theta))
        gradient = float((score - count * p).sum())
        information = float((count * p * (1 - p)).sum())
        step = max(-2.0, min(2.0, gradient / information))
        theta += step
        if abs(step) < 1e-12:
            break
    p = 1 / (1 + np.exp(elo[1:] - theta))
    half = z / math.sqrt(float((count * p * (1 - p)).sum()))
    return theta * ELO_PER_NAT, (theta - half) * ELO_PER_NAT, (theta + half) * ELO_PER_NAT
