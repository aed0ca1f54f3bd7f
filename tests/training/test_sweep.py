"""`satellites sweep`: the grid of arms, the table's statistics against a hand computation,
the folder (refusals, a changed command) and a tiny sweep that continues where it stopped."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import yaml

from satellites_env import cli
from satellites_env.arena import wilson_interval
from satellites_env.cli import training as cli_training
from training import sweep as sweeps
from training.sweep import (
    SweepError,
    arm_statistics,
    claim_sweep_folder,
    make_sweep,
    paired_interval,
    parse_seeds,
    parse_set,
    runner,
    t_quantile,
)

sys.path.insert(0, str(Path(__file__).parent / "alphazero"))
from test_az_training import TINY, quiet


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY, "learner": "alphazero"}))
    return path


def tiny_sweep(config_file, sets=(), seeds="0-1", **options):
    options = {"positions": 80, "player": "az:PATH:2", "against": ["random=4"], **options}
    return make_sweep(
        str(config_file),
        list(sets),
        seeds,
        options.pop("positions"),
        options.pop("cpu_minutes", None),
        max_moves=30,
        **options,
    )


def test_the_sets_make_a_grid_whose_first_arm_takes_every_first_value(config_file):
    sweep = tiny_sweep(
        config_file, ["replay.replay_ratio=2,3", "optim.learning_rate=0.001,0.002,4e-3"], "0-4"
    )
    assert [arm.overrides for arm in sweep.arms][:4] == [
        (("replay.replay_ratio", 2), ("optim.learning_rate", 0.001)),
        (("replay.replay_ratio", 2), ("optim.learning_rate", 0.002)),
        (("replay.replay_ratio", 2), ("optim.learning_rate", 0.004)),
        (("replay.replay_ratio", 3), ("optim.learning_rate", 0.001)),
    ]
    assert len(sweep.arms) == 6 and len(sweep.trials()) == 30 and sweep.seeds == [0, 1, 2, 3, 4]
    # seed by seed: the first seed's trials are every arm's
    assert [(arm.index, seed) for arm, seed in sweep.trials()[:7]] == [
        *((k, 0) for k in range(6)),
        (0, 1),
    ]
    config = sweep.trial_config(sweep.arms[4], seed=3)
    assert config.replay.replay_ratio == 3.0 and config.optim.learning_rate == 0.002
    assert config.seed == 3 and config.total_positions == 80 and config.cpu_minutes == 0
    assert set(config.eval.final.values()) == {0}  # the sweep plays the final games itself
    # and the search's final table too
    searched = {**TINY, "learner": "alphazero", "eval": {**TINY["eval"], "search_simulations": 2}}
    searched["eval"]["search_final"] = {"greedy": 4, "random": 2}
    config_file.write_text(yaml.safe_dump(searched))
    config = tiny_sweep(config_file).trial_config(tiny_sweep(config_file).arms[0], 0)
    assert config.eval.search_final == {"greedy": 0, "random": 0}
    # a CPU-time budget: the length is no limit, the CPU minutes are
    timed = tiny_sweep(config_file, positions=None, cpu_minutes=0.5).trial_config(
        tiny_sweep(config_file).arms[0], 0
    )
    assert timed.cpu_minutes == 0.5 and timed.total_positions == 10**12
    # no --set: one arm, the base config
    assert [arm.name for arm in tiny_sweep(config_file).arms] == ["base"]


def test_values_parse_as_yaml_and_lists_keep_their_commas():
    assert parse_set("eval.opponents=[random,greedy],[greedy]") == (
        "eval.opponents",
        [["random", "greedy"], ["greedy"]],
    )
    assert parse_set("model.norm=group,none") == ("model.norm", ["group", "none"])
    assert parse_seeds("0-2") == [0, 1, 2] and parse_seeds(["5,7", "9"]) == [5, 7, 9]


@pytest.mark.parametrize(
    ("sets", "seeds", "message"),
    [
        (["replay.replay_ratioo=2"], "0", "no key 'replay_ratioo' in replay"),
        (["replay=2"], "0", "names a section"),
        (["seed=1,2"], "0", "sets seed itself"),
        (["total_positions=5"], "0", "sets total_positions itself"),
        (["replay.replay_ratio=-1"], "0", r"replay\.replay_ratio must be in \(0, 1000\], got -1"),
        (["replay.replay_ratio=2,2"], "0", "lists a value twice"),
        (["replay.replay_ratio"], "0", "KEY=VALUE"),
        ([], "3-1", "not a range"),
        ([], "0,0", "lists a seed twice"),
        ([], "a", "--seeds expects"),
    ],
)
def test_a_bad_set_or_seed_is_refused_before_anything_runs(config_file, sets, seeds, message):
    with pytest.raises(SweepError, match=message):
        tiny_sweep(config_file, sets, seeds)


def test_bad_budgets_players_and_opponents_are_refused(config_file):
    with pytest.raises(SweepError, match="--positions N or --cpu-minutes M"):
        tiny_sweep(config_file, positions=None)
    with pytest.raises(SweepError, match="--player expects"):
        tiny_sweep(config_file, player="az:final.pt:2")
    with pytest.raises(SweepError, match="--against nosuch"):
        tiny_sweep(config_file, against=["nosuch=4"])
    with pytest.raises(SweepError, match="SPEC=GAMES"):
        tiny_sweep(config_file, against=["greedy"])


def test_the_t_quantile_and_the_paired_interval_match_a_hand_computation():
    # Student t 97.5% quantiles (tables): df 1, 4, 30
    for df, expected in ((1, 12.7062), (4, 2.7764), (30, 2.0423)):
        assert t_quantile(0.975, df) == pytest.approx(expected, abs=2e-4)
    # differences 0.10, 0.00, 0.05, 0.15, 0.05: mean 0.07, sd sqrt(0.0130/4) = 0.0570088
    interval = paired_interval([0.10, 0.00, 0.05, 0.15, 0.05])
    half = 2.7764451 * math.sqrt(0.0130 / 4) / math.sqrt(5)
    assert interval["mean"] == pytest.approx(0.07)
    assert interval["low"] == pytest.approx(0.07 - half, abs=1e-6)
    assert interval["high"] == pytest.approx(0.07 + half, abs=1e-6)
    assert paired_interval([0.2])["low"] is None  # one seed: no interval


def test_the_table_pairs_the_arms_by_seed(config_file):
    sweep = tiny_sweep(config_file, ["replay.replay_ratio=2,3"], "0-2", against=["greedy=10"])
    wins = {(0, 0): 5, (0, 1): 6, (0, 2): 4, (1, 0): 7, (1, 1): 6, (1, 2): 8}
    results = {
        key: {"results": {"greedy": {"games": 10, "wins": w, "draws": 0, "losses": 10 - w}}}
        for key, w in wins.items()
    }
    del results[1, 2]  # an unfinished trial: its arm is compared on the seeds it has
    first, second = arm_statistics(sweep, results)
    assert first["mean"] == pytest.approx(0.5) and first["difference"] is None
    assert first["seeds"] == {"0": 0.5, "1": 0.6, "2": 0.4}
    assert first["wins"] == 15 and first["games"] == 30
    assert first["wilson"] == pytest.approx(list(wilson_interval(15, 30)))
    # differences 0.2, 0.0 over seeds 0 and 1: mean 0.1, sd 0.1414, t(0.975, 1) 12.706
    assert second["mean"] == pytest.approx(0.65)
    difference = second["difference"]
    assert difference["seeds"] == 2 and difference["mean"] == pytest.approx(0.1)
    half = 12.7062 * math.sqrt(0.02) / math.sqrt(2)
    assert difference["high"] == pytest.approx(0.1 + half, abs=1e-3)


def test_the_folder_is_refused_unless_new_empty_or_this_sweeps(config_file, tmp_path):
    sweep = tiny_sweep(config_file)
    out = tmp_path / "sweep"
    claim_sweep_folder(out, sweep.command())
    claim_sweep_folder(out, sweep.command())  # the same command: fine
    changed = tiny_sweep(config_file, seeds="0-2")
    with pytest.raises(SweepError, match=r"another command \(it differs in --seeds\)"):
        claim_sweep_folder(out, changed.command())
    other = tiny_sweep(config_file, ["replay.replay_ratio=3"])
    with pytest.raises(SweepError, match=r"config replay\.replay_ratio|--set"):
        claim_sweep_folder(out, other.command())
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    with pytest.raises(SweepError, match="not a satellites sweep"):
        claim_sweep_folder(mine, sweep.command())
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    (tmp_path / "forged").mkdir()
    (tmp_path / "forged" / "satellites-sweep.json").write_text('{"format": "other"}')
    with pytest.raises(SweepError, match="not a satellites sweep marker"):
        claim_sweep_folder(tmp_path / "forged", sweep.command())


def test_a_tiny_sweep_trains_evaluates_and_continues(config_file, tmp_path, monkeypatch):
    out = tmp_path / "sweep"
    argv = [
        "sweep",
        "--config",
        str(config_file),
        "--set",
        "replay.replay_ratio=2,3",
        "--seeds",
        "0",
        "--positions",
        "80",
        "--player",
        "az:PATH:2",
        "--against",
        "random=4",
        "--max-moves",
        "30",
        "--out",
        str(out),
    ]
    # the entry point as pyproject registers it (an installed copy may predate it)
    monkeypatch.setattr(cli_training, "trainer_command", lambda name: sweeps.sweep_command)
    trained = []
    run_trial = sweeps.run_trial
    monkeypatch.setattr(
        runner,
        "run_trial",
        lambda sweep, arm, seed, *a, **k: (
            trained.append((arm.index, seed)) or run_trial(sweep, arm, seed, *a, **k)
        ),
    )
    monkeypatch.setattr(runner, "Console", lambda **_: quiet())
    assert cli.main(argv) == 0
    assert trained == [(0, 0), (1, 0)]
    summary = json.loads((out / "sweep.json").read_text())
    assert [row["games"] for row in summary["rows"]] == [4, 4]
    assert (out / "sweep.png").stat().st_size > 0
    for name in ("arm0-seed0", "arm1-seed0"):
        assert (out / "trials" / name / "final.pt").exists()
    # the same command again: nothing trained, the same table
    assert cli.main(argv) == 0 and trained == [(0, 0), (1, 0)]
    assert json.loads((out / "sweep.json").read_text())["rows"] == summary["rows"]
    # a lost result: only that trial is evaluated again (its run is finished) and it wins
    # the same games (fixed evaluation games)
    (out / "results" / "arm1-seed0.json").unlink()
    assert cli.main(argv) == 0 and trained[-1] == (1, 0) and len(trained) == 3
    assert json.loads((out / "sweep.json").read_text())["rows"] == summary["rows"]
    # a changed command in the same folder: refused, nothing run
    changed = list(argv)
    changed[changed.index("80")] = "120"
    assert cli.main(changed) == 2 and len(trained) == 3
