"""The built wheel stands alone: installed into a fresh virtual environment and run from a
folder outside the repository, it plays the README's env loop, trains a tiny run from a YAML
file, knows its shipped configs by name, and evaluates the shipped network.

The wheel is installed without dependencies; the fresh environment finds them (numpy, torch,
...) in this one's site-packages through a path file, so that the test takes seconds rather
than an install of PyTorch. That path file lists only site-packages: the editable install of
this repository there is not active (its finder needs a `.pth` of its own, which a listed
folder does not run), and the test checks that the package came from the wheel."""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

TINY = """\
learner: alphazero
seed: 0
total_positions: 120
positions_per_iteration: 60
threads: 1
checkpoint_every: 1
model: {channels: 8, blocks: 1}
search: {games: 4, full_simulations: 4, cheap_simulations: 2, max_moves: 30}
replay: {capacity: 500, min_positions: 10, batch_size: 16}
eval: {every: 1, games: 2, opponents: [random], final: {random: 2}, search_simulations: 2,
       max_moves: 30}
"""


def run(args: list, cwd: Path, env: dict, timeout: int = 600) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{args}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of a fresh venv with the wheel installed, an empty work folder, environment)."""
    base = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    built_before = (ROOT / "build").exists()
    try:
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "-q",
                "-w",
                base / "dist",
                ROOT,
            ],
            ROOT,
            env,
        )
    finally:  # setuptools builds in the source tree: leave it as it was
        if not built_before:
            shutil.rmtree(ROOT / "build", ignore_errors=True)
    (wheel,) = (base / "dist").glob("satellites_env-*.whl")
    run([sys.executable, "-m", "venv", base / "venv"], base, env)
    python = base / "venv" / "bin" / "python"
    target = Path(
        run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base, env
        ).strip()
    )
    (target / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], base, env)
    work = base / "work"
    work.mkdir()
    env["PATH"] = f"{base / 'venv' / 'bin'}{os.pathsep}{env['PATH']}"
    return python, work, env


def test_the_wheel_is_what_runs(installed):
    python, work, env = installed
    where = run(
        [
            python,
            "-c",
            "import satellites_env, training; "
            "print(satellites_env.__file__); print(training.__file__)",
        ],
        work,
        env,
    )
    venv = str(python.parents[1])
    assert all(line.startswith(venv) for line in where.split()), where


def test_the_readme_env_loop_runs_from_the_wheel(installed):
    python, work, env = installed
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    loop = next(b for b in blocks if "satellites_v0.env(" in b and b.startswith(("import", "from")))
    run([python, "-c", loop], work, env)


def test_a_tiny_training_run_and_an_evaluation_from_the_wheel(installed):
    python, work, env = installed
    (work / "tiny.yaml").write_text(TINY)
    out = run(["satellites", "train", "--config", "tiny.yaml", "--out", "run"], work, env)
    assert "Final evaluation" in out and (work / "run" / "final.pt").is_file()
    names = run(
        [
            python,
            "-c",
            "from training.common.config import load_config\n"
            "for name in ('az_quick', 'az_standard', 'quick', 'standard'):\n"
            "    print(load_config(name).learner)",
        ],
        work,
        env,
    )
    assert names.split() == ["alphazero", "alphazero", "ppo", "ppo"]
    table = run(
        [
            "satellites",
            "evaluate",
            "--agents",
            "az:pretrained:2",
            f"checkpoint:{work / 'run' / 'final.pt'}",
            "--games",
            "2",
        ],
        work,
        env,
    )
    assert "az:pretrained:2" in table


def test_the_command_knows_its_version_and_shipped_configs(installed):
    python, work, env = installed
    version = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert run(["satellites", "--version"], work, env).strip() == f"satellites-env {version}"
    listing = run(["satellites", "config", "list"], work, env)
    assert [line.split()[0] for line in listing.splitlines()] == [
        "az_quick",
        "az_standard",
        "exploit",
        "quick",
        "standard",
    ]
    shown = run(["satellites", "config", "show", "az_quick"], work, env)
    assert shown.startswith("# ") and "learner: alphazero" in shown
    (work / "az_quick").write_text("not: a config\n")  # a file never shadows a shipped name
    assert (
        run(
            [
                python,
                "-c",
                "from training.common.config import config_path\nprint(config_path('az_quick'))",
            ],
            work,
            env,
        )
        .strip()
        .endswith("training/configs/az_quick.yaml")
    )
