"""Ctrl-C from the terminal during the trainer's evaluation in worker processes: the terminal
sends SIGINT to every process of its group, the evaluation processes included. They ignore
it (the shared job runner, `satellites_env.jobs`), so the evaluation under way finishes and is
kept, the run saves after the iteration and stops, as for Ctrl-C anywhere else in the loop."""

from __future__ import annotations

import os
import signal

import pytest
from test_run_guarantees import fast_config, log_console

from satellites_env.jobs import Workers
from training.common.checkpoint import load_checkpoint
from training.ppo.trainer import PPOTrainer


def test_ctrl_c_to_the_whole_group_during_an_evaluation_keeps_its_games(tmp_path, monkeypatch):
    started = Workers._processes

    def then_ctrl_c(self, count):
        pool = started(self, count)
        for process in list(pool._processes.values()):  # what the terminal does
            os.kill(process.pid, signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        return pool

    monkeypatch.setattr(Workers, "_processes", then_ctrl_c)
    config = fast_config(
        checkpoint_every=100,
        total_steps=2000,
        distributed={"workers": 2},
        eval={
            "every": 2,
            "games": 4,
            "opponents": ["random"],
            "final": {"random": 2},
            "max_moves": 60,
        },
    )
    console, log = log_console()
    trainer = PPOTrainer(config, tmp_path / "run", console=console)
    with pytest.raises(KeyboardInterrupt):
        trainer.run()
    assert "finishing this iteration" in log.getvalue(), log.getvalue()
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["counters"]["iterations"] == 2 and saved["finished"] is False
    (evaluation,) = saved["history"]
    assert evaluation["results"]["random"]["games"] == 4


def test_an_evaluation_in_worker_processes_gives_the_results_of_one_process(tmp_path):
    games = {
        "every": 2,
        "games": 6,
        "opponents": ["random", "greedy"],
        "final": {"random": 2},
        "max_moves": 60,
    }
    results = []
    for workers in (1, 3):
        trainer = PPOTrainer(
            fast_config(distributed={"workers": workers}, eval=games), tmp_path / str(workers)
        )
        try:
            results.append(trainer.evaluate().results)
        finally:
            trainer.close()
    assert results[0] == results[1] and results[0]["greedy"]["games"] == 6


def test_sigterm_during_training_saves_after_the_iteration_as_ctrl_c_does(tmp_path):
    """SIGTERM (a scheduler's stop) takes Ctrl-C's path (`satellites_env.stops`): the run
    finishes its iteration, saves and stops, and the command exits 143."""
    from satellites_env.stops import exit_status, stop_signals

    config = fast_config(checkpoint_every=100, total_steps=2000, eval={"every": 100})
    console, log = log_console()
    trainer = PPOTrainer(config, tmp_path / "run", console=console)
    original = trainer.status

    def then_sigterm(losses):
        if trainer.counters.iterations == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        return original(losses)

    trainer.status = then_sigterm
    with stop_signals():
        with pytest.raises(KeyboardInterrupt):
            trainer.run()
        assert exit_status() == 143
    assert "SIGTERM: finishing this iteration" in log.getvalue(), log.getvalue()
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["counters"]["iterations"] == 1 and saved["finished"] is False
