"""AlphaZero self-play and evaluation on Ray (a local Ray with 2 CPUs for this module): a run
from `satellites train --ray` is the local run with the same workers, bit for bit, and its
final network plays; a killed actor is replaced with no position delivered twice; a resumed
Ray run continues like the local one, and like the uninterrupted run."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest
import torch
import yaml
from ray_helpers import (
    assert_each_batch_once,
    kill_worker_0_mid_generation,
    local_ray,  # noqa: F401 - this module's Ray (an autouse fixture)
)
from test_az_training import TINY, quiet

from satellites_env.agents import make_agent
from satellites_env.cli import main
from satellites_env.core import Game
from training.alphazero.config import AZConfig
from training.alphazero.trainer import AZTrainer

ray = pytest.importorskip("ray", reason="needs the 'ray' extra")
pytestmark = pytest.mark.ray


def settings(backend: str = "local", **overrides) -> dict:
    # a hung actor is replaced after 120 s (not the default 600 s): a hang shows in the time
    return {
        **TINY,
        "learner": "alphazero",
        "distributed": {"backend": backend, "workers": 2, "timeout": 120.0},
        **overrides,
    }


def counters_of(counters: dict) -> dict:
    return {k: v for k, v in counters.items() if not k.endswith("seconds")}


def assert_same_weights(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_a_ray_run_is_the_local_run_and_its_final_network_plays(tmp_path):
    path = tmp_path / "az.yaml"
    path.write_text(yaml.safe_dump(settings()))  # backend: local; --ray runs it on Ray
    assert main(["train", "--config", str(path), "--out", str(tmp_path / "ray"), "--ray"]) == 0
    local = AZTrainer(AZConfig.from_dict(settings()), tmp_path / "local", console=quiet())
    local.run()
    saved = torch.load(tmp_path / "ray" / "checkpoint.pt", weights_only=True)
    # the run's config is the file's: --ray placed the session, it did not change the config
    assert saved["config"]["distributed"]["backend"] == "local" and len(saved["generators"]) == 2
    assert counters_of(saved["counters"]) == counters_of(asdict(local.counters))
    assert local.counters.samples > 0 and local.counters.train_steps > 0
    # evaluation games were played by the actors: the same results as in this process
    assert [e["results"] for e in saved["history"]] == [e.results for e in local.history]
    assert [e["progress"] for e in saved["history"]] == [e.progress for e in local.history]
    assert set(saved["history"][-1]["results"]) == {"random", "search:random"}
    assert_same_weights(saved["model"], local.net.state_dict())
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    iterations = local.counters.iterations
    assert summary["session"]["generators"] == {
        "delivered": 2 * iterations,
        "dropped": 0,
        "refused": 0,
        "replaced": 0,
    }
    final = tmp_path / "ray" / "final.pt"
    for spec in (f"az:{final}:2", f"checkpoint:{final}"):
        agent, game = make_agent(spec, seed=0), Game.new(seed=1, max_moves=30)
        for _ in range(6):
            action = agent.act(game)
            assert game.legal_mask()[action]
            game.play(action)


def test_a_killed_actor_is_replaced_and_no_position_arrives_twice(tmp_path):
    trainer = AZTrainer(AZConfig.from_dict(settings("ray")), tmp_path, console=quiet())
    delivered = kill_worker_0_mid_generation(trainer.generators, trainer.iterate)
    trainer.run()
    assert_each_batch_once(delivered, trainer.counters.iterations)
    c = trainer.counters
    assert c.samples == trainer.buffer.added == sum(batch.count for batch in delivered) > 0
    for key in ("positions", "games", "evaluations"):
        assert getattr(c, key) == sum(batch.counters[key] for batch in delivered), key
    # the buffer holds exactly the delivered positions, each once, in the order delivered
    states = np.concatenate([b.samples["states"] for b in delivered if b.count])
    assert np.array_equal(trainer.buffer.states[: trainer.buffer.size], states)
    assert (tmp_path / "final.pt").is_file()
    # the final evaluation's first game against the last opponent came back from an actor
    assert trainer.sample_game is not None and trainer.sample_game.players["red"] == "az-policy"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["session"]["generators"] == {
        "delivered": len(delivered),
        "dropped": 1,
        "refused": 0,
        "replaced": 1,
    }


def test_a_resumed_ray_run_continues_like_the_local_one(tmp_path):
    weights, counters = {}, {}
    short = {**TINY["search"], "max_moves": 12}  # games end within the resumed iteration
    for backend in ("local", "ray"):
        config = AZConfig.from_dict(settings(backend, search=short, positions_per_iteration=60))
        first = AZTrainer(config, tmp_path / backend, console=quiet())
        first.iterate()
        first.iterate()
        first.save()
        first.close()  # the learner goes away, and its actors with it
        resumed = AZTrainer(config, tmp_path / backend, resume=True, console=quiet())
        resumed.iterate()  # new actors, restored from the checkpoint's streams
        assert resumed.counters.samples > first.counters.samples  # it played games and trained
        weights[backend] = resumed.net.state_dict()
        counters[backend] = counters_of(asdict(resumed.counters))
        assert resumed.counters.iterations == 3
        resumed.close()
    assert counters["ray"] == counters["local"] and counters["ray"]["train_steps"] > 0
    assert_same_weights(weights["ray"], weights["local"])
    # the actors handed their games in flight to the checkpoint and took them back: the
    # uninterrupted run, bit for bit
    config = AZConfig.from_dict(settings(search=short, positions_per_iteration=60))
    whole = AZTrainer(config, tmp_path / "whole", console=quiet())
    for _ in range(3):
        whole.iterate()
    assert counters_of(asdict(whole.counters)) == counters["ray"]
    assert_same_weights(whole.net.state_dict(), weights["ray"])
