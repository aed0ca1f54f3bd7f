"""The distribution is ours and holds what users need: the wheel is `satellites-env`, installs
the import names `satellites_env` and `training` and nothing else at the top, and carries the
shipped configs (from `configs/`), both `py.typed` markers and the pretrained network; the
README's install line, run inside the clone, installs this project and nothing else.

Everything here is offline: the wheel is built without an index or build isolation, and the
install line is a dry run without dependencies."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

import pytest
from wheel_helpers import ROOT, build_wheel, copy_source, run

INSTALL_LINE = 'pip install -c constraints.txt -e ".[train]"'
# PyTorch's CPU build from its own wheel index (the one index URL the README names)
CPU_LINE = (
    "pip install -c constraints.txt --extra-index-url https://download.pytorch.org/whl/cpu "
    '-e ".[train]"'
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    path = build_wheel(tmp_path_factory.mktemp("packaging"))
    with zipfile.ZipFile(path) as archive:
        yield archive


def test_the_wheel_is_satellites_env(wheel):
    assert Path(wheel.filename).name.startswith("satellites_env-")
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    assert re.search(r"^Name: satellites-env$", wheel.read(metadata).decode(), re.M)


def test_only_two_import_names_at_the_top(wheel):
    top = {name.split("/")[0] for name in wheel.namelist()}
    (info,) = [t for t in top if t.endswith(".dist-info")]
    assert top - {info} == {"satellites_env", "training"}
    assert wheel.read(f"{info}/top_level.txt").decode().split() == ["satellites_env", "training"]


def test_every_module_of_the_source_is_in_the_wheel(wheel):
    """The explicit package list in pyproject.toml misses no package."""
    names = set(wheel.namelist())
    for package in ("satellites_env", "training"):
        for module in (ROOT / package).rglob("*.py"):
            assert module.relative_to(ROOT).as_posix() in names, module


def test_the_configs_typing_markers_and_network_are_inside(wheel):
    names = set(wheel.namelist())
    shipped = {f"training/configs/{path.name}" for path in (ROOT / "configs").glob("*.yaml")}
    assert len(shipped) >= 5 and shipped <= names
    assert {path for path in names if path.startswith("training/configs/")} == shipped
    for name in shipped:
        assert wheel.read(name) == (ROOT / "configs" / Path(name).name).read_bytes()
    assert {"satellites_env/py.typed", "training/py.typed"} <= names
    assert (
        wheel.getinfo("training/alphazero/pretrained.pt").file_size
        == (ROOT / "training" / "alphazero" / "pretrained.pt").stat().st_size
    )
    assert {"satellites_env/web/assets/style.css", "satellites_env/web/assets/play.js"} <= names


def test_the_wheel_registers_the_command_and_its_trainer_commands(wheel):
    (points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(points).decode()
    assert "satellites = satellites_env.cli:main" in text
    for command in ("train", "exploit", "config", "sweep"):
        assert re.search(rf"^{command} = training\.", text, re.M), command


@pytest.mark.parametrize("line", [INSTALL_LINE, CPU_LINE], ids=["default", "cpu"])
def test_the_readme_install_line_installs_this_project(tmp_path, line):
    readme = (ROOT / "README.md").read_text()
    first_screen = readme[: readme.index("## The game in one paragraph")]
    assert line in first_screen and "make install" in first_screen
    source = copy_source(tmp_path / "clone")
    args = line.split()[1:]
    report = json.loads(
        run(
            [
                sys.executable,
                "-m",
                "pip",
                *args[:1],
                "--dry-run",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                "--quiet",
                "--report",
                "-",
                *[a.strip('"') for a in args[1:]],
            ],
            source,
        )
    )
    assert [item["metadata"]["name"] for item in report["install"]] == ["satellites-env"]
