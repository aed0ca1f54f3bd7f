"""The PettingZoo AEC environment `satellites_v0`: API conformance, observations, masks, rewards."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test
from play_helpers import find_game, purposeful_action

import satellites_env
from satellites_env import satellites_v0
from satellites_env.core import Game, IllegalActionError, NotationError
from satellites_env.core.board import COLOR_NAMES, N_ACTIONS, PASS_ACTION, PUSH_BASE
from satellites_env.env import ClassicWrapper, ResetNeededError
from satellites_env.gym_env import SatellitesGymEnv
from satellites_env.observation import N_PLANES, PLANE_INDEX, PLANES

ENVS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "envs.md"


def play_out(env, rng, max_steps=2000):
    """Random legal play to the end; returns the number of steps taken."""
    for step, _agent in enumerate(env.agent_iter(max_steps)):  # noqa: B007 (returned)
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
    for bad in ("spn", 5, ["spn"]):
        with pytest.raises(ValueError, match="reset options must be a dict"):
            env.reset(options=bad)
    with pytest.raises(ValueError, match="reset options must be a dict"):
        SatellitesGymEnv().reset(options="spn")


def test_displacement_is_two_steps_of_the_same_agent():
    pending = find_game(
        lambda g: (
            g.pending_push is None
            and any(a < PUSH_BASE and g.is_displacement(int(a)) for a in g.legal_actions())
        )
    )
    env = satellites_v0.env()
    env.reset(options={"spn": pending.to_spn()})
    agent = env.agent_selection
    move = next(
        int(a)
        for a in np.flatnonzero(env.observe(agent)["action_mask"])
        if env.unwrapped.game.is_displacement(int(a))
    )
    moves_before = env.unwrapped.game.moves
    env.step(move)
    assert env.agent_selection == agent
    obs = env.observe(agent)
    mask = obs["action_mask"]
    assert mask[PUSH_BASE:PASS_ACTION].any() and not mask[:PUSH_BASE].any()
    assert not mask[PASS_ACTION]
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
    with pytest.raises(IllegalActionError, match=r"out of range 0..3216"):
        env.step(3217)
    with pytest.raises(IllegalActionError, match="must be an integer"):
        env.step("c10-c7")


def test_wrapped_env_illegal_action_ends_game_with_penalty(caplog):
    env = satellites_v0.env()
    env.reset(seed=0)
    env.last()
    env.step(PASS_ACTION)  # pass is illegal when moves exist
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.rewards["player_0"] == -1 and env.rewards["player_1"] == 0
    _, reward, terminated, _, info = env.last()
    assert terminated and reward == -1 and env.agent_selection == "player_0"
    assert info["winner"] == "blue" and "illegal action by red" in info["reason"]
    assert info["illegal_action"].startswith(f"illegal action {PASS_ACTION} (pass)")
    env.step(None)
    _, reward, terminated, _, info = env.last()
    assert env.agent_selection == "player_1" and terminated and reward == 0
    env.step(None)
    assert env.agents == []
    env.step(None)  # PettingZoo's wrapper behaviour: a logged warning, nothing else
    assert "step() called after all agents" in caplog.text
    assert "Illegal move made" in caplog.text


def test_wrapped_env_is_one_order_enforcing_layer():
    env = satellites_v0.env()
    assert isinstance(env, ClassicWrapper) and isinstance(env.env, satellites_v0.raw_env)
    assert isinstance(env, pettingzoo.utils.wrappers.OrderEnforcingWrapper)
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agent_selection
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.num_agents
    assert env.possible_agents == ["player_0", "player_1"]


@pytest.mark.parametrize("make", [satellites_v0.env, satellites_v0.raw_env])
def test_use_before_reset_is_a_clear_error(make):
    env = make()
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), lambda: env.last()):
        with pytest.raises(ResetNeededError, match=r"reset\(\)"):
            call()
    assert issubclass(ResetNeededError, gymnasium.error.ResetNeeded)


@pytest.mark.parametrize("make", [satellites_v0.env, satellites_v0.raw_env])
def test_actions_that_are_not_integers_are_rejected_clearly(make):
    env = make()
    env.reset(seed=0)
    spn, history = env.unwrapped.to_spn(), env.unwrapped.history
    for bad in (
        True,
        np.bool_(False),
        1.0,
        "12",
        None,
        np.array([1, 2]),
        np.zeros((2, 2)),
        [5],
        np.float32(3),
    ):
        with pytest.raises(IllegalActionError, match=r"action must be an integer in 0..3216"):
            env.step(bad)
    for bad in (N_ACTIONS, -1, np.int64(10**12)):
        with pytest.raises(IllegalActionError, match=r"out of range 0..3216"):
            env.step(bad)
    assert env.unwrapped.to_spn() == spn and env.unwrapped.history == history
    assert not any(env.terminations.values()) and env.agent_selection == "player_0"
    legal = np.flatnonzero(env.observe("player_0")["action_mask"])
    env.step(np.array([legal[0]]))  # one integer in an array, or a 0-d array, is an action
    assert env.unwrapped.game.moves == 1


def test_raw_env_past_the_end_is_a_clear_error():
    env = satellites_v0.raw_env(max_moves=2)
    env.reset(seed=0)
    play_out(env, np.random.default_rng(0))
    assert env.agents == []
    with pytest.raises(ResetNeededError, match="call reset"):
        env.step(None)
    with pytest.raises(ResetNeededError, match="call reset"):
        env.step(0)
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1"]


def test_done_agent_must_step_with_none():
    env = satellites_v0.raw_env(max_moves=1)
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[0]))
    assert all(env.truncations.values())
    agent = env.agent_selection
    with pytest.raises(IllegalActionError, match="only valid action is None"):
        env.step(0)
    assert env.agent_selection == agent and env.agents == ["player_0", "player_1"]
    env.step(None)
    assert env.agents == [a for a in ("player_0", "player_1") if a != agent]


def test_winner_uses_the_color_names_of_game_records():
    for make in (satellites_v0.env, satellites_v0.raw_env):
        env = make(max_moves=6)
        env.reset(seed=0)
        play_out(env, np.random.default_rng(0))
        result = env.unwrapped.game.score()
        expected = None if result.winner is None else COLOR_NAMES[result.winner]
        assert COLOR_NAMES == ("red", "blue")
        for agent in env.possible_agents:
            assert env.infos.get(agent, env.unwrapped.infos.get(agent)) in (
                None,
                {"winner": expected, "reason": result.reason},
            )


def test_rewards_at_the_end_match_the_score():
    end = find_game(
        lambda g: sum(g.connected_counts) >= 21 and g.pending_push is None and not g.is_over,
        seeds=range(3),
    )
    env = satellites_v0.env()
    env.reset(options={"spn": end.to_spn()})
    rng = np.random.default_rng(0)
    total = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter(1000):
        _obs, reward, terminated, truncated, info = env.last()
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
    for bad in (0, -1, True, False, np.True_, 2.5, "400", None, np.float64(400)):
        with pytest.raises(ValueError, match="max_moves"):
            satellites_v0.env(max_moves=bad)
        with pytest.raises(ValueError, match="max_moves"):
            satellites_v0.raw_env(max_moves=bad)
    assert satellites_v0.raw_env(max_moves=np.int16(7)).max_moves == 7
    with pytest.raises(ValueError, match="render_mode"):
        satellites_v0.env(render_mode="html")


def test_notation_helpers_round_trip():
    env = satellites_v0.env()
    env.reset(seed=2)
    raw = env.unwrapped
    for action in np.flatnonzero(env.observe("player_0")["action_mask"]):
        assert raw.notation_to_actions(raw.action_to_notation(int(action))) == [int(action)]


def test_the_envs_page_documents_every_plane():
    text = ENVS_PAGE.read_text()
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
