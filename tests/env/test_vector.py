"""`SatellitesVectorEnv`: Gymnasium vector conventions, move-for-move agreement with `Game`,
same-step auto-reset, seeding and illegal actions."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, VectorEnv

from satellites_env.core import Game, IllegalActionError
from satellites_env.core.board import N_ACTIONS, N_CELLS, PASS_ACTION, PUSH_BASE
from satellites_env.core.engine import new_work
from satellites_env.env import ResetNeededError
from satellites_env.observation import N_PLANES, fill_observation
from satellites_env.vector import SatellitesVectorEnv


def planes_of(state: np.ndarray, player: int, max_moves: int) -> np.ndarray:
    """The single-game observation kernel's planes, as the env shapes them."""
    planes = np.zeros((N_CELLS, N_PLANES), dtype=np.float32)
    fill_observation(state, player, max_moves, planes, new_work())
    return planes.reshape(10, 10, N_PLANES)


def test_spaces_and_metadata():
    env = SatellitesVectorEnv(3, max_moves=50)
    assert isinstance(env, VectorEnv) and env.num_envs == 3
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_action_space.n == N_ACTIONS and env.action_space.shape == (3,)
    assert env.single_observation_space["observation"].shape == (10, 10, N_PLANES)
    assert env.observation_space["observation"].shape == (3, 10, 10, N_PLANES)
    assert env.observation_space["action_mask"].shape == (3, N_ACTIONS)
    with pytest.raises(ResetNeededError, match="reset"):  # a ValueError, as documented
        env.step(np.zeros(3, dtype=np.int64))
    obs, infos = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    assert infos["current_player"].tolist() == [0, 0, 0]
    assert env.to_spn(2) == Game(env.states[2].copy()).to_spn()
    for bad in (3, -1, 2.0, "0"):
        with pytest.raises(ValueError, match=r"^i must be an integer from 0 to 2"):
            env.to_spn(bad)
    assert "num_envs=3" in repr(env)
    env.close()
    assert env.closed


@pytest.mark.parametrize("max_moves", [400, 45])
def test_matches_game_move_for_move(max_moves):
    n = 16
    env = SatellitesVectorEnv(n, max_moves=max_moves)
    obs, infos = env.reset(seed=max_moves)
    games = [Game(env.states[i].copy(), max_moves) for i in range(n)]
    rng = np.random.default_rng(0)
    seen = Counter()
    for _ in range(450 if max_moves == 400 else 120):
        for i, game in enumerate(games):
            assert infos["current_player"][i] == game.to_move
            assert (obs["action_mask"][i] == game.legal_mask()).all()
            assert (obs["observation"][i] == planes_of(game.state, game.to_move, max_moves)).all()
            if game.pending_push is None:
                assert env.to_spn(i) == game.to_spn()
        actions = np.array([rng.choice(np.flatnonzero(obs["action_mask"][i])) for i in range(n)])
        for i, a in enumerate(actions):
            seen[
                "push" if PUSH_BASE <= a < PASS_ACTION else "pass" if a == PASS_ACTION else "move"
            ] += 1
            games[i].play(int(a))
        obs, rewards, terminations, truncations, infos = env.step(actions)
        assert rewards.shape == (n, 2) and rewards.dtype == np.float32
        finished = [i for i, game in enumerate(games) if game.is_over]
        assert infos.get("final_obs_index", np.array([], dtype=int)).tolist() == finished
        for k, i in enumerate(finished):
            game = games[i]
            seen["terminated" if game.terminated else "truncated"] += 1
            assert terminations[i] == game.terminated and truncations[i] == game.truncated
            assert rewards[i].tolist() == [game.score().reward(0), game.score().reward(1)]
            assert infos["_final_obs"][i] and infos["final_spn"][k] == game.to_spn()
            final = infos["final_obs"]
            assert (final["observation"][k] == planes_of(game.state, game.to_move, max_moves)).all()
            assert not final["action_mask"][k].any()
            assert env.states[i, 103] == 0  # already the next game's set-up (same step)
            games[i] = Game(env.states[i].copy(), max_moves)
        unfinished = [i for i in range(n) if i not in finished]
        assert not terminations[unfinished].any() and not truncations[unfinished].any()
        assert not rewards[unfinished].any()
    if max_moves == 400:  # long random games reach displacements and natural ends
        assert seen["push"] > 0 and seen["terminated"] > 0, seen
    else:
        assert seen["truncated"] >= n, seen


def test_illegal_action_raises_and_changes_no_game():
    env = SatellitesVectorEnv(4)
    obs, _ = env.reset(seed=2)
    before = env.states.copy()
    actions = obs["action_mask"].argmax(axis=1)
    actions[2] = PASS_ACTION  # not legal at the start
    with pytest.raises(IllegalActionError, match="game 2"):
        env.step(actions)
    actions[2] = -1
    with pytest.raises(IllegalActionError, match="game 2: action -1 is out of range"):
        env.step(actions)
    assert (env.states == before).all()


def test_seeding_and_copy_modes():
    a, b = SatellitesVectorEnv(5), SatellitesVectorEnv(5, copy=False)
    obs_a, _ = a.reset(seed=9)
    obs_b, _ = b.reset(seed=9)
    for t in range(60):
        actions = a.engine.random_actions(t)
        obs_a, rew_a, *_ = a.step(actions)
        obs_b, rew_b, *_ = b.step(actions)
        assert (obs_a["observation"] == obs_b["observation"]).all() and (rew_a == rew_b).all()
    assert obs_b["action_mask"] is b.engine.masks  # copy=False: the env's own buffers
    assert obs_a["action_mask"] is not a.engine.masks
    first = a.reset(seed=9)[0]["observation"]
    assert (first == SatellitesVectorEnv(5).reset(seed=9)[0]["observation"]).all()
    unseeded = [SatellitesVectorEnv(5).reset()[0]["observation"] for _ in range(2)]
    assert not (unseeded[0] == unseeded[1]).all()  # no seed: a fresh random one each time
    with pytest.raises(ValueError, match=r"^seed must be an integer from 0 to"):
        a.reset(seed=[1, 2, 3, 4, 5])


def test_bad_constructor_arguments_name_themselves():
    import pytest

    from satellites_env.vector import SatellitesVectorEnv

    for bad in (0, True, 2.5, "4"):
        with pytest.raises(ValueError, match="num_envs"):
            SatellitesVectorEnv(bad)
    for bad in (0, True, 2.5):
        with pytest.raises(ValueError, match="max_moves"):
            SatellitesVectorEnv(2, max_moves=bad)
