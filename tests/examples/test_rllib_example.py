"""examples/rllib_ppo_selfplay.py: RLlib's multi-agent PPO (new API stack) through
`PettingZooEnv` and the action-masking module trains on a tiny budget with no illegal action,
and its saved module plays `random` in `satellites evaluate` as `rllib:PATH`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from ray_helpers import local_ray  # noqa: F401 - this module's Ray (an autouse fixture)
from test_examples import load

from satellites_env import satellites_v0
from satellites_env.wrappers import MaskedDictObservation, masked_dict_space

pytest.importorskip("ray.rllib", reason="needs the 'rllib' extra")
ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray


def test_the_wrapper_gives_the_masking_modules_observation():
    for flatten, shape in ((False, (10, 10, 22)), (True, (2200,))):
        env = MaskedDictObservation(satellites_v0.env(), flatten=flatten)
        env.reset(seed=3)
        observation, *_ = env.last()
        space = env.observation_space("player_0")
        assert space == masked_dict_space(flatten) and space.contains(observation)
        assert observation["observations"].shape == shape
        plain = env.env.observe("player_0")
        assert np.array_equal(observation["action_mask"], plain["action_mask"])
        assert np.array_equal(observation["observations"].reshape(10, 10, 22), plain["observation"])
        assert not env.observe("player_1")["action_mask"].any()  # not its turn


def test_rllib_selfplay_trains_and_plays_with_no_illegal_action(tmp_path):
    from satellites_env.cli import main as cli

    example = load("rllib_ppo_selfplay")
    module = tmp_path / "module"
    summary = example.main(
        total_steps=600,
        max_moves=60,
        batch=300,
        minibatch=100,
        epochs=1,
        hidden=64,
        eval_games=2,
        seed=0,
        save=str(module),
        verbose=True,
    )
    assert summary["train_steps"] >= 600 and summary["iterations"] >= 2
    assert summary["train_games"] >= 2
    assert summary["train_illegal_actions"] == 0 and summary["illegal_actions"] == 0
    assert summary["wins"] + summary["draws"] + summary["losses"] == 2
    out = tmp_path / "results.json"
    assert (
        cli(
            [
                "evaluate",
                "--agents",
                f"rllib:{module}",
                "random",
                "--games",
                "2",
                "--max-moves",
                "60",
                "--out",
                str(out),
            ]
        )
        == 0
    )  # an illegal move would be status 2
    result = json.loads(out.read_text())
    assert result["pairs"][0]["games"] == 2 and result["agents"][0] == f"rllib:{module}"
    assert cli(["evaluate", "--agents", f"rllib:{tmp_path / 'none'}", "random"]) == 2


def test_the_command_line_matches_main():
    import inspect

    example = load("rllib_ppo_selfplay")
    args = vars(example._parse_args(["--total-steps", "5"]))
    assert args["total_steps"] == 5
    assert set(args) <= set(inspect.signature(example.main).parameters)
