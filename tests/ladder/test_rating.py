"""Bradley-Terry ratings with intervals: a hand-computed case, agreement with the arena's
Elo, and simulated players of known strength inside their intervals at the stated rate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from satellites_env.rating import ELO_PER_NAT, against_known, fit


def test_two_players_by_hand():
    """a scores 3 of 4 against b: r_a - r_b = 400 log10(3) without a prior; the observed
    information is n p (1 - p) = 4 x 3/4 x 1/4 = 0.75 per nat^2."""
    ratings = fit(
        ["b", "a"], np.array([[0, 1], [3, 0]]), np.array([[0, 4], [4, 0]]), prior_games=0.0
    )
    assert ratings.rating("a") == pytest.approx(400 * math.log10(3))
    assert ratings.rating("b") == 0.0 and ratings.anchor == "b"
    sd = ELO_PER_NAT / math.sqrt(0.75)
    low, high = ratings.interval("a")
    assert (high - low) / 2 == pytest.approx(1.959963984540054 * sd)
    assert ratings.superiority("a", "b") == pytest.approx(
        0.5 * (1 + math.erf(400 * math.log10(3) / (sd * math.sqrt(2))))
    )
    with_prior = fit(["b", "a"], np.array([[0, 1], [3, 0]]), np.array([[0, 4], [4, 0]]))
    assert with_prior.rating("a") == pytest.approx(400 * math.log10(3.5 / 1.5))


def test_against_known_opponents_matches_a_full_fit_with_them_fixed():
    elo, low, high = against_known([(0.0, 15, 20), (445.2, 8, 20)])
    assert low < elo < high and 250 < elo < 350
    with pytest.raises(ValueError):
        against_known([(0.0, 0, 0)])


def test_a_fit_is_placed_on_the_shipped_scale_by_its_best_connected_agent():
    from satellites_env.rating import SCALE, scale_anchor

    scores = np.array([[0, 5, 1], [15, 0, 4], [19, 16, 0]])
    games = np.array([[0, 20, 20], [20, 0, 20], [20, 20, 0]])
    ratings = fit(["random", "greedy", "mcts:200"], scores, games)
    assert ratings.anchor == "greedy" and ratings.rating("greedy") == SCALE["greedy"] == 400
    assert scale_anchor(["random", "mcts:200"]) == ("mcts:200", SCALE["mcts:200"])
    assert scale_anchor(["x", "y"]) == ("x", 0.0)
    shifted = fit(["random", "greedy", "mcts:200"], scores, games, "random")
    assert shifted.rating("random") == 0.0  # a named anchor sits at 0
    assert shifted.rating("mcts:200") - shifted.rating("greedy") == pytest.approx(
        ratings.rating("mcts:200") - ratings.rating("greedy")
    )


def test_one_sided_results_stay_finite():
    ratings = fit(["random", "x"], np.array([[0, 0], [50, 0]]), np.array([[0, 50], [50, 0]]))
    assert math.isfinite(ratings.rating("x")) and ratings.rating("x") > 500


@pytest.mark.parametrize("seed", [0, 1])
def test_simulated_players_fall_inside_their_intervals_at_the_stated_rate(seed):
    """Six players of known Elo, 60 games per pair drawn from the model (a draw in 10% of the
    games, the wins set so that the expected score is the model's): over 200 leagues, the 95%
    interval holds the true rating about 95% of the time (draws make it a little wider)."""
    rng = np.random.default_rng(seed)
    truth = np.array([0.0, 150.0, 300.0, 420.0, 600.0, 800.0])
    names = ["random"] + [f"p{k}" for k in range(1, 6)]
    n, inside, total = len(truth), 0, 0
    for _ in range(200):
        scores, games = np.zeros((n, n)), np.zeros((n, n))
        for i in range(n):
            for j in range(i + 1, n):
                p = 1 / (1 + 10 ** ((truth[j] - truth[i]) / 400))
                draw = min(0.1, 2 * p, 2 * (1 - p))
                draws = rng.binomial(60, draw)
                wins = rng.binomial(60 - draws, (p - draw / 2) / (1 - draw))
                scores[i, j] = wins + 0.5 * draws
                scores[j, i] = 60 - scores[i, j]
                games[i, j] = games[j, i] = 60
        ratings = fit(names, scores, games, "random", prior_games=0.0)
        for name, true in zip(names[1:], truth[1:], strict=False):
            low, high = ratings.interval(name)
            inside += low <= true <= high
            total += 1
    assert 0.92 <= inside / total <= 0.98, inside / total
