"""The self-play trainer: network, masked sampling, PPO, checkpoints, configs, resume."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import yaml
from play_helpers import find_game

from satellites_env.agents import AgentSpecError, make_agent
from satellites_env.core import Game
from satellites_env.core.board import N_ACTIONS
from satellites_env.observation import observe
from training.common.checkpoint import CheckpointError, load_checkpoint
from training.common.config import SHIPPED as CONFIGS
from training.common.config import ConfigError, config_from_dict, load_config
from training.common.network import PolicyValueNet, mask_logits, sample_masked
from training.ppo.trainer import PPOTrainer
from training.ppo.update import gae

TINY = {
    "seed": 3,
    "total_steps": 300,
    "threads": 1,
    "checkpoint_every": 1,
    "model": {"channels": 8, "blocks": 1},
    "selfplay": {
        "envs": 4,
        "max_moves": 30,
        "snapshot_every": 1,
        "pool_fraction": 0.5,
        "baseline_fraction": 0.25,
        "baseline_opponent": "random",
    },
    "ppo": {"steps_per_update": 100, "epochs": 1, "minibatch": 64},
    "eval": {"every": 2, "games": 2, "opponents": ["random"], "final": {"random": 2}},
}


def tiny_config(**overrides):
    data = {key: (dict(value) if isinstance(value, dict) else value) for key, value in TINY.items()}
    data.update(overrides)
    return config_from_dict(data)


def observation_batch(games):
    from satellites_env.core.engine import new_work

    scratch = new_work()
    obs = np.stack([observe(g.state, g.to_move, g.max_moves, scratch) for g in games])
    masks = np.stack([g.legal_mask().copy() for g in games])
    return torch.from_numpy(obs), torch.from_numpy(masks)


def test_network_shapes_and_value_range():
    net = PolicyValueNet(8, 1)
    obs, _masks = observation_batch([Game.new(seed=s) for s in range(3)])
    logits, values = net(obs)
    assert logits.shape == (3, N_ACTIONS) and values.shape == (3,)
    assert torch.all(values.abs() <= 1)


def test_masked_sampling_never_picks_an_illegal_action():
    net = PolicyValueNet(8, 1)
    games = [Game.new(seed=s) for s in range(4)]
    pushing = find_game(lambda g: g.pending_push is not None, seeds=range(50))
    games.append(pushing)
    obs, masks = observation_batch(games)
    logits, _ = net.masked_forward(obs, masks)
    generator = torch.Generator().manual_seed(0)
    for _ in range(300):
        actions = sample_masked(logits, generator)
        assert torch.all(masks.gather(1, actions[:, None]) == 1)
    # The push head is read at the displaced satellite's cell: only pushes are possible there.
    assert sample_masked(logits[-1:], generator).item() >= 3200


def test_mask_logits_rejects_wrong_width():
    with pytest.raises(ValueError, match="expected 3217 logits"):
        mask_logits(torch.zeros(1, 10), torch.ones(1, 10))


def test_gae_of_a_finished_trajectory():
    rewards = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    values = np.zeros(3, dtype=np.float32)
    advantages = gae(rewards, values, gamma=1.0, lam=1.0)
    np.testing.assert_allclose(advantages, [1.0, 1.0, 1.0])
    advantages = gae(rewards, values, gamma=0.5, lam=1.0)
    np.testing.assert_allclose(advantages, [0.25, 0.5, 1.0])


def test_gae_bootstraps_a_cut_segment():
    rewards = np.zeros(2, dtype=np.float32)
    values = np.zeros(2, dtype=np.float32)
    advantages = gae(rewards, values, gamma=0.5, lam=1.0, next_value=0.8)
    np.testing.assert_allclose(advantages, [0.2, 0.4])


def test_collect_returns_fresh_segments_with_bootstraps():
    from training.ppo.selfplay import SelfPlayGenerator

    config = tiny_config(selfplay={"envs": 3, "max_moves": 400})
    generator = SelfPlayGenerator(config.selfplay, PolicyValueNet(8, 1), seed=0)
    segments = generator.collect(30)
    assert sum(len(s) for s in segments) >= 30
    cut = [s for s in segments if not s.done]
    assert cut and all(s.bootstrap_observation.shape == (10, 10, 22) for s in cut)
    # The next collection continues the same games with new, empty segments.
    assert all(t is None or len(t) == 0 for slot in generator.slots for t in slot.trajectories)
    later = generator.collect(10)
    assert sum(len(s) for s in later) >= 10


def collected_batch(config, transitions: int):
    from training.ppo.selfplay import SelfPlayGenerator
    from training.ppo.update import build_batch

    net = PolicyValueNet(8, 1)
    generator = SelfPlayGenerator(config.selfplay, net, seed=1)
    segments = generator.collect(transitions)
    return net, build_batch(net, segments, config.ppo, shaping=1.0)


def test_update_with_a_last_minibatch_of_one_stays_finite():
    from training.ppo.update import ppo_update

    config = tiny_config(ppo={"minibatch": 16, "epochs": 1})
    net, batch = collected_batch(config, 40)
    keep = ((len(batch) - 1) // 16) * 16 + 1  # a last chunk of exactly one transition
    for name in ("observations", "masks", "actions", "log_probs", "advantages", "returns"):
        setattr(batch, name, getattr(batch, name)[:keep])
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    losses = ppo_update(net, optimizer, batch, config.ppo, torch.Generator().manual_seed(0))
    assert all(math.isfinite(v) for v in losses.values())
    assert all(torch.isfinite(p).all() for p in net.parameters())


def test_tiny_config_trains_and_writes_everything(tmp_path):
    trainer = PPOTrainer(tiny_config(), tmp_path / "run")
    final = trainer.run()
    assert trainer.counters.iterations >= 2 and trainer.counters.steps >= 300
    assert trainer.snapshots, "snapshots were added to the opponent pool"
    assert final.results["random"]["games"] == 2
    for name in ("checkpoint.pt", "final.pt", "learning_curve.png", "summary.json", "config.json"):
        assert (tmp_path / "run" / name).is_file(), name
    assert any((tmp_path / "run" / "tensorboard").iterdir())
    losses = trainer.iterate()
    assert all(math.isfinite(v) for v in losses.values())
    # The final policy loads as an agent and plays legal moves.
    agent = make_agent(f"checkpoint:{tmp_path / 'run' / 'final.pt'}", seed=0)
    game = Game.new(seed=1)
    for _ in range(20):
        game.play(agent.act(game))


def test_a_time_budget_ends_the_run_before_its_length(tmp_path):
    trainer = PPOTrainer(tiny_config(total_steps=10**9, minutes=0.01), tmp_path / "run")
    trainer.run()
    # the loop stops at 80% of the budget, counting its evaluations and checkpoints too
    spent = trainer.counters.seconds + trainer.counters.other_seconds
    assert trainer.finished and spent >= 0.8 * 0.6
    assert trainer.counters.steps < 10**9 and (tmp_path / "run" / "final.pt").is_file()


def test_save_then_resume_gives_identical_state(tmp_path):
    config = tiny_config()
    trainer = PPOTrainer(config, tmp_path / "run")
    trainer.iterate()
    trainer.iterate()
    trainer.save()
    resumed = PPOTrainer(config, tmp_path / "run", resume=True)
    for a, b in zip(
        trainer.net.state_dict().values(), resumed.net.state_dict().values(), strict=False
    ):
        assert torch.equal(a, b)
    assert vars(resumed.counters) == vars(trainer.counters)
    assert len(resumed.snapshots) == len(trainer.snapshots)
    assert resumed.snapshots_added == trainer.snapshots_added
    for a, b in zip(trainer.snapshots, resumed.snapshots, strict=False):
        assert all(torch.equal(x, y) for x, y in zip(a.values(), b.values(), strict=False))
    saved_opt, restored_opt = trainer.optimizer.state_dict(), resumed.optimizer.state_dict()
    assert saved_opt["param_groups"] == restored_opt["param_groups"]
    for key, state in saved_opt["state"].items():
        for name, value in state.items():
            assert torch.equal(value, restored_opt["state"][key][name])
    assert torch.equal(trainer.update_generator.get_state(), resumed.update_generator.get_state())
    (saved_generator,), (restored_generator,) = (
        trainer.generator_states(),
        resumed.generator_states(),
    )
    assert saved_generator["rng"] == restored_generator["rng"]
    assert torch.equal(saved_generator["torch"], restored_generator["torch"])
    # The resumed run keeps training from the same counters.
    resumed.iterate()
    assert resumed.counters.iterations == trainer.counters.iterations + 1


def test_learning_rate_anneals_linearly(tmp_path):
    config = tiny_config(
        ppo={
            "steps_per_update": 100,
            "epochs": 1,
            "minibatch": 64,
            "learning_rate": 0.01,
            "anneal_lr": True,
        }
    )
    trainer = PPOTrainer(config, tmp_path / "run")
    trainer.iterate()
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(0.01)
    done = trainer.counters.steps
    trainer.iterate()
    expected = 0.01 * max(1 - done / config.total_steps, 0.02)
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(expected)
    assert expected < 0.01


def test_new_run_refuses_to_overwrite_without_resume(tmp_path):
    trainer = PPOTrainer(tiny_config(), tmp_path / "run")
    trainer.save()
    with pytest.raises(FileExistsError, match="--resume"):
        PPOTrainer(tiny_config(), tmp_path / "run")


def test_resume_with_a_different_model_is_an_error(tmp_path):
    PPOTrainer(tiny_config(), tmp_path / "run").save()
    with pytest.raises(ValueError, match="model"):
        PPOTrainer(tiny_config(model={"channels": 16, "blocks": 1}), tmp_path / "run", resume=True)


def test_corrupted_and_missing_checkpoints_are_clear_errors(tmp_path):
    trainer = PPOTrainer(tiny_config(), tmp_path / "run")
    path = trainer.save()
    data = path.read_bytes()
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(corrupt)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nothing.pt")
    other = tmp_path / "other.pt"
    torch.save({"weights": 1}, other)
    with pytest.raises(CheckpointError, match="not a satellites checkpoint"):
        load_checkpoint(other)
    mismatched = tmp_path / "mismatched.pt"
    payload = torch.load(path, weights_only=False)
    payload["planes"] = 7
    torch.save(payload, mismatched)
    with pytest.raises(CheckpointError, match="7 observation planes"):
        load_checkpoint(mismatched)
    with pytest.raises(CheckpointError, match="corrupt"):
        make_agent(f"checkpoint:{corrupt}")
    with pytest.raises(AgentSpecError, match="checkpoint:PATH"):
        make_agent("checkpoint:")


@pytest.mark.parametrize("name", ["quick.yaml", "standard.yaml"])
def test_shipped_configs_load(name):
    config = load_config(CONFIGS / name)
    assert config.total_steps > 0


@pytest.mark.parametrize(
    "data, message",
    [
        ({"totl_steps": 5}, "unknown config key totl_steps"),
        ({"model": {"channel": 8}}, "unknown config key model.channel"),
        ({"ppo": {"learning_rate": "fast"}}, "ppo.learning_rate must be a number"),
        ({"selfplay": {"envs": 2.5}}, "selfplay.envs must be an integer"),
        ({"selfplay": {"envs": True}}, "selfplay.envs must be an integer"),
        ({"eval": {"opponents": "random"}}, "eval.opponents must be a list of str"),
        ({"model": 3}, "model must be a mapping"),
        ({"selfplay": {"pool_fraction": 1.5}}, "selfplay.pool_fraction must be in"),
        ({"total_steps": 0}, r"total_steps must be in \[1, "),
        ({"model": {"lookahead": "on"}}, "model.lookahead must be a number"),
    ],
)
def test_bad_config_keys_are_named(data, message):
    with pytest.raises(ConfigError, match=message):
        config_from_dict(data)


def test_bad_config_files(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("model: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(broken)
    typo = tmp_path / "typo.yaml"
    typo.write_text(yaml.safe_dump({"ppo": {"epoch": 3}}))
    with pytest.raises(ConfigError, match=r"typo.yaml: unknown config key ppo.epoch"):
        load_config(typo)
