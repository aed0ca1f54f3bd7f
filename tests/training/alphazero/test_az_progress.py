"""A training run's bars cover the whole command: the training bar says what a long step is
doing, and the final table has its own bar with the games in all (tiny runs)."""

from __future__ import annotations

import io

from rich.console import Console
from test_az_training import TINY

import training.common.run as run_module
from satellites_env import terminal as terminal_module
from training.alphazero.config import AZConfig
from training.alphazero.trainer import AZTrainer


def recorded_bars(monkeypatch) -> list[dict]:
    """Each bar `run.py` opens: its label, and every update's fields."""
    bars: list[dict] = []

    def recording(label, *columns, **options):
        bar = terminal_module.progress_bar(label, *columns, **options)
        seen: dict = {"label": label, "updates": [], "bar": bar}
        update = bar.update

        def update_and_note(task, **fields):
            update(task, **fields)
            seen["updates"].append({**fields, "total": bar.tasks[0].total})

        bar.update = update_and_note  # type: ignore[method-assign]
        bars.append(seen)
        return bar

    monkeypatch.setattr(run_module, "progress_bar", recording)
    return bars


def test_the_bars_cover_training_and_the_final_table(tmp_path, monkeypatch):
    bars = recorded_bars(monkeypatch)
    terminal = Console(file=io.StringIO(), force_terminal=True, width=200)
    AZTrainer(AZConfig.from_dict(TINY), tmp_path, console=terminal).run()
    training, final = bars
    assert training["bar"].tasks[0].total == TINY["total_positions"]
    doing = {u["doing"] for u in training["updates"] if u.get("doing")}
    assert "self-play (compiling kernels on first use)" in doing
    assert {"self-play", "gradient steps", "evaluating against random"} <= doing
    # 2 players (raw policy, search) x 2 games against random
    assert final["label"] == "final table"
    assert [(u["completed"], u["total"]) for u in final["updates"]] == [(2, 4), (4, 4)]
    assert "final table: 2 player(s) against random (4 games)" in terminal.file.getvalue()


def test_a_log_file_gets_the_final_tables_progress_as_lines(tmp_path):
    log = Console(file=io.StringIO(), width=200)
    AZTrainer(AZConfig.from_dict(TINY), tmp_path, console=log).run()
    assert "final table: 4/4 games" in log.file.getvalue()


def test_the_final_tables_bar_counts_the_shares_of_worker_processes(tmp_path, monkeypatch):
    bars = recorded_bars(monkeypatch)
    config = {**TINY, "distributed": {"backend": "thread", "workers": 2}}
    log = Console(file=io.StringIO(), width=200)
    AZTrainer(AZConfig.from_dict(config), tmp_path, console=log).run()
    final = bars[-1]
    steps = [(u["completed"], u["total"]) for u in final["updates"]]
    # 2 players x 2 games, each match in 2 shares of one game
    assert steps == [(k, 4) for k in range(1, 5)]
