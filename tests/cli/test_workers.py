"""The worker processes of `evaluate` and `ladder run`: SIGKILL of the command leaves none
running, and Ctrl-C from the terminal (SIGINT to the whole process group) during `ladder run
--workers 2` keeps every finished game, as it does for `evaluate`
(test_evaluate_interrupt.py)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_jobs import kill_when_playing, stragglers

from satellites_env import cli

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def satellites(*argv: str, **options) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "satellites_env", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ENV,
        **options,
    )


def test_sigkill_of_evaluate_leaves_no_worker_running(tmp_path):
    process = satellites(
        "evaluate",
        "--agents",
        "random",
        "mcts:20",
        "--games",
        "60",
        "--max-moves",
        "100",
        "--workers",
        "2",
        "--out",
        str(tmp_path / "out.json"),
    )
    children = kill_when_playing(process, 2)
    assert len(children) == 2
    assert stragglers(children, seconds=5.0) == []


def ladder(db: Path, *specs: str) -> Path:
    assert cli.main(["ladder", "add", *specs, "--db", str(db), "--max-moves", "60"]) == 0
    return db


def test_sigkill_of_ladder_run_leaves_no_worker_running(tmp_path):
    db = ladder(tmp_path / "ladder.db", "random", "mcts:20")
    process = satellites(
        "ladder", "run", "--db", str(db), "--games-per-pair", "200", "--workers", "2"
    )
    children = kill_when_playing(process, 2)
    assert len(children) == 2
    assert stragglers(children, seconds=5.0) == []


def games_of(db: Path) -> dict:
    with sqlite3.connect(db) as connection:
        keys = dict(connection.execute("SELECT id, key FROM agents"))
        return {
            (keys[a], keys[b], game): (score, record)
            for a, b, game, score, record in connection.execute(
                "SELECT a, b, game, score, record FROM games"
            )
        }


def claims_of(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT COUNT(*) FROM claims").fetchone()[0]


def test_ctrl_c_in_ladder_run_keeps_finished_games_and_the_rerun_completes(tmp_path):
    specs, games = ("random", "greedy", "mcts:4"), 8
    reference = ladder(tmp_path / "reference.db", *specs)
    assert cli.main(["ladder", "run", "--db", str(reference), "--games-per-pair", str(games)]) == 0
    expected = games_of(reference)
    assert len(expected) == 3 * games

    db = ladder(tmp_path / "ladder.db", *specs)
    process = satellites(
        "ladder",
        "run",
        "--db",
        str(db),
        "--games-per-pair",
        str(games),
        "--workers",
        "2",
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while len(games_of(db)) < 5:
            assert process.poll() is None and time.monotonic() < deadline, (
                process.stderr.read().decode(errors="replace")
            )
            time.sleep(0.05)
        seen = len(games_of(db))
        os.killpg(process.pid, signal.SIGINT)  # the terminal: the command and its workers
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    err = process.stderr.read().decode(errors="replace")
    kept = games_of(db)
    if process.returncode == 0:  # the last games ended first: a finished run is fine too
        assert kept == expected
        return
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert seen <= len(kept) < len(expected)
    assert all(expected[key] == value for key, value in kept.items())
    assert claims_of(db) == 0
    assert cli.main(["ladder", "run", "--db", str(db), "--games-per-pair", str(games)]) == 0
    assert games_of(db) == expected
