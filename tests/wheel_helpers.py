"""Building the project's wheel for the packaging tests, from a copy of the source tree (so
that setuptools' build/ and egg-info never land in the checkout, and two test processes never
build in one folder)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: what a copy of the source leaves out when git cannot list the tracked files
UNTRACKED = (
    "*.egg-info",
    "__pycache__",
    ".git",
    ".venv",
    "build",
    "dist",
    "site",
    "runs",
    ".hypothesis",
    ".pytest_cache",
    ".ruff_cache",
)


def clean_env() -> dict:
    """This process's environment without PYTHONPATH and VIRTUAL_ENV (the child sees only what
    its own interpreter installs)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def run(args: list, cwd: Path, env: dict | None = None, timeout: int = 600) -> str:
    """Run a command; its stdout (an assertion error with its output if it fails)."""
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, f"{args}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def copy_source(dest: Path) -> Path:
    """A copy of the checkout's files (tracked and untracked, not ignored) in `dest`."""
    try:
        listed = (
            subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=ROOT,
                capture_output=True,
                check=True,
                timeout=60,
            )
            .stdout.decode()
            .split("\0")
        )
    except (OSError, subprocess.SubprocessError):  # no git: the tree minus build outputs
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(*UNTRACKED))
        return dest
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():  # a deleted but still tracked file is skipped
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def build_wheel(base: Path) -> Path:
    """Build the wheel of a copy of the source under `base`, offline (no index, no build
    isolation: this environment's setuptools); the wheel's path."""
    source = copy_source(base / "source")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            base / "dist",
            source,
        ],
        base,
    )
    (wheel,) = (base / "dist").glob("*.whl")
    return wheel
