"""`MaskedDictObservation`: the observation RLlib's masking module reads, the same game and
rules as `satellites_v0` underneath (fuzzed over random games, illegal actions included)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satellites_env import satellites_v0
from satellites_env.core.board import N_ACTIONS
from satellites_env.wrappers import MaskedDictObservation, masked_dict


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    flatten=st.booleans(),
    picks=st.lists(st.integers(0, 10**6), max_size=60),
    illegal_at=st.integers(0, 80),
)
def test_fuzz_wrapped_games_match_the_plain_env(seed, flatten, picks, illegal_at):
    wrapped = MaskedDictObservation(satellites_v0.env(max_moves=50), flatten=flatten)
    plain = satellites_v0.env(max_moves=50)
    wrapped.reset(seed=seed)
    plain.reset(seed=seed)
    space = wrapped.observation_space("player_0")
    for step, pick in enumerate(picks):
        if not plain.agents:
            break
        ours, theirs = wrapped.last(), plain.last()
        assert space.contains(ours[0])
        expected = masked_dict(theirs[0], flatten)
        assert all(np.array_equal(ours[0][k], expected[k]) for k in expected)
        assert ours[1:4] == theirs[1:4]
        if theirs[2] or theirs[3]:
            action = None
        elif step == illegal_at:
            action = pick % N_ACTIONS  # maybe illegal: both end the game the same way
        else:
            legal = np.flatnonzero(theirs[0]["action_mask"])
            action = int(legal[pick % len(legal)])
        wrapped.step(action)
        plain.step(action)
    assert wrapped.agents == plain.agents
    assert wrapped.infos == plain.infos and wrapped.rewards == plain.rewards


def test_flatten_must_be_a_bool():
    for bad in ("yes", 1, None, np.array([True, False])):
        with pytest.raises(ValueError, match=r"^flatten must be True or False"):
            MaskedDictObservation(satellites_v0.env(), flatten=bad)
