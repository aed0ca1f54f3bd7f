"""Self-play and evaluation on Ray (a local Ray with 2 CPUs, one per test module): the same run
as `backend: local`, a killed actor replaced with nothing delivered twice, a resumed run whose
new actors continue the saved streams, and `evaluate --ray` giving the same JSON."""

from __future__ import annotations

import json

import pytest
import torch
from ray_helpers import (
    assert_each_batch_once,
    kill_worker_0_mid_generation,
    local_ray,  # noqa: F401 - this module's Ray (an autouse fixture)
)
from test_run_guarantees import FAST_EVAL, assert_same_tensors, fast_config, log_console

from satellites_env.agents import make_agent
from satellites_env.cli import main
from satellites_env.core import Game
from training.ppo.trainer import PPOTrainer

ray = pytest.importorskip("ray", reason="needs the 'ray' extra")
pytestmark = pytest.mark.ray


def config(backend: str, workers: int = 2, **overrides):
    # a hung actor is replaced after 120 s (not the default 600 s): a hang shows in the time
    return fast_config(
        distributed={"backend": backend, "workers": workers, "timeout": 120.0}, **overrides
    )


def counters_of(trainer: PPOTrainer) -> dict:
    counters = vars(trainer.counters).copy()
    for clock in ("seconds", "cpu_seconds", "other_seconds"):  # differ from run to run
        del counters[clock]
    return counters


def test_a_ray_run_is_the_local_run_and_its_checkpoint_plays(tmp_path):
    runs = {}
    for backend in ("local", "ray"):
        trainer = PPOTrainer(config(backend), tmp_path / backend, console=log_console()[0])
        trainer.run()
        runs[backend] = trainer
    assert counters_of(runs["ray"]) == counters_of(runs["local"])
    # evaluation games were played by the actors: the same results as in this process
    assert [(e.progress, e.results, e.final) for e in runs["ray"].history] == [
        (e.progress, e.results, e.final) for e in runs["local"].history
    ]
    assert runs["ray"].history[-1].final and len(runs["ray"].history) >= 2
    assert runs["ray"].counters.steps >= 300
    assert_same_tensors(runs["ray"].net.state_dict(), runs["local"].net.state_dict(), "weights")
    assert runs["ray"].generators.stats.refused == runs["ray"].generators.stats.dropped == 0
    runs["ray"].close()
    agent = make_agent(f"checkpoint:{tmp_path / 'ray' / 'final.pt'}", seed=0)
    game = Game.new(seed=1)
    for _ in range(20):
        game.play(agent.act(game))


def test_a_killed_actor_is_replaced_and_the_run_finishes(tmp_path):
    trainer = PPOTrainer(config("ray"), tmp_path / "run", console=log_console()[0])
    delivered = kill_worker_0_mid_generation(trainer.generators, trainer.iterate)
    trainer.run()
    assert_each_batch_once(delivered, trainer.counters.iterations)
    assert trainer.counters.steps == sum(batch.count for batch in delivered)
    assert trainer.counters.games == sum(batch.counters["games"] for batch in delivered)
    assert trainer.counters.env_steps == sum(b.counters["env_steps"] for b in delivered)
    assert (tmp_path / "run" / "final.pt").is_file() and trainer.finished
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["session"]["generators"] == {
        "delivered": len(delivered),
        "dropped": 1,
        "refused": 0,
        "replaced": 1,
    }


def test_a_resumed_ray_run_continues_like_the_local_one(tmp_path):
    weights = {}
    for backend in ("local", "ray"):
        first = PPOTrainer(config(backend), tmp_path / backend)
        first.iterate()
        first.iterate()
        first.save()
        first.close()  # the learner goes away, and its actors with it
        resumed = PPOTrainer(config(backend), tmp_path / backend, resume=True)
        resumed.iterate()  # new actors, restored from the checkpoint's streams
        weights[backend] = resumed.net.state_dict()
        assert resumed.counters.iterations == 3
        resumed.close()
    assert_same_tensors(weights["ray"], weights["local"], "weights")


def test_train_cli_takes_ray_and_resume_may_switch_backend(tmp_path, monkeypatch):
    """`train --ray` places the session's self-play on Ray without writing it into the run:
    config.json and the checkpoint keep the file's `backend: local`; resuming without `--ray`
    (and again with it) counts no change but the length."""
    import yaml
    from test_training import TINY

    path = tmp_path / "tiny.yaml"
    data = {**TINY, "eval": FAST_EVAL, "total_steps": 150}
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    assert main(["train", "--config", str(path), "--out", str(out), "--ray"]) == 0
    saved = torch.load(out / "checkpoint.pt", weights_only=True)
    written = json.loads((out / "config.json").read_text())
    assert written["distributed"]["backend"] == "local" and saved["config"] == written
    assert saved["finished"]

    def placement():
        return json.loads((out / "summary.json").read_text())["session"]["placement"]

    assert placement() == {"kind": "ray", "workers": 1, "address": None}
    # The finished run opens without Ray (and without --resume): where it ran is not a change.
    assert main(["train", "--config", str(path), "--out", str(out)]) == 0
    for steps, ray in ((300, []), (450, ["--ray"])):
        path.write_text(yaml.safe_dump({**data, "total_steps": steps}))
        assert main(["train", "--config", str(path), "--out", str(out), "--resume", *ray]) == 0
        assert placement()["kind"] == ("ray" if ray else "local")
    changes = json.loads((out / "config_changes.json").read_text())
    assert [c["changes"] for c in changes] == [
        {"total_steps": [150, 300]},
        {"total_steps": [300, 450]},
    ]
    assert json.loads((out / "config.json").read_text()) == written
    assert main(["train", "--config", str(path), "--out", str(out), "--ray", "a b"]) == 2
    assert main(["evaluate", "--agents", "random", "greedy", "--ray", "\n"]) == 2


def test_evaluate_on_ray_gives_the_same_json(tmp_path):
    common = [
        "evaluate",
        "--agents",
        "random",
        "greedy",
        "mcts:4",
        "--games",
        "4",
        "--seed",
        "5",
        "--max-moves",
        "80",
    ]
    # Without Ray in this process (worker processes would be forked from a process that runs
    # Ray's threads: not what a user's `evaluate --workers 2` does; its JSON is the same).
    assert main([*common, "--out", str(tmp_path / "local.json")]) == 0
    assert main([*common, "--workers", "2", "--ray", "--out", str(tmp_path / "ray.json")]) == 0
    local = json.loads((tmp_path / "local.json").read_text())
    on_ray = json.loads((tmp_path / "ray.json").read_text())
    assert on_ray == local and len(local["games"]) == 12


def test_evaluation_survives_a_killed_actor(monkeypatch):
    import functools

    from satellites_env import distributed
    from satellites_env.arena import init_worker, run_job, schedule

    jobs = schedule(["random", "greedy"], 6, 2)
    expected = [run_job(job, 2, 60, {})[2].as_dict() for job in jobs]
    started, real_wait = [], ray.wait
    monkeypatch.setattr(
        distributed,
        "_new_actor",
        lambda cls, *args: started.append(cls.remote(*args)) or started[-1],
    )

    def wait_after_a_kill(refs, **kwargs):  # the first actor dies with the games it holds
        if len(started) == 2:
            ray.kill(started[0], no_restart=True)
        return real_wait(refs, **kwargs)

    monkeypatch.setattr(ray, "wait", wait_after_a_kill)
    results = distributed.run_jobs_on_ray(
        jobs, functools.partial(run_job, seed=2, max_moves=60), init_worker, workers=2
    )
    assert len(started) == 3  # one replacement
    assert [record.as_dict() for _, _, record in results] == expected


def test_evaluate_joins_an_existing_cluster_by_its_address(tmp_path):
    """`--ray ADDRESS` from another process: it joins the running cluster (this module's Ray,
    as one started by `ray start --head`) and leaves it running."""
    import subprocess
    import sys

    address = ray.get_runtime_context().gcs_address
    out = tmp_path / "cluster.json"
    command = [
        sys.executable,
        "-m",
        "satellites_env",
        "evaluate",
        "--agents",
        "random",
        "greedy",
        "--games",
        "2",
        "--seed",
        "1",
        "--max-moves",
        "40",
        "--workers",
        "2",
        "--ray",
        address,
        "--out",
        str(out),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (
        main(
            [
                "evaluate",
                "--agents",
                "random",
                "greedy",
                "--games",
                "2",
                "--seed",
                "1",
                "--max-moves",
                "40",
                "--out",
                str(tmp_path / "here.json"),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text()) == json.loads((tmp_path / "here.json").read_text())
    assert ray.is_initialized() and ray.cluster_resources().get("CPU") == 2


def test_a_cluster_without_the_cpus_asked_for_is_an_error_not_a_hang():
    from satellites_env.placement import Placement
    from training.distributed.pool import GeneratorPool, PoolError

    with pytest.raises(PoolError, match="the Ray cluster has 2 CPUs; 3 workers x 1 CPUs"):
        GeneratorPool(lambda worker, seed: None, Placement("ray", 3), 0)
