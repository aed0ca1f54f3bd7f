"""The worked examples in examples/ run end to end on tiny budgets, with no illegal action."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest

pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sb3_maskable_ppo(tmp_path, capsys):
    pytest.importorskip("sb3_contrib", reason="needs the 'examples' extra")
    example = load("sb3_maskable_ppo")
    summary = example.main(
        total_steps=2048,
        n_envs=2,
        n_steps=128,
        batch_size=64,
        n_epochs=1,
        eval_games=2,
        seed=0,
        torch_threads=1,
        save=str(tmp_path / "ppo.zip"),
        verbose=True,
    )
    assert summary["train_steps"] >= 2048
    assert summary["train_episodes"] >= 1
    assert summary["illegal_actions"] == 0
    assert summary["wins"] + summary["draws"] + summary["losses"] == 2
    assert (tmp_path / "ppo.zip").exists()
    assert "MaskablePPO vs random (playing a colour drawn each game):" in capsys.readouterr().out


def test_pettingzoo_selfplay_loop():
    example = load("pettingzoo_selfplay_loop")
    summary = example.main(
        total_steps=3000, games_per_update=2, seed=0, torch_threads=1, verbose=True
    )
    assert summary["steps"] >= 3000
    assert summary["games"] >= 2 and summary["updates"] >= 2
    assert summary["illegal_actions"] == 0
    assert summary["red_wins"] + summary["blue_wins"] + summary["draws"] == summary["games"]


def test_torchrl_pettingzoo(capsys):
    pytest.importorskip("torchrl", reason="needs the 'examples' extra")
    example = load("torchrl_pettingzoo")
    # 40-move games: 300 frames finish 7 of them (the move cap truncates each at 40 frames).
    summary = example.main(total_frames=300, frames_per_batch=100, max_moves=40, seed=0)
    assert summary["frames"] == 300
    assert summary["episodes"] == 7 and summary["mean_episode_length"] == 40
    assert summary["illegal_actions"] == 0
    out = capsys.readouterr().out
    assert "300 frames, 7 episodes finished (mean length 40.0 frames)" in out
    assert "illegal actions: 0 of 300" in out


def test_torchrl_pettingzoo_finds_an_illegal_action():
    """The legality check reads the acting player's mask: an action outside it is counted."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchrl", reason="needs the 'examples' extra")
    example = load("torchrl_pettingzoo")
    env = example.make_env(max_moves=40, seed=1)
    frame = env.reset()
    frame = example.make_policy(env)(frame)
    players = frame[example.GROUP]
    actor = int(players["mask"].float().argmax())
    legal = players["action_mask"][actor]
    assert legal[players["action"][actor]]
    assert example.count_illegal(frame.unsqueeze(0)) == 0
    players["action"][actor] = int(torch.nonzero(~legal)[0])
    assert example.count_illegal(frame.unsqueeze(0)) == 1


@pytest.mark.parametrize(
    "name", ["sb3_maskable_ppo", "pettingzoo_selfplay_loop", "torchrl_pettingzoo"]
)
def test_examples_command_line_matches_main(name):
    if name == "sb3_maskable_ppo":
        pytest.importorskip("sb3_contrib", reason="needs the 'examples' extra")
    if name == "torchrl_pettingzoo":
        pytest.importorskip("torchrl", reason="needs the 'examples' extra")
    example = load(name)
    budget = "total_frames" if name == "torchrl_pettingzoo" else "total_steps"
    args = vars(example._parse_args(["--" + budget.replace("_", "-"), "5"]))
    assert args[budget] == 5
    parameters = inspect.signature(example.main).parameters
    assert set(args) <= set(parameters)  # `main(**vars(args))` is what __main__ runs


def test_vector_selfplay_example_runs():
    import subprocess
    import sys

    result = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "vector_selfplay.py"),
            "--envs",
            "16",
            "--steps",
            "400",
            "--seed",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "masked random: 16 games x 400 steps" in result.stdout
    assert "self-play eager vs random:" in result.stdout
