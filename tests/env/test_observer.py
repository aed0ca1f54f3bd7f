"""`Observer`: the one observation path of `satellites_v0` and the Gymnasium env."""

from __future__ import annotations

import numpy as np
import pytest

from satellites_env import satellites_v0
from satellites_env.core import Game
from satellites_env.core.engine import new_work
from satellites_env.core.game import check_max_moves
from satellites_env.gym_env import SatellitesGymEnv
from satellites_env.observation import OBSERVATION_SHAPE, Observer, fill_observation, observe


def test_observe_returns_fresh_arrays_in_the_space():
    observer = Observer(max_moves=400)
    game = Game.new(seed=3)
    obs = observer.observe(game, 0, to_act=True)
    assert observer.space.contains(obs)
    assert obs["observation"].shape == OBSERVATION_SHAPE and obs["observation"].dtype == np.float32
    np.testing.assert_array_equal(obs["action_mask"], game.legal_mask())
    assert obs["action_mask"] is not game.legal_mask()  # a copy: the Game's cache is safe
    again = observer.observe(game, 0, to_act=True)
    assert not np.shares_memory(obs["observation"], again["observation"])
    obs["observation"][:] = 0
    obs["action_mask"][:] = 0
    assert game.legal_mask().any() and again["observation"].any()


def test_planes_are_the_kernels_and_the_mask_only_for_the_one_to_act():
    observer = Observer(max_moves=50)
    game = Game.new(seed=1, max_moves=50)
    for player in (0, 1):
        expected = observe(game.state, player, 50, new_work())
        obs = observer.observe(game, player, to_act=player == game.to_move)
        np.testing.assert_array_equal(obs["observation"], expected)
    assert not observer.observe(game, 1, to_act=False)["action_mask"].any()


def test_copy_false_reuses_the_observers_buffers():
    observer = Observer()
    game = Game.new(seed=2)
    view = observer.observe(game, 0, to_act=True, copy=False)
    assert view["observation"] is observer.planes and view["action_mask"] is observer.mask
    np.testing.assert_array_equal(view["action_mask"], game.legal_mask())
    planes = np.empty((100, OBSERVATION_SHAPE[2]), dtype=np.float32)
    fill_observation(game.state, 0, 400, planes, new_work())
    np.testing.assert_array_equal(view["observation"], planes.reshape(OBSERVATION_SHAPE))
    observer.observe(game, 1, to_act=False, copy=False)
    assert not observer.mask.any()  # overwritten by the next call


def test_a_game_with_another_move_cap_is_refused():
    with pytest.raises(ValueError, match="max_moves=400"):
        Observer(400).observe(Game.new(seed=0, max_moves=30), 0, True)


@pytest.mark.parametrize("bad", [0, -5, True, False, np.True_, 1.0, "3", None])
def test_check_max_moves(bad):
    with pytest.raises(ValueError, match="max_moves"):
        check_max_moves(bad)
    with pytest.raises(ValueError, match="max_moves"):
        Observer(bad)


def test_both_envs_observe_with_an_observer():
    aec = satellites_v0.raw_env(max_moves=77)
    gym_env = SatellitesGymEnv(max_moves=77)
    for observer, space in (
        (aec.observer, aec.observation_space("player_1")),
        (gym_env.observer, gym_env.observation_space),
    ):
        assert isinstance(observer, Observer) and observer.max_moves == 77
        assert space is observer.space
