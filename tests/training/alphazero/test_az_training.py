"""A tiny Gumbel AlphaZero run: checkpoints that load and play, exact resume, config errors,
same seed -> same self-play."""

import numpy as np
import pytest
import torch
from rich.console import Console

from satellites_env.core.game import Game
from training.alphazero import AZConfigError, az_config_from_dict
from training.alphazero.agent import AZAgent, AZPolicyAgent
from training.alphazero.network import Evaluator, build_network
from training.alphazero.replay import ReplayBuffer
from training.alphazero.selfplay import SelfPlay
from training.alphazero.trainer import AZTrainer

TINY = {
    "seed": 3, "total_positions": 120, "positions_per_iteration": 40, "threads": 1,
    "checkpoint_every": 1,
    "model": {"channels": 8, "blocks": 1},
    "search": {"games": 4, "full_simulations": 4, "cheap_simulations": 2, "max_moves": 30},
    "replay": {"capacity": 500, "min_positions": 10, "batch_size": 16, "replay_ratio": 2.0},
    "eval": {"every": 2, "games": 2, "opponents": ["random"], "final_games": 2,
             "final_search_games": 2, "search_simulations": 2, "max_moves": 30},
}


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"))


def test_config_errors_name_the_key_and_value():
    with pytest.raises(AZConfigError, match=r"search\.full_fraction.*1\.5"):
        az_config_from_dict({"search": {"full_fraction": 1.5}})
    with pytest.raises(AZConfigError, match=r"replay\.cheap_policy_weight.*-0\.5"):
        az_config_from_dict({"replay": {"cheap_policy_weight": -0.5}})
    with pytest.raises(AZConfigError, match=r"replay\.surprise_weight.*1\.5"):
        az_config_from_dict({"replay": {"surprise_weight": 1.5}})
    with pytest.raises(AZConfigError, match=r"search\.dagger_until.*1\.5"):
        az_config_from_dict({"search": {"dagger_until": 1.5}})
    with pytest.raises(AZConfigError, match=r"search\.noise_moves.*>= 0.*-1"):
        az_config_from_dict({"search": {"noise_moves": -1}})
    with pytest.raises(AZConfigError,
                       match=r"replay\.capped_value must be in \[0\.0, 1\.0\].*1\.5"):
        az_config_from_dict({"replay": {"capped_value": 1.5}})
    with pytest.raises(AZConfigError, match=r"optim\.ema_decay.*1\.0"):
        az_config_from_dict({"optim": {"ema_decay": 1.0}})  # an average that never moves
    with pytest.raises(AZConfigError, match=r"unknown key 'replay\.capacty'"):
        az_config_from_dict({"replay": {"capacty": 3}})
    with pytest.raises(AZConfigError, match=r"model\.blocks.*expected an integer.*'two'"):
        az_config_from_dict({"model": {"blocks": "two"}})
    with pytest.raises(AZConfigError, match="cheap_simulations"):
        az_config_from_dict({"search": {"full_simulations": 4, "cheap_simulations": 8}})
    with pytest.raises(AZConfigError, match=r"model\.norm must be one of group, none.*'batch'"):
        az_config_from_dict({"model": {"norm": "batch"}})
    with pytest.raises(AZConfigError, match="device must be auto, cpu, cuda or cuda:N"):
        az_config_from_dict({"device": "gpu"})
    assert issubclass(AZConfigError, ValueError)
    assert az_config_from_dict({}).search.full_simulations == 32


def test_tiny_run_checkpoints_load_and_play_and_resume_exactly(tmp_path):
    config = az_config_from_dict(TINY)
    trainer = AZTrainer(config, tmp_path, console=quiet())
    final = trainer.run()
    assert set(final.results) == {"random", "search:random"}
    for name in ("checkpoint.pt", "final.pt", "learning_curve.png", "summary.json"):
        assert (tmp_path / name).exists()
    assert trainer.counters.train_steps > 0 and trainer.counters.positions >= 120
    # the checkpoint holds only tensors and plain data: it loads with weights_only=True
    payload = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert payload["learner"] == "alphazero"
    game = Game.new(seed=1, max_moves=30)
    for agent in (AZAgent(tmp_path / "final.pt", simulations=3),
                  AZPolicyAgent(tmp_path / "final.pt")):
        game_copy = game.clone()
        for _ in range(6):
            if game_copy.is_over:
                break
            action = agent.act(game_copy)
            assert game_copy.legal_mask()[action]
            game_copy.play(action)

    # resume: same counters, weights, buffer and random streams as saved; then it continues
    with pytest.raises(FileExistsError):
        AZTrainer(config, tmp_path, console=quiet())
    longer = az_config_from_dict({**TINY, "total_positions": 200})
    resumed = AZTrainer(longer, tmp_path, resume=True, console=quiet())
    assert resumed.counters == trainer.counters
    assert resumed.buffer.added == trainer.buffer.added
    assert np.array_equal(resumed.buffer.states, trainer.buffer.states)
    for key, value in trainer.net.state_dict().items():
        assert torch.equal(resumed.net.state_dict()[key], value)
    assert resumed.train_rng.bit_generator.state == trainer.train_rng.bit_generator.state
    iterations = trainer.counters.iterations
    resumed.iterate()
    assert resumed.counters.iterations == iterations + 1
    assert resumed.counters.positions >= trainer.counters.positions + 40


def test_same_seed_same_self_play():
    config = az_config_from_dict(TINY).search

    def run():
        net = build_network(8, 1, seed=0)
        buffer = ReplayBuffer(1000)
        selfplay = SelfPlay(config, seed=5)
        selfplay.play(150, Evaluator(net), buffer)
        return buffer

    a, b = run(), run()
    assert a.added == b.added > 0
    for name in ("states", "actions", "policy", "value", "policy_weight"):
        assert np.array_equal(getattr(a, name), getattr(b, name))


def test_policy_agent_acts_from_the_observation_alone():
    from satellites_env.observation import observe
    from satellites_env.core.engine import new_work

    agent = AZPolicyAgent(build_network(8, 1, seed=0))
    game = Game.new(seed=2)
    obs = observe(game.state, game.to_move, game.max_moves, new_work())
    action = agent.policy(obs, game.legal_mask())
    assert game.legal_mask()[action] and action == agent.act(game)


def test_device_auto_is_the_cpu_without_a_gpu_and_cuda_is_refused_then():
    from training.alphazero.network import resolve_device

    assert resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert resolve_device("auto") == torch.device("cpu")
        with pytest.raises(ValueError, match="no CUDA GPU"):
            resolve_device("cuda")
        with pytest.raises(ValueError, match="no CUDA GPU"):
            AZTrainer(az_config_from_dict({**TINY, "device": "cuda:0"}), "unused", console=quiet())


def test_learning_rate_schedules_decay_to_their_final_share_and_resume_exactly(tmp_path):
    from training.alphazero.config import scheduled_lr

    optim = az_config_from_dict({"optim": {"learning_rate": 0.01, "lr_schedule": "cosine",
                                           "lr_final": 0.1}}).optim
    assert scheduled_lr(optim, 0.0) == pytest.approx(0.01)
    assert scheduled_lr(optim, 0.5) == pytest.approx(0.0055)
    assert scheduled_lr(optim, 1.0) == pytest.approx(0.001)
    assert scheduled_lr(optim, 2.0) == pytest.approx(0.001)  # past the end: stays at the floor
    optim.lr_schedule = "linear"
    assert scheduled_lr(optim, 0.25) == pytest.approx(0.01 * (0.1 + 0.9 * 0.75))
    optim.lr_schedule = "constant"
    assert scheduled_lr(optim, 0.9) == 0.01
    with pytest.raises(AZConfigError, match=r"optim\.lr_schedule must be one of.*'step'"):
        az_config_from_dict({"optim": {"lr_schedule": "step"}})
    with pytest.raises(AZConfigError, match=r"optim\.lr_final.*1\.5"):
        az_config_from_dict({"optim": {"lr_final": 1.5}})

    # the trainer sets the step size from its counters, so a resumed run continues it
    config = az_config_from_dict({**TINY, "optim": {"learning_rate": 0.01, "lr_schedule": "linear",
                                                    "lr_final": 0.0}})
    trainer = AZTrainer(config, tmp_path, console=quiet())
    trainer.run()
    resumed = AZTrainer(config, tmp_path, resume=True, console=quiet())
    for t in (trainer, resumed):
        t.counters.positions = 90  # three quarters of total_positions
        assert t.train(100)["steps"] > 0
        assert t.optimizer.param_groups[0]["lr"] == pytest.approx(0.0025)


def test_overlap_plays_with_the_weights_before_the_steps_and_trains_every_batch(tmp_path):
    with pytest.raises(AZConfigError, match="overlap: true.*threads: 1"):
        az_config_from_dict({"overlap": True, "threads": 2})
    config = az_config_from_dict({**TINY, "overlap": True, "total_positions": 240,
                                  "positions_per_iteration": 120,
                                  "eval": {**TINY["eval"], "every": 100,
                                           "final_search_games": 0}})
    trainer = AZTrainer(config, tmp_path / "a", console=quiet())
    try:
        trainer.iterate()  # the first batch is played; its steps come with the next iteration
        c = trainer.counters
        assert c.pending == c.samples > config.replay.min_positions and c.train_steps == 0
        before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
        first = c.samples
        trainer.iterate()
        expected_steps = int(first * config.replay.replay_ratio / config.replay.batch_size)
        assert c.train_steps == expected_steps > 0
        assert c.pending == c.samples - first
        generator = trainer.generators.members[0].generator
        # the second batch was played by the weights before the steps, while they ran
        for key, value in generator.net.state_dict().items():
            assert torch.equal(value, before[key])
        assert any(not torch.equal(trainer.net.state_dict()[k], before[k]) for k in before)
        steps = c.train_steps
        trainer.flush()  # the end of a run: the last batch gets its steps too
        assert c.pending == 0 and c.train_steps > steps
    finally:
        trainer.close()

    # same seed, same run, though two threads share the work
    runs = [AZTrainer(config, tmp_path / name, console=quiet()) for name in ("b", "c")]
    for run in runs:
        run.run()
        assert run.counters.pending == 0 and run.counters.positions >= 240
    assert runs[0].counters.train_steps == runs[1].counters.train_steps > 0
    assert np.array_equal(runs[0].buffer.states, runs[1].buffer.states)
    for key, value in runs[0].net.state_dict().items():
        assert torch.equal(runs[1].net.state_dict()[key], value)


def test_policy_batch_size_adds_policy_targets_to_every_batch(tmp_path, monkeypatch):
    """replay.policy_batch_size = P: each gradient step's batch holds batch_size uniform
    positions and P more drawn among the buffer's policy targets; `trained` counts them all."""
    import training.alphazero.trainer as trainer_module

    seen = []
    loss = trainer_module.policy_value_loss

    def recording_loss(net, batch, *args, **kwargs):
        seen.append((len(batch["policy_weight"]), int((batch["policy_weight"] > 0).sum())))
        return loss(net, batch, *args, **kwargs)

    monkeypatch.setattr(trainer_module, "policy_value_loss", recording_loss)
    config = az_config_from_dict({**TINY, "replay": {**TINY["replay"], "policy_batch_size": 8},
                                  "eval": {**TINY["eval"], "every": 100}})
    trainer = AZTrainer(config, tmp_path / "run", console=quiet())
    try:
        while trainer.counters.train_steps == 0:
            trainer.iterate()
        assert seen and all(rows == 16 + 8 and targets >= 8 for rows, targets in seen)
        assert trainer.counters.trained == 24 * trainer.counters.train_steps
    finally:
        trainer.close()


def test_ema_weights_are_evaluated_and_saved_the_run_is_unchanged_and_resumes_exactly(tmp_path):
    """optim.ema_decay: the trained weights are those of the same run without it (self-play and
    steps use them), the averaged ones go to final.pt's model and are what the checks play, one
    more step moves the average by (1 - decay) of the gap, and a resumed run continues both."""
    from training.common.checkpoint import load_checkpoint

    plain = AZTrainer(az_config_from_dict({**TINY, "eval": {**TINY["eval"],
                                                            "final_search_games": 0}}),
                      tmp_path / "plain", console=quiet())
    plain.run()
    config = az_config_from_dict({**TINY, "optim": {"ema_decay": 0.9},
                                  "eval": {**TINY["eval"], "final_search_games": 0}})
    trainer = AZTrainer(config, tmp_path / "ema", console=quiet())
    trainer.run()
    for key, value in plain.net.state_dict().items():
        assert torch.equal(trainer.net.state_dict()[key], value)
    final = load_checkpoint(tmp_path / "ema" / "final.pt")
    averaged = trainer.ema.module.state_dict()
    assert int(final["ema_updates"]) == trainer.counters.train_steps > 1
    moved = False
    for key, value in final["model"].items():
        assert torch.equal(value, averaged[key])
        assert torch.equal(final["trained_model"][key], trainer.net.state_dict()[key])
        moved |= not torch.equal(value, trainer.net.state_dict()[key])
    assert moved  # the average lags the trained weights
    assert AZPolicyAgent(tmp_path / "ema" / "final.pt").net.state_dict().keys() == averaged.keys()

    resumed = AZTrainer(config, tmp_path / "ema", resume=True, console=quiet())
    for key, value in trainer.net.state_dict().items():
        assert torch.equal(resumed.net.state_dict()[key], value)
        assert torch.equal(resumed.ema.module.state_dict()[key], averaged[key])
    before = {k: v.clone() for k, v in averaged.items()}
    for t in (trainer, resumed):
        t.counters.credit = 0.0
        assert t.train(8)["steps"] == 1  # 8 samples x replay ratio 2 / batch 16
    for key, value in trainer.ema.module.state_dict().items():
        assert torch.equal(resumed.ema.module.state_dict()[key], value)
        gap = trainer.net.state_dict()[key] - before[key]
        torch.testing.assert_close(value, before[key] + 0.1 * gap)
    with pytest.raises(ValueError, match="no averaged weights"):
        AZTrainer(config, tmp_path / "plain", resume=True, console=quiet())
