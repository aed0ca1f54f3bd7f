"""`satellites sweep --ray`: the trials as Ray Tune trials on the local 2-CPU Ray, with the
same table as one after another."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from ray_helpers import local_ray  # noqa: F401 (the module's Ray)

from satellites_env.placement import Placement
from training import sweep as sweeps
from training.sweep import runner

sys.path.insert(0, str(Path(__file__).parent / "alphazero"))
from test_az_training import TINY, quiet

pytestmark = pytest.mark.ray


def test_ray_tune_trials_give_the_local_table(tmp_path, monkeypatch):
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "learner": "alphazero"}))
    options = {
        "positions": 80,
        "player": "checkpoint:PATH",
        "against": ["random=4"],
        "max_moves": 30,
    }
    asked = []
    with_resources = sweeps.tune_resources
    monkeypatch.setattr(
        runner, "tune_resources", lambda config: asked.append(with_resources(config)) or asked[-1]
    )
    rows = sweeps.sweep_command(
        str(config),
        ["replay.replay_ratio=2,3"],
        "0-1",
        tmp_path / "ray",
        quiet(),
        placement=Placement("ray"),
        **options,
    )
    assert asked == [{"cpu": 1}, {"cpu": 1}]  # TINY: one thread, one generator
    assert sorted(p.name for p in (tmp_path / "ray" / "results").iterdir()) == [
        f"arm{a}-seed{s}.json" for a in (0, 1) for s in (0, 1)
    ]
    # the same sweep one trial after another: the same table (each trial is reproducible)
    local = sweeps.sweep_command(
        str(config), ["replay.replay_ratio=2,3"], "0-1", tmp_path / "local", quiet(), **options
    )
    assert rows == local
    assert json.loads((tmp_path / "ray" / "sweep.json").read_text())["rows"] == rows
