"""Every stop keeps what finished (`satellites_env.stops`): SIGTERM and SIGHUP take the path of
Ctrl-C in every command (the real signals, sent to a real `satellites` process), and a worker
process that dies ends the run as Ctrl-C does, keeping every finished result."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_evaluate_interrupt import ARGS, TOTAL, interrupt_after

from satellites_env import cli, stops
from satellites_env.jobs import Workers
from satellites_env.ladder import Ladder
from satellites_env.placement import Placement
from satellites_env.record import GameRecord

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def satellites(*argv: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "satellites_env", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=ENV,
    )


def wait_for(process: subprocess.Popen, text: bytes, seconds: float = 120) -> bytes:
    """Read the process's standard output until `text` appears."""
    seen = b""
    deadline = time.monotonic() + seconds
    while text not in seen:
        assert time.monotonic() < deadline and process.poll() is None, seen
        chunk = os.read(process.stdout.fileno(), 4096)
        if not chunk:
            break
        seen += chunk
    return seen


def children(pid: int) -> list[int]:
    """The process ids whose parent is `pid` and that run its command line: the forked
    workers, not multiprocessing's helper (Linux)."""
    command = (Path("/proc") / str(pid) / "cmdline").read_bytes()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                same = (entry / "cmdline").read_bytes() == command
            except OSError:
                continue
            if same and int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def games_in(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as connection:
        return connection.execute("SELECT COUNT(*) FROM games").fetchone()[0]


# --------------------------------------------------------------------------- signals


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_play_save_keeps_the_game_whatever_signal_stops_it(signum, tmp_path):
    process = satellites(
        "play", "--opponent", "random", "--color", "blue", "--save", "game.json", cwd=tmp_path
    )
    try:
        wait_for(process, b"move 2 (blue)>")  # random has played: the game has a move
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == STATUS[signum], err
    record = GameRecord.load(tmp_path / "game.json")
    assert len(record.moves) == 1 and record.result["end"] == "ongoing"
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and b"Traceback" not in err, err
    name = signal.Signals(signum).name
    assert lines[0] == ("interrupted" if signum == signal.SIGINT else f"stopped by {name}") + (
        " (the terminal closed)" if signum == signal.SIGHUP else ""
    )


@pytest.mark.parametrize(
    ("signum", "workers"), [(signal.SIGTERM, 2), (signal.SIGHUP, 1), (signal.SIGTERM, 1)]
)
def test_evaluate_stopped_by_a_signal_keeps_every_finished_game(signum, workers, tmp_path):
    rng = random.Random(f"{signum}/{workers}")
    out = tmp_path / "out.json"
    argv = [*ARGS, "--workers", str(workers), "--out", str(out)]
    status, counted, output = interrupt_after(
        argv, rng.randint(1, TOTAL - 4), rng.uniform(0, 0.1), tmp_path, signum
    )
    if status == 0:  # the last games ended within the jitter
        return
    assert status == STATUS[signum], output
    assert f"stopped by {signal.Signals(signum).name}" in output and "Traceback" not in output
    kept = json.loads(out.read_text())
    assert counted <= len(kept["games"])
    if not kept["complete"]:
        assert "interrupted after" in output
        assert cli.main(["evaluate", *ARGS, "--out", str(out)]) == 0  # it continues
        assert len(json.loads(out.read_text())["games"]) == TOTAL


def test_a_signal_under_nohup_stays_ignored():
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stops.stop_signals():
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.05)
        assert stops.received() is None
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_sigterm_while_ctrl_c_is_held_is_held_too(tmp_path):
    """The handler of SIGINT in force runs: a held Ctrl-C holds SIGTERM until the files."""
    from satellites_env.tournament import HoldCtrlC

    with stops.stop_signals():
        with pytest.raises(KeyboardInterrupt):
            with HoldCtrlC(held=True) as held:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)
                assert held.caught  # not raised inside the block
        assert stops.exit_status() == 143


def test_ladder_run_stopped_by_sigterm_keeps_its_games(tmp_path):
    db = tmp_path / "ladder.db"
    assert cli.main(["ladder", "add", "random", "greedy", "--db", str(db), "--max-moves=40"]) == 0
    process = satellites(
        "ladder", "run", "--db", str(db), "--games-per-pair", "4000", "--workers", "2", cwd=tmp_path
    )
    try:
        deadline = time.monotonic() + 120
        while games_in(db) < 3:  # some games are stored: stop it mid-run
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 143, err
    assert err.decode().strip().splitlines()[-1] == "stopped by SIGTERM"
    with Ladder(db) as ladder:
        assert len(ladder.game_rows()) >= 3  # every game stored as it finished
        assert ladder.db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0


# --------------------------------------------------------------------------- dead workers


def die_on_three(job: int) -> int:
    if job == 3:
        time.sleep(0.3)  # the others finish meanwhile
        os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does
    return job * job


def test_a_dead_worker_ends_the_run_keeping_every_finished_result():
    kept = {}
    with Workers(Placement("processes", 2)) as workers:
        with pytest.raises(stops.WorkerDied, match="killed by SIGKILL"):
            workers.run(list(range(4)), die_on_three, kept.__setitem__)
        assert workers._pool is None
        assert kept == {0: 0, 1: 1, 2: 4}
        assert workers.run([5, 6], die_on_three) == [25, 36]  # fresh workers


def test_evaluate_whose_worker_is_killed_keeps_its_games_and_continues(tmp_path):
    out = tmp_path / "out.json"
    process = satellites("evaluate", *ARGS, "--workers", "2", "--out", str(out), cwd=tmp_path)
    try:
        time.sleep(1)
        while not (workers := children(process.pid)):
            assert process.poll() is None
            time.sleep(0.1)
        time.sleep(random.Random(5).uniform(0.5, 3))
        with contextlib.suppress(ProcessLookupError):  # it may have ended with its games
            os.kill(workers[0], signal.SIGKILL)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.returncode == 0:
        return  # every game ended first
    assert process.returncode == 1, err
    last = err.decode().strip().splitlines()[-1]
    assert last == "stopped: a worker process was killed by SIGKILL, as when memory runs out"
    kept = json.loads(out.read_text())
    assert kept["complete"] is False
    assert cli.main(["evaluate", *ARGS, "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())["games"]) == TOTAL


def test_play_stopped_while_its_opponent_is_built_saves_the_start(tmp_path, monkeypatch):
    from satellites_env import terminal_game

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # a stop signal while a search compiles

    monkeypatch.setattr(terminal_game, "make_agent", stopped)
    save = tmp_path / "game.json"
    assert cli.main(["play", "--save", str(save)]) == 130
    assert GameRecord.load(save).moves == []
    monkeypatch.undo()
    assert cli.main(["play", "--opponent", "mcts:x", "--save", str(tmp_path / "no.json")]) == 2
    assert not (tmp_path / "no.json").exists()  # a bad spec is an error, not a game
