"""The shipped network (`az:pretrained`, `checkpoint:pretrained`): data only, small, made by
the shipped standard config, and playable through both agent specs."""

from __future__ import annotations

from pathlib import Path

from satellites_env.agents import make_agent
from satellites_env.core import Game
from training.common.checkpoint import PRETRAINED, load_checkpoint
from training.common.config import config_from_dict, load_config

ROOT = Path(__file__).resolve().parents[3]


def test_pretrained_is_the_standard_runs_final_network():
    assert PRETRAINED.is_file()
    assert PRETRAINED.stat().st_size < 1_000_000  # weights only: no optimizer, no buffer
    payload = load_checkpoint(PRETRAINED)  # torch.load(weights_only=True) inside
    assert payload["learner"] == "alphazero"
    assert "replay" not in payload and "optimizer" not in payload
    standard = load_config("az_standard")
    # Made by the shipped file as it is now (its config converted once when the options that
    # no shipped config used were removed: the same moves, tests/agents/test_replays_as_before);
    # keys added since (minutes, search.opponent) read as their defaults, as on --resume
    assert config_from_dict(payload["config"]).to_dict() == standard.to_dict()
    assert payload["counters"]["positions"] >= standard.total_positions
    assert (ROOT / "docs" / "pretrained.md").is_file()


def test_pretrained_plays_through_both_specs():
    search = make_agent("az:pretrained:4", seed=0)
    raw = make_agent("checkpoint:pretrained")
    game = Game.new(seed=2)
    for turn in range(8):
        agent = search if turn % 2 else raw
        action = agent.act(game)
        assert game.legal_mask()[action]
        game.play(action)
