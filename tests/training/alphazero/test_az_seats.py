"""The seat policy: who plays each colour of a new self-play game."""

import numpy as np

from training.alphazero.seats import AGENT, RAW, SEARCH, SeatPolicy


def _draws(policy, n=400, seed=0):
    rng = np.random.default_rng(seed)
    return [policy(rng) for _ in range(n)], rng


def test_plain_self_play_draws_nothing_and_both_seats_search():
    seats, rng = _draws(SeatPolicy())
    assert set(seats) == {(SEARCH, SEARCH)}
    assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state


def test_dagger_and_opponent_seats():
    seats, _ = _draws(SeatPolicy(dagger=0.5))
    share = np.mean([RAW in s for s in seats])
    assert 0.4 < share < 0.6 and {(RAW, SEARCH), (SEARCH, RAW)} <= set(seats)
    seats, _ = _draws(SeatPolicy(opponent=True))
    assert all(sorted(s) == [SEARCH, AGENT] for s in seats)
    assert {s.index(AGENT) for s in seats} == {0, 1}
