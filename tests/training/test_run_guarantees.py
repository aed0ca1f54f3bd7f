"""What a training run guarantees: reproducible weights, consistent checkpoints on Ctrl-C,
safe resume rules, finished runs that are not trained again, one trainer per folder, and
progress lines in a log file."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from rich.console import Console
from special_files import SPECIAL, fifo, finishes, unchanged
from test_training import TINY, tiny_config

import training.common.run as run_module
import training.ppo.trainer as trainer_module
from satellites_env.files import FileKindError
from training.common.checkpoint import load_checkpoint
from training.common.run_folder import OUTPUT_FILES, RunError, RunExistsError
from training.common.runlock import RunLock, RunLockedError
from training.ppo.trainer import PPOTrainer
from training.train import train

FAST_EVAL = {
    "every": 2,
    "games": 2,
    "opponents": ["random"],
    "final": {"random": 2},
    "max_moves": 60,
}


def fast_config(**overrides):
    return tiny_config(**{"eval": FAST_EVAL, **overrides})


def config_file(tmp_path: Path, name: str = "tiny.yaml", **overrides) -> Path:
    data = {**TINY, "eval": FAST_EVAL, **overrides}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def log_console() -> tuple[Console, io.StringIO]:
    """A console writing to a string: not a terminal, like `make train > log`."""
    buffer = io.StringIO()
    return Console(file=buffer, width=200), buffer


def assert_same_tensors(a, b, where="state"):
    if isinstance(a, torch.Tensor):
        assert torch.equal(a, b), where
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same_tensors(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            assert_same_tensors(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


# --------------------------------------------------------------------------- reproducible


def test_same_config_and_seed_give_identical_weights(tmp_path):
    runs = []
    for name in ("a", "b"):
        trainer = PPOTrainer(fast_config(), tmp_path / name)
        trainer.iterate()
        trainer.iterate()
        runs.append(trainer)
    a, b = (r.net.state_dict() for r in runs)
    assert_same_tensors(a, b, "weights")
    assert_same_tensors(runs[0].optimizer.state_dict(), runs[1].optimizer.state_dict())
    other = PPOTrainer(fast_config(seed=4), tmp_path / "c")
    assert not torch.equal(
        other.net.state_dict()["stem.0.weight"],
        PPOTrainer(fast_config(), tmp_path / "d").net.state_dict()["stem.0.weight"],
    )


# --------------------------------------------------------------------------- interrupts


def test_ctrl_c_mid_update_finishes_the_update_saves_and_stops(tmp_path, monkeypatch):
    config = fast_config(checkpoint_every=100, total_steps=2000)
    real_update = trainer_module.ppo_update
    calls = []

    def interrupted_update(net, optimizer, batch, *args):
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of the third update
        return real_update(net, optimizer, batch, *args)

    monkeypatch.setattr(trainer_module, "ppo_update", interrupted_update)
    console, log = log_console()
    interrupted = PPOTrainer(config, tmp_path / "interrupted", console=console)
    with pytest.raises(KeyboardInterrupt):
        interrupted.run()
    monkeypatch.setattr(trainer_module, "ppo_update", real_update)
    assert "finishing this iteration" in log.getvalue() and "--resume" in log.getvalue()
    saved = load_checkpoint(tmp_path / "interrupted" / "checkpoint.pt")
    assert saved["counters"]["iterations"] == 3 and saved["finished"] is False

    reference = PPOTrainer(config, tmp_path / "reference")
    for _ in range(3):
        reference.iterate()
    expected = reference.state_payload()
    for key in ("model", "optimizer", "counters", "pool", "rng"):
        if key == "counters":  # the clocks differ from run to run
            for clock in ("seconds", "cpu_seconds", "other_seconds"):
                expected[key][clock] = saved[key][clock]
        assert_same_tensors(saved[key], expected[key], key)
    # Resuming the interrupted run continues exactly as the uninterrupted one would.
    reference.save()
    resumed = PPOTrainer(config, tmp_path / "interrupted", resume=True)
    uninterrupted = PPOTrainer(config, tmp_path / "reference", resume=True)
    resumed.iterate()
    uninterrupted.iterate()
    assert_same_tensors(resumed.net.state_dict(), uninterrupted.net.state_dict(), "weights")


def test_a_second_ctrl_c_stops_at_once_and_leaves_the_last_checkpoint(tmp_path, monkeypatch):
    config = fast_config(checkpoint_every=2, total_steps=2000)
    real_update = trainer_module.ppo_update
    calls = []

    def interrupted_update(net, optimizer, batch, *args):
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)  # the second one stops the update at once
        return real_update(net, optimizer, batch, *args)

    monkeypatch.setattr(trainer_module, "ppo_update", interrupted_update)
    console, log = log_console()
    with pytest.raises(KeyboardInterrupt):
        PPOTrainer(config, tmp_path / "run", console=console).run()
    assert "the last checkpoint" in log.getvalue()
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["counters"]["iterations"] == 2  # written after the second update
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# --------------------------------------------------------------------------- resume rules


@pytest.mark.parametrize(
    "change, listed",
    [
        ({"seed": 4}, "seed: 3 -> 4"),
        ({"ppo": {**TINY["ppo"], "learning_rate": 0.3}}, "ppo.learning_rate: 0.0003 -> 0.3"),
        ({"selfplay": {**TINY["selfplay"], "envs": 8}}, "selfplay.envs: 4 -> 8"),
    ],
)
def test_resume_refuses_a_changed_config_listing_the_keys(tmp_path, change, listed):
    PPOTrainer(fast_config(), tmp_path / "run").save()
    before = (tmp_path / "run" / "checkpoint.pt").read_bytes()
    with pytest.raises(RunError, match=f"config differs.*{listed}"):
        PPOTrainer(fast_config(**change), tmp_path / "run", resume=True)
    assert (tmp_path / "run" / "checkpoint.pt").read_bytes() == before


def test_resume_accepts_a_longer_run_and_records_the_change(tmp_path):
    console, _ = log_console()
    first = PPOTrainer(fast_config(), tmp_path / "run", console=console)
    first.run()
    original = json.loads((tmp_path / "run" / "config.json").read_text())
    longer = fast_config(total_steps=500, eval={**FAST_EVAL, "games": 4})
    with pytest.raises(RunError, match="pass --resume"):
        PPOTrainer(longer, tmp_path / "run")  # a finished run with another config, no --resume
    resumed = PPOTrainer(longer, tmp_path / "run", resume=True, console=console)
    assert not resumed.finished
    resumed.run()
    assert resumed.counters.steps >= 500 and resumed.finished
    assert json.loads((tmp_path / "run" / "config.json").read_text()) == original
    changes = json.loads((tmp_path / "run" / "config_changes.json").read_text())
    assert changes[0]["changes"] == {"total_steps": [300, 500], "eval.games": [2, 4]}
    assert changes[0]["progress"] == first.counters.steps
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["config"]["total_steps"] == 500 and saved["config_changes"] == changes
    assert [e["final"] for e in saved["history"]].count(True) == 2  # one per finished stretch


def test_a_sessions_placement_is_neither_written_into_the_run_nor_a_change(tmp_path):
    """Where one session's self-play runs (`--ray`: here threads, handed to `train.run` as
    `--ray` hands Ray) is not written into the run: its config.json and checkpoint keep the
    file's `distributed:`, the session's summary says where it ran, and a resume at the
    config's own placement counts no change but the length. A placement the config cannot
    run at is refused before the folder is touched."""
    from satellites_env.placement import Placement
    from training.common.config import ConfigError
    from training.train import run

    config, out = fast_config(distributed={"workers": 2}), tmp_path / "run"
    console, log = log_console()
    run(config, Path("tiny.yaml"), out, False, console, Placement("threads", 2))
    assert "(self-play in 2 threads)" in log.getvalue()
    written = json.loads((out / "config.json").read_text())
    assert written == config.to_dict() and written["distributed"]["backend"] == "local"
    saved = load_checkpoint(out / "checkpoint.pt")
    assert saved["config"] == written and saved["finished"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["session"]["placement"] == {"kind": "threads", "workers": 2, "address": None}
    # the finished run opens at the config's placement without --resume: no change
    assert PPOTrainer(config, out, console=console).finished
    longer = fast_config(distributed={"workers": 2}, total_steps=500)
    run(longer, Path("tiny.yaml"), out, True, console)
    changes = json.loads((out / "config_changes.json").read_text())
    assert [c["changes"] for c in changes] == [{"total_steps": [300, 500]}]
    assert json.loads((out / "config.json").read_text()) == written
    summary = json.loads((out / "summary.json").read_text())
    assert summary["session"]["placement"] == {"kind": "local", "workers": 2, "address": None}
    budget = fast_config(cpu_minutes=1.0)
    with pytest.raises(ConfigError, match="cpu_minutes counts this process's CPU time"):
        run(budget, Path("tiny.yaml"), tmp_path / "new", False, console, Placement("ray"))
    with pytest.raises(ConfigError, match=r"distributed.workers \(5\) must be <= selfplay"):
        run(config, Path("tiny.yaml"), tmp_path / "new", False, console, Placement("ray", 5))
    assert not (tmp_path / "new").exists()


def test_an_unfinished_run_needs_resume_and_resume_needs_a_run(tmp_path):
    PPOTrainer(fast_config(), tmp_path / "run").save()
    with pytest.raises(RunExistsError, match=r"unfinished run .*pass --resume"):
        PPOTrainer(fast_config(), tmp_path / "run")
    with pytest.raises(RunError, match="no run to continue"):
        PPOTrainer(fast_config(), tmp_path / "empty", resume=True)


# --------------------------------------------------------------------------- finished runs


def test_a_finished_run_is_reported_not_trained_again(tmp_path):
    path = config_file(tmp_path)
    out = tmp_path / "run"
    console, log = log_console()
    train(path, out, False, console)
    saved = (out / "checkpoint.pt").read_bytes()
    history = load_checkpoint(out / "checkpoint.pt")["history"]
    assert "Final evaluation" in log.getvalue()
    for resume in (False, True):
        console, log = log_console()
        train(path, out, resume, console)  # `make train` twice: no error, no training
        text = log.getvalue()
        assert "finished run" in text and "nothing to train" in text, text
        assert "Final evaluation" in text  # the table again
        assert (out / "checkpoint.pt").read_bytes() == saved
    assert load_checkpoint(out / "checkpoint.pt")["history"] == history
    # A report rebuilds what is missing from the folder.
    (out / "summary.json").unlink()
    train(path, out, False, log_console()[0])
    assert (out / "summary.json").is_file()


def test_the_cli_exits_0_on_a_finished_run_and_2_on_refusals(tmp_path, capsys):
    from satellites_env.cli import main

    path = config_file(tmp_path)
    out = tmp_path / "run"
    train(path, out, False, log_console()[0])
    assert main(["train", "--config", str(path), "--out", str(out)]) == 0
    assert "finished run" in capsys.readouterr().out
    changed = config_file(tmp_path, "changed.yaml", seed=9)
    assert main(["train", "--config", str(changed), "--out", str(out), "--resume"]) == 2
    printed = capsys.readouterr()
    assert "seed: 3 -> 9" in " ".join((printed.out + printed.err).split())


# --------------------------------------------------------------------------- lock


HOLD_LOCK = """
import sys, time
from training.common.runlock import RunLock
with RunLock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_a_second_trainer_in_the_same_folder_is_refused(tmp_path):
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(out)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(
            RunLockedError, match=f"another `satellites train` is running in .*pid {holder.pid}"
        ):
            train(config_file(tmp_path), out, False, log_console()[0])
        assert not (out / "checkpoint.pt").exists()
    finally:
        holder.kill()
        holder.wait()
    # The lock goes with the process that held it, however it ended.
    with RunLock(out):
        with RunLock(out):  # re-entrant within one process
            pass


def test_run_lock_is_never_opened_through_a_link(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "run.lock").symlink_to(victim)
    with pytest.raises(FileKindError, match=r"run lock .* is a symbolic link"):
        RunLock(out).acquire()
    assert victim.read_text() == "precious"
    from satellites_env.cli import main

    assert main(["train", "--config", str(config_file(tmp_path)), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: run lock") and len(err.strip().splitlines()) == 1, err
    assert victim.read_text() == "precious" and not (out / "checkpoint.pt").exists()
    (out / "run.lock").unlink()
    (out / "run.lock").symlink_to(tmp_path / "nowhere")  # dangling: nothing is created
    with pytest.raises(FileKindError, match="symbolic link"):
        RunLock(out).acquire()
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize(
    "kind, make", [("fifo", fifo), ("hard link", None), ("directory", lambda p: p.mkdir())]
)
def test_run_lock_refuses_what_is_not_its_own_file(tmp_path, kind, make):
    out = tmp_path / "run"
    out.mkdir()
    lock = out / "run.lock"
    if make is None:
        victim = tmp_path / "victim.txt"
        victim.write_text("precious")
        os.link(victim, lock)
    else:
        make(lock)
    outcome = finishes(lambda: RunLock(out).acquire())
    assert isinstance(outcome.get("error"), FileKindError), outcome
    assert "run lock" in str(outcome["error"])
    if make is None:
        assert victim.read_text() == "precious"


def test_a_stale_run_lock_of_a_dead_process_is_taken_over(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / "run.lock").write_text(str(dead.pid))
    with RunLock(out):
        assert (out / "run.lock").read_text() == str(os.getpid())
    with RunLock(out):  # and again, once released
        assert not (out / "run.lock").is_symlink()
    created = tmp_path / "fresh"
    with RunLock(created):  # a new folder: the lock file is created
        assert (created / "run.lock").read_text() == str(os.getpid())
        assert stat.S_ISREG(os.lstat(created / "run.lock").st_mode)


@pytest.mark.parametrize("name", OUTPUT_FILES)
@pytest.mark.parametrize("kind, make", SPECIAL, ids=[kind for kind, _ in SPECIAL])
def test_a_link_or_special_file_among_the_run_files_is_refused_first(tmp_path, name, kind, make):
    out = tmp_path / "run"
    out.mkdir()
    path = make(out / name)
    before = os.lstat(path)
    with pytest.raises(FileKindError, match=f"run file .*{name}"):
        train(config_file(tmp_path), out, False, log_console()[0])
    assert unchanged(path, before)
    written = {p.name for p in out.iterdir()} - {name, f"{name}.target", "run.lock"}
    assert written == set()  # nothing trained, nothing written


# --------------------------------------------------------------------------- progress


def test_a_log_file_gets_progress_lines_while_training(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "PROGRESS_SECONDS", 0.0)
    console, log = log_console()
    assert not console.is_terminal
    PPOTrainer(fast_config(), tmp_path / "run", console=console).run()
    lines = [line for line in log.getvalue().splitlines() if line.startswith("update ")]
    assert len(lines) >= 3, log.getvalue()
    assert "update 1: 1" in lines[0] and "learner steps" in lines[0] and "env steps/s" in lines[0]
    assert any("eval at" in line and "random" in line for line in lines[1:])
    # Time-based: with the default period, a short run logs only evaluations and the end.
    monkeypatch.setattr(run_module, "PROGRESS_SECONDS", 3600.0)
    console, log = log_console()
    started = time.monotonic()
    PPOTrainer(fast_config(seed=5), tmp_path / "other", console=console).run()
    assert time.monotonic() - started < 3600
    assert 1 <= sum(line.startswith("update ") for line in log.getvalue().splitlines()) <= 3
