"""A tiny Gumbel AlphaZero run: checkpoints that load and play, exact resume, config errors,
same seed -> same self-play."""

import numpy as np
import pytest
import torch
from rich.console import Console

from satellites_env.core.game import Game
from training.alphazero.agent import AZAgent
from training.alphazero.config import AZConfig
from training.alphazero.replay import ReplayBuffer
from training.alphazero.selfplay import SelfPlay
from training.alphazero.trainer import AZTrainer
from training.common.checkpoint import load_network
from training.common.config import ConfigError
from training.common.network import BatchedInference, build_network
from training.common.policy_agent import PolicyAgent

TINY = {
    "seed": 3,
    "total_positions": 120,
    "positions_per_iteration": 40,
    "threads": 1,
    "checkpoint_every": 1,
    "model": {"channels": 8, "blocks": 1},
    "search": {"games": 4, "full_simulations": 4, "cheap_simulations": 2, "max_moves": 30},
    "replay": {"capacity": 500, "min_positions": 10, "batch_size": 16, "replay_ratio": 2.0},
    "eval": {
        "every": 2,
        "games": 2,
        "opponents": ["random"],
        "final": {"random": 2},
        "search_simulations": 2,
        "max_moves": 30,
    },
}


def quiet() -> Console:
    return Console(file=open("/dev/null", "w"))


def test_config_errors_name_the_key_and_value():
    with pytest.raises(ConfigError, match=r"search\.full_fraction.*1\.5"):
        AZConfig.from_dict({"search": {"full_fraction": 1.5}})
    with pytest.raises(ConfigError, match=r"search\.dagger.*1\.5"):
        AZConfig.from_dict({"search": {"dagger": 1.5}})
    with pytest.raises(ConfigError, match=r"unknown config key replay\.capacty"):
        AZConfig.from_dict({"replay": {"capacty": 3}})
    with pytest.raises(ConfigError, match=r"unknown config key league; known keys: "):
        AZConfig.from_dict({"league": {"share": 0.5}})  # the league was removed
    with pytest.raises(ConfigError, match=r"model\.blocks must be an integer.*'two'"):
        AZConfig.from_dict({"model": {"blocks": "two"}})
    with pytest.raises(ConfigError, match="cheap_simulations"):
        AZConfig.from_dict({"search": {"full_simulations": 4, "cheap_simulations": 8}})
    with pytest.raises(ConfigError, match=r"model\.norm must be one of group, none.*'batch'"):
        AZConfig.from_dict({"model": {"norm": "batch"}})
    with pytest.raises(ConfigError, match="device must be auto, cpu, cuda or cuda:N"):
        AZConfig.from_dict({"device": "gpu"})
    assert issubclass(ConfigError, ValueError)
    assert AZConfig.from_dict({}).search.full_simulations == 32


def test_tiny_run_checkpoints_load_and_play_and_resume_exactly(tmp_path):
    config = AZConfig.from_dict(TINY)
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
    for agent in (
        AZAgent(tmp_path / "final.pt", simulations=3),
        PolicyAgent(load_network(tmp_path / "final.pt")),
    ):
        game_copy = game.clone()
        for _ in range(6):
            if game_copy.is_over:
                break
            action = agent.act(game_copy)
            assert game_copy.legal_mask()[action]
            game_copy.play(action)

    # resume: same counters, weights, buffer and random streams as saved; then it continues
    assert AZTrainer(config, tmp_path, console=quiet()).finished  # reported, not trained
    longer = AZConfig.from_dict({**TINY, "total_positions": 200})
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


def test_a_run_saved_with_a_retired_setting_resumes_unless_it_used_it(tmp_path):
    """Runs saved while the learner had a league (or another retired setting) hold its settings
    in their config (and, with share > 0, the league in the checkpoint): unused ones are
    dropped on resume, a run that used one is refused with a clear error."""
    from training.common.run_folder import RunError

    config = AZConfig.from_dict(TINY)
    trainer = AZTrainer(config, tmp_path, console=quiet())
    trainer.iterate()
    trainer.save()
    path = tmp_path / "checkpoint.pt"
    payload = torch.load(path, weights_only=True)
    league = {"share": 0.0, "snapshot_every": 16, "size": 8, "weighting": "hard", "opponents": []}
    payload["config"]["league"] = league
    payload["league"] = {"version": 0, "members": []}
    torch.save(payload, path)
    resumed = AZTrainer(config, tmp_path, resume=True, console=quiet())
    assert resumed.counters == trainer.counters
    assert not resumed.new_changes  # the dropped section is no change of the config
    resumed.save()
    assert "league" not in torch.load(path, weights_only=True)["config"]
    payload["config"]["league"] = {**league, "share": 0.5}
    torch.save(payload, path)
    with pytest.raises(RunError, match=r"used a league \(league\.share 0\.5\).*cannot be resumed"):
        AZTrainer(config, tmp_path, resume=True, console=quiet())
    # the other retired settings, the same way: dropped when off, refused when used (the first
    # key of each names whether it was used)
    del payload["league"], payload["config"]["league"]
    retired = (
        ({"optim.soft_policy_weight": 8.0, "optim.soft_policy_temperature": 4.0}, "the soft"),
        ({"optim.anneal_final_fraction": 0.3, "optim.anneal_factor": 0.1}, "a learning-rate"),
        ({"optim.short_value_weight": 0.5, "replay.short_value_horizons": [6]}, "short-term"),
        ({"search.full_simulations_late": 64, "search.late_after": 0.3}, "a late search"),
    )
    for used, what in retired:
        first = next(iter(used))
        for on in (False, True):
            saved = config.to_dict()
            for key, value in used.items():
                section, name = key.split(".")
                saved[section][name] = value if on or key != first else 0
            payload["config"] = saved
            torch.save(payload, path)
            if on:
                with pytest.raises(RunError, match=rf"used {what}.*\({first} "):
                    AZTrainer(config, tmp_path, resume=True, console=quiet())
            else:
                resumed = AZTrainer(config, tmp_path, resume=True, console=quiet())
                assert resumed.counters == trainer.counters and not resumed.new_changes


def test_same_seed_same_self_play():
    config = AZConfig.from_dict(TINY).search

    def run():
        net = build_network(8, 1, seed=0)
        buffer = ReplayBuffer(1000)
        selfplay = SelfPlay(config, seed=5)
        selfplay.play(150, BatchedInference(net), buffer)
        return buffer

    a, b = run(), run()
    assert a.added == b.added > 0
    for name in ("states", "actions", "policy", "value", "policy_weight"):
        assert np.array_equal(getattr(a, name), getattr(b, name))


def test_policy_agent_acts_from_the_observation_alone():
    from satellites_env.core.engine import new_work
    from satellites_env.observation import observe

    agent = PolicyAgent(build_network(8, 1, seed=0))
    game = Game.new(seed=2)
    obs = observe(game.state, game.to_move, game.max_moves, new_work())
    action = agent.policy(obs, game.legal_mask())
    assert game.legal_mask()[action] and action == agent.act(game)


def test_device_auto_is_the_cpu_without_a_gpu_and_cuda_is_refused_then():
    from training.common.network import resolve_device

    assert resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert resolve_device("auto") == torch.device("cpu")
        with pytest.raises(ValueError, match="no CUDA GPU"):
            resolve_device("cuda")
        with pytest.raises(ValueError, match="no CUDA GPU"):
            AZTrainer(AZConfig.from_dict({**TINY, "device": "cuda:0"}), "unused", console=quiet())


def test_overlap_plays_with_the_weights_before_the_steps_and_trains_every_batch(tmp_path):
    with pytest.raises(ConfigError, match=r"overlap: true.*threads: 1"):
        AZConfig.from_dict({"overlap": True, "threads": 2})
    config = AZConfig.from_dict(
        {
            **TINY,
            "overlap": True,
            "total_positions": 240,
            "positions_per_iteration": 120,
            "eval": {**TINY["eval"], "every": 100, "search_simulations": 0},
        }
    )
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


def test_final_table_in_worker_processes_is_the_table_of_one_process(tmp_path):
    """Every match's shares go to the evaluation processes in one queue, and each player's
    games are played all at once: the table is the one a single process plays, and the raw
    policy's results are those of the arena's games one at a time."""
    from satellites_env.agents import make_agent
    from satellites_env.arena import match
    from training.common.evaluation import EVAL_SEED

    final = {"random": 3, "greedy": 2}
    tables = []
    for workers in (1, 2):
        config = AZConfig.from_dict(
            {
                **TINY,
                "distributed": {"workers": workers},
                "eval": {**TINY["eval"], "final": final},
            }
        )
        trainer = AZTrainer(config, tmp_path / str(workers), console=quiet())
        try:
            tables.append(trainer.evaluate(final=True).results)
        finally:
            trainer.close()
    assert tables[0] == tables[1]
    assert set(tables[0]) == {"random", "greedy", "search:random", "search:greedy"}
    net = trainer.net
    for k, (opponent, games) in enumerate(final.items()):
        alone = match(
            PolicyAgent(net, spec="az-policy"),
            make_agent(opponent, seed=TINY["seed"] + k),
            games,
            seed=EVAL_SEED + TINY["seed"],
            max_moves=TINY["eval"]["max_moves"],
        )
        assert tables[0][opponent] == alone.as_dict()
