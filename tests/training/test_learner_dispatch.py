"""A config's `learner:` picks its learner; `az:PATH[:SIMS]` builds the search agent."""

from __future__ import annotations

import pytest

from satellites_env.agents import AgentSpecError, make_agent
from satellites_env.core import Game
from training.common.checkpoint import save_checkpoint
from training.common.config import SHIPPED as CONFIGS
from training.common.config import ConfigError, load_config


def test_shipped_configs_name_their_learner():
    assert load_config(CONFIGS / "quick.yaml").learner == "ppo"
    assert load_config("standard").learner == "ppo"
    assert load_config("az_quick").learner == "alphazero"
    assert load_config(str(CONFIGS / "az_standard.yaml")).learner == "alphazero"


def test_unknown_learner_is_refused(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("learner: dqn\nseed: 0\n")
    with pytest.raises(ConfigError, match="learner must be one of alphazero, ppo, got 'dqn'"):
        load_config(path)


def test_az_spec_plays_legal_moves_with_its_search(tmp_path):
    from training.common.network import build_network

    net = build_network(8, 1, seed=0)
    path = save_checkpoint(
        tmp_path / "az.pt",
        {"learner": "alphazero", "model_shape": net.shape, "model": net.state_dict()},
    )
    agent = make_agent(f"az:{path}:4", seed=0)
    assert agent.simulations == 4
    assert make_agent(f"az:{path}").simulations == 32
    game = Game.new(seed=1)
    for _ in range(6):
        action = agent.act(game)
        assert game.legal_mask()[action]
        game.play(action)
    raw = make_agent(f"checkpoint:{path}")  # the same file as a raw policy
    assert game.legal_mask()[raw.act(game)]
    for bad in ("az:", f"az:{path}:0"):
        with pytest.raises(AgentSpecError):
            make_agent(bad)
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(f"az:{tmp_path / 'missing.pt'}:8")
