"""The optional one-ply lookahead logit prior: features, network, PPO consistency, checkpoints."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from play_helpers import find_game
from test_training import observation_batch, tiny_config

from satellites_env.agents import make_agent
from satellites_env.agents.heuristic import final_result, heuristic_value
from satellites_env.core import Game
from satellites_env.core.board import N_ACTIONS, N_CELLS
from satellites_env.core.engine import new_work
from training.common.checkpoint import load_checkpoint, load_network
from training.common.config import ConfigError, config_from_dict
from training.ppo.prior import LookaheadFeatures, PriorNet, network_from_shape
from training.ppo.trainer import PPOTrainer

SCRATCH = new_work()


def value_after(game: Game, action: int, mover: int) -> float:
    """The mover's value of the position `action` leads to, straight from the Game API."""
    child = game.clone()
    child.play(action)
    if child.pending_push is not None:
        return max(value_after(child, int(push), mover) for push in child.legal_actions())
    sign = 1 - 2 * mover
    board = child.state[:N_CELLS]
    if child.is_over:
        return 10.0 * final_result(board, sign, SCRATCH)
    return float(heuristic_value(board, sign, SCRATCH))


@pytest.mark.parametrize(
    "predicate",
    [
        lambda g: g.moves == 0,
        lambda g: sum(g.connected_counts) >= 6 and g.pending_push is None,
        lambda g: g.pending_push is not None,
        lambda g: sum(g.connected_counts) >= 20,
    ],
)
def test_lookahead_values_are_the_one_ply_values_of_legal_actions(predicate):
    game = find_game(predicate, seeds=range(60))
    mask = game.legal_mask().copy()
    values = LookaheadFeatures().of(game, mask)
    assert values.shape == (N_ACTIONS,) and values.dtype == np.float32
    legal = np.flatnonzero(mask)
    expected = [value_after(game, int(a), game.to_move) for a in legal]
    np.testing.assert_allclose(values[legal], expected, rtol=1e-6, atol=1e-7)
    assert not values[mask == 0].any()


def ending_moves(game: Game) -> list[int]:
    """Legal plain moves (no displacement) after which the game is over."""
    ending = []
    for action in game.legal_actions():
        child = game.clone()
        child.play(int(action))
        if child.is_over:
            ending.append(int(action))
    return ending


def test_game_ending_moves_are_worth_ten_times_the_result():
    game = find_game(lambda g: g.pending_push is None and ending_moves(g), seeds=range(60))
    values = LookaheadFeatures().of(game, game.legal_mask())
    sign = 1 - 2 * game.to_move
    for action in ending_moves(game):
        child = game.clone()
        child.play(action)
        assert values[action] == 10.0 * final_result(child.state[:N_CELLS], sign, SCRATCH)
        assert abs(values[action]) in (0.0, 10.0)


def test_a_fresh_lookahead_net_plays_the_scaled_values():
    net = PriorNet(8, 1, lookahead=5.0)
    games = [Game.new(seed=1), find_game(lambda g: sum(g.connected_counts) >= 6, seeds=range(60))]
    obs, masks = observation_batch(games)
    features = LookaheadFeatures()
    lookahead = torch.from_numpy(np.stack([features.of(g, g.legal_mask()) for g in games]))
    logits, values = net.masked_forward(obs, masks, lookahead)
    legal = masks == 1
    torch.testing.assert_close(logits[legal], 5.0 * lookahead[legal])
    assert torch.all(logits[~legal] == float("-inf"))
    torch.testing.assert_close(net.value(obs), values)


def test_a_lookahead_net_needs_the_values():
    net = PriorNet(8, 1, lookahead=1.0)
    obs, _ = observation_batch([Game.new(seed=0)])
    with pytest.raises(ValueError, match="pass lookahead"):
        net(obs)
    assert PriorNet(**net.shape).shape == {"channels": 8, "blocks": 1, "lookahead": 1.0}


def test_stored_lookaheads_reproduce_the_sampling_log_probs():
    """PPO's first ratio is exactly 1 only if the update sees the values the games used."""
    from training.ppo.selfplay import SelfPlayGenerator
    from training.ppo.update import build_batch

    config = tiny_config(
        model={"channels": 8, "blocks": 1, "lookahead": 3.0},
        selfplay={
            "envs": 4,
            "max_moves": 60,
            "pool_fraction": 0.0,
            "baseline_fraction": 0.5,
            "baseline_opponent": "random",
        },
    )
    net = PriorNet(8, 1, lookahead=3.0)
    with torch.no_grad():  # non-zero heads, so the check covers the network's own logits too
        for parameter in net.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    segments = SelfPlayGenerator(config.selfplay, net, seed=2).collect(80)
    batch = build_batch(net, segments, config.ppo, shaping=1.0)
    assert batch.lookaheads is not None and batch.lookaheads.shape == (len(batch), N_ACTIONS)
    net.eval()
    with torch.no_grad():
        logits, _ = net.masked_forward(batch.observations, batch.masks, batch.lookaheads)
    log_probs = torch.log_softmax(logits, -1).gather(1, batch.actions[:, None]).squeeze(1)
    torch.testing.assert_close(log_probs, batch.log_probs, atol=1e-4, rtol=1e-4)


def test_a_lookahead_run_trains_saves_and_plays(tmp_path):
    config = tiny_config(model={"channels": 8, "blocks": 1, "lookahead": 4.0})
    trainer = PPOTrainer(config, tmp_path / "run")
    trainer.run()
    payload = load_checkpoint(tmp_path / "run" / "final.pt")
    assert payload["model_shape"]["lookahead"] == 4.0
    loaded = load_network(payload, build=network_from_shape)
    assert torch.equal(loaded.lookahead_weight, trainer.net.lookahead_weight)
    resumed = PPOTrainer(config, tmp_path / "run", resume=True)
    assert isinstance(resumed.net, PriorNet) and len(resumed.snapshots) == len(trainer.snapshots)
    agent = make_agent(f"checkpoint:{tmp_path / 'run' / 'final.pt'}", seed=0)
    game = Game.new(seed=4)
    for _ in range(30):
        action = agent.act(game)
        assert game.legal_mask()[action]
        game.play(action)


def test_negative_lookahead_is_a_config_error():
    with pytest.raises(ConfigError, match=r"model.lookahead must be in \[0, "):
        config_from_dict({"model": {"lookahead": -1.0}})
