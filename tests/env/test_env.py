"""The PettingZoo AEC environment `satellites_v0`: API conformance, observations, masks, rewards."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

import satellites_env
from satellites_env import satellites_v0
from satellites_env.core import Game, IllegalActionError, NotationError
from satellites_env.core.board import N_ACTIONS, PASS_ACTION, PUSH_BASE
from satellites_env.observation import N_PLANES, PLANE_INDEX, PLANES

from play_helpers import find_game, purposeful_action

README = Path(__file__).resolve().parents[2] / "README.md"


def play_out(env, rng, max_steps=2000):
    """Random legal play to the end; returns the number of steps taken."""
    for step, agent in enumerate(env.agent_iter(max_steps)):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return step


def test_pettingzoo_api_test():
    api_test(satellites_v0.env(), num_cycles=300)


def test_pettingzoo_api_test_raw_env():
    api_test(satellites_v0.raw_env(), num_cycles=300)


def test_pettingzoo_seed_test():
    seed_test(satellites_v0.env, num_cycles=300)


def test_registry_make():
    env = pettingzoo.make("aec", satellites_env.ENV_ID)
    env.reset(seed=3)
    assert env.unwrapped.metadata["name"] == "satellites_v0"
    assert env.agent_selection == "player_0"


def test_spaces():
    env = satellites_v0.env()
    for agent in env.possible_agents:
        assert env.action_space(agent).n == N_ACTIONS == 3217
        obs_space = env.observation_space(agent)
        assert obs_space["observation"].shape == (10, 10, N_PLANES)
        assert obs_space["action_mask"].shape == (3217,)
        assert obs_space["action_mask"].dtype == np.int8
    assert env.possible_agents == ["player_0", "player_1"]


def test_same_seed_same_game():
    histories = []
    for _ in range(2):
        env = satellites_v0.env()
        env.reset(seed=11)
        play_out(env, np.random.default_rng(5))
        histories.append(env.unwrapped.history)
    assert histories[0] == histories[1] and len(histories[0]) > 0


def test_different_seeds_different_setups():
    env = satellites_v0.env()
    env.reset(seed=1)
    first = env.unwrapped.to_spn()
    env.reset(seed=2)
    assert env.unwrapped.to_spn() != first


def test_observation_is_from_the_acting_players_view():
    env = satellites_v0.env()
    env.reset(seed=0)
    red = env.observe("player_0")["observation"]
    blue = env.observe("player_1")["observation"]
    own = slice(0, 4)
    opp = slice(4, 8)
    np.testing.assert_array_equal(red[..., own], blue[..., opp])
    np.testing.assert_array_equal(red[..., opp], blue[..., own])
    assert red[..., PLANE_INDEX["is_red"]].all() and not blue[..., PLANE_INDEX["is_red"]].any()
    # Red sits on the north edge (row 0/1) at the start.
    assert red[0:2, :, own].sum() == 6


def test_mask_only_for_the_acting_agent_and_equal_to_engine():
    env = satellites_v0.env()
    env.reset(seed=4)
    game = env.unwrapped.game
    assert env.observe("player_1")["action_mask"].sum() == 0
    mask = env.observe("player_0")["action_mask"]
    assert mask.dtype == np.int8
    np.testing.assert_array_equal(mask, game.legal_mask())
    assert not mask[PASS_ACTION] and not mask[PUSH_BASE:PASS_ACTION].any()


def test_observation_arrays_are_fresh_copies():
    env = satellites_v0.env()
    env.reset(seed=4)
    obs = env.observe("player_0")
    obs["observation"][:] = 0
    obs["action_mask"][:] = 0
    again = env.observe("player_0")
    assert again["observation"].any() and again["action_mask"].any()


def test_reset_from_spn_and_to_spn():
    spn = Game.new(seed=9).to_spn().replace(" r - 0 0", " b - 0 17")
    env = satellites_v0.env()
    env.reset(options={"spn": spn})
    assert env.unwrapped.to_spn() == spn
    assert env.agent_selection == "player_1"
    obs = env.observe("player_1")["observation"]
    assert obs[..., PLANE_INDEX["progress"]].max() == pytest.approx(17 / 400)


def test_reset_rejects_bad_spn_and_unknown_options():
    env = satellites_v0.env()
    with pytest.raises(NotationError, match="has 9 characters"):
        env.reset(options={"spn": "." * 9 + "/" + "/".join(["." * 10] * 9) + " r - 0 0"})
    with pytest.warns(UserWarning, match="ignoring unknown reset option"):
        env.reset(options={"board": "x"})


def test_displacement_is_two_steps_of_the_same_agent():
    pending = find_game(lambda g: g.pending_push is None and any(
        a < PUSH_BASE and g.is_displacement(int(a)) for a in g.legal_actions()))
    env = satellites_v0.env()
    env.reset(options={"spn": pending.to_spn()})
    agent = env.agent_selection
    move = next(int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])
                if env.unwrapped.game.is_displacement(int(a)))
    moves_before = env.unwrapped.game.moves
    env.step(move)
    assert env.agent_selection == agent
    obs = env.observe(agent)
    mask = obs["action_mask"]
    assert mask[PUSH_BASE:PASS_ACTION].any() and not mask[:PUSH_BASE].any() and not mask[PASS_ACTION]
    target = env.unwrapped.game.pending_push
    pushed = obs["observation"][..., PLANE_INDEX["pushed"]]
    assert pushed[divmod(target, 10)] > 0 and np.count_nonzero(pushed) == 1
    with pytest.raises(NotationError, match="between moves"):
        env.unwrapped.to_spn()
    push = int(np.flatnonzero(mask)[0])
    env.step(push)
    assert env.unwrapped.game.moves == moves_before + 1
    assert ">" in env.unwrapped.history[-1]
    assert env.unwrapped.game.pending_push is None


def test_raw_env_raises_on_illegal_and_out_of_range_actions():
    env = satellites_v0.raw_env()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.observe("player_0")["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match=rf"illegal action {illegal} "):
        env.step(illegal)
    with pytest.raises(IllegalActionError, match="out of range 0..3216"):
        env.step(3217)
    with pytest.raises(IllegalActionError, match="must be an integer"):
        env.step("c10-c7")


def test_wrapped_env_illegal_action_ends_game_with_penalty():
    env = satellites_v0.env()
    env.reset(seed=0)
    env.last()
    env.step(PASS_ACTION)  # pass is illegal when moves exist
    assert all(env.terminations.values()) or all(env.truncations.values())
    assert env.rewards["player_0"] == -1 and env.rewards["player_1"] == 0


def test_rewards_at_the_end_match_the_score():
    end = find_game(lambda g: sum(g.connected_counts) >= 21 and g.pending_push is None
                    and not g.is_over, seeds=range(3))
    env = satellites_v0.env()
    env.reset(options={"spn": end.to_spn()})
    rng = np.random.default_rng(0)
    total = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter(1000):
        obs, reward, terminated, truncated, info = env.last()
        total[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        env.step(purposeful_action(env.unwrapped.game, rng))
    result = env.unwrapped.game.score()
    assert total == {"player_0": result.reward(0), "player_1": result.reward(1)}
    assert info["reason"] == result.reason


def test_move_cap_is_a_truncation():
    env = satellites_v0.env(max_moves=5)
    env.reset(seed=0)
    play_out(env, np.random.default_rng(0))
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert env.unwrapped.game.moves == 5


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="max_moves"):
        satellites_v0.env(max_moves=0)
    with pytest.raises(ValueError, match="render_mode"):
        satellites_v0.env(render_mode="svg")


def test_notation_helpers_round_trip():
    env = satellites_v0.env()
    env.reset(seed=2)
    raw = env.unwrapped
    for action in np.flatnonzero(env.observe("player_0")["action_mask"]):
        assert raw.notation_to_actions(raw.action_to_notation(int(action))) == [int(action)]


def test_readme_documents_every_plane():
    text = README.read_text()
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|", text, flags=re.M)
    assert [(int(i), name) for i, name in rows] == [(i, n) for i, (n, _) in enumerate(PLANES)]


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_render_modes(mode):
    env = satellites_v0.env(render_mode=mode)
    env.reset(seed=0)
    frame = env.render()
    if mode == "ansi":
        assert isinstance(frame, str) and "a" in frame and "10" in frame
    else:
        assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8


def test_human_render_headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = satellites_v0.env(render_mode="human")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[0]))
    env.close()
