"""The seat policy: who plays each colour of a new self-play game."""

import numpy as np

from training.alphazero.seats import AGENT, MEMBER, RAW, SEARCH, SeatPolicy, stored


def _draws(policy, n=400, seed=0):
    rng = np.random.default_rng(seed)
    return [policy(rng) for _ in range(n)], rng


def test_plain_self_play_draws_nothing_and_both_seats_search():
    seats, rng = _draws(SeatPolicy())
    assert set(seats) == {(SEARCH, SEARCH)}
    assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state


def test_dagger_opponent_and_league_seats():
    seats, _ = _draws(SeatPolicy(dagger=0.5))
    share = np.mean([RAW in s for s in seats])
    assert 0.4 < share < 0.6 and {(RAW, SEARCH), (SEARCH, RAW)} <= set(seats)
    seats, _ = _draws(SeatPolicy(opponent=True))
    assert all(sorted(s) == [SEARCH, AGENT] for s in seats)
    assert {s.index(AGENT) for s in seats} == {0, 1}
    league = SeatPolicy(dagger=1.0, league_share=0.5)
    seats, _ = _draws(league)  # no members yet: no league game
    assert all(max(s) < MEMBER for s in seats)
    league.set_members(np.array([2, 3]), np.array([0.0, 1.0]))
    seats, _ = _draws(league)
    games = [s for s in seats if max(s) >= MEMBER]
    assert 0.4 < len(games) / len(seats) < 0.6
    # a league game has one member seat (the one with any chance) and no raw-policy colour
    assert all(sorted(s) == [SEARCH, MEMBER + 3] for s in games)
    assert stored(SEARCH) and stored(RAW) and not stored(AGENT) and not stored(MEMBER)
