"""`satellites sweep`: train a grid of config variants over several seeds with one budget,
evaluate every final network on the same games, and compare the variants with paired
intervals.

An *arm* is the base config (a shipped name or a YAML file) with one value for each
`--set KEY=VALUE[,VALUE...]` (a dotted key of the typed config; several `--set` make a grid,
the first arm taking every first value). Each arm trains once per seed of `--seeds`: a
*trial*, a normal run folder `trials/arm<K>-seed<S>/` under the sweep folder, with the same
budget for every trial (`--positions N`: the config's length key; or `--cpu-minutes M`: the
run's `cpu_minutes`, the process's CPU time in training). The trial's own final table is
left out (`eval.final` games set to 0): the sweep plays its own, the same for every trial:
the final network as `--player` (`az:PATH:32` by default, `checkpoint:PATH` for the raw
policy) against each opponent of `--against SPEC=GAMES`, game i on the arena's pairing of
game i at the evaluation seed (`arena.play_pairing_game`: set-up, agent seeds and colours),
whatever the arm or training seed.

The sweep folder holds `satellites-sweep.json` (the command, checked on every rerun: a
changed command is refused), `trials/` (the runs), `results/` (one JSON per evaluated
trial: a rerun skips them and continues an unfinished trial with `--resume`), and at the end
`sweep.json` (every figure of the table) and `sweep.png`. A folder that is not empty and not
a sweep's is refused, nothing in it read or replaced.

Statistics (for each opponent; [`arm_statistics`][training.sweep.arm_statistics]): an arm's
mean is the mean over seeds of each trial's win rate (wins / games, a draw is no win), shown
with each seed's figure and the 95% Wilson interval of the wins of all its games pooled
(the games' binomial noise alone, not the seed-to-seed spread). The difference to the first
arm is paired by seed: d_s = rate(arm, s) - rate(first arm, s) over the seeds both finished,
with the 95% Student t interval mean(d) +- t(0.975, n-1) sd(d) / sqrt(n), which holds the
seed-to-seed spread and the games' noise together (n >= 2).
"""

from .grid import (
    DEFAULT_AGAINST,
    DEFAULT_PLAYER,
    EVAL_SEED,
    OUTPUT_FILES,
    RESERVED,
    SWEEP_FORMAT,
    SWEEP_MARKER,
    Arm,
    Sweep,
    SweepError,
    check_key,
    make_sweep,
    parse_against,
    parse_player,
    parse_seeds,
    parse_set,
    split_values,
)
from .report import plot, print_table, report
from .runner import run_local, run_ray, sweep_command, tune_resources, tune_trial
from .statistics import arm_statistics, paired_interval, t_quantile
from .trials import claim_sweep_folder, load_result, run_trial, save_result, trial_name

__all__ = [
    "DEFAULT_AGAINST",
    "DEFAULT_PLAYER",
    "EVAL_SEED",
    "OUTPUT_FILES",
    "RESERVED",
    "SWEEP_FORMAT",
    "SWEEP_MARKER",
    "Arm",
    "Sweep",
    "SweepError",
    "arm_statistics",
    "check_key",
    "claim_sweep_folder",
    "load_result",
    "make_sweep",
    "paired_interval",
    "parse_against",
    "parse_player",
    "parse_seeds",
    "parse_set",
    "plot",
    "print_table",
    "report",
    "run_local",
    "run_ray",
    "run_trial",
    "save_result",
    "split_values",
    "sweep_command",
    "t_quantile",
    "trial_name",
    "tune_resources",
    "tune_trial",
]
