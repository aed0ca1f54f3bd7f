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

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import math
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from satellites_env.arena import wilson_interval
from satellites_env.core.checks import quoted_path
from satellites_env.files import (
    FileKindError,
    check_output,
    make_folders,
    open_output,
    read_input,
    write_output,
)

from .common.config import (
    Config,
    ConfigError,
    config_path,
    flatten,
    load_config,
    parse_yaml,
)
from .common.run import Match

#: the file that marks a folder as a sweep's, and its format
SWEEP_MARKER = "satellites-sweep.json"
SWEEP_FORMAT = {"format": "satellites-sweep", "version": 1}
#: the files the sweep writes at its top (beside trials/, results/ and Ray Tune's tune/)
OUTPUT_FILES = (SWEEP_MARKER, "sweep.json", "sweep.png")
#: the evaluation seed of every trial's games unless --eval-seed says otherwise
EVAL_SEED = 1_000_000
#: the player of the evaluation games unless --player says otherwise
DEFAULT_PLAYER = "az:PATH:32"
#: the opponents (spec -> games) unless --against says otherwise
DEFAULT_AGAINST = {"greedy": 200}
#: keys the sweep sets itself
RESERVED = ("seed", "minutes", "cpu_minutes")


class SweepError(ValueError):
    """A sweep that cannot run as asked (a bad option, a folder that is not a sweep's, a
    command that differs from the folder's)."""


# --------------------------------------------------------------------------- the command


def split_values(text: str) -> list[str]:
    """`4,6` -> ["4", "6"]; commas inside brackets or braces stay (`[random,greedy],[greedy]`
    is two values)."""
    values, depth, current = [], 0, ""
    for char in text:
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        if char == "," and depth == 0:
            values.append(current)
            current = ""
        else:
            current += char
    values.append(current)
    return [value.strip() for value in values]


def parse_set(text: str) -> tuple[str, list[Any]]:
    """`replay.replay_ratio=4,6` -> ("replay.replay_ratio", [4, 6]); each value read as a
    config file reads it (YAML 1.2)."""
    key, sep, values = text.partition("=")
    key = key.strip()
    if not sep or not key or not values.strip():
        raise SweepError(f"--set expects KEY=VALUE[,VALUE...], got {text!r}")
    parsed = []
    for value in split_values(values):
        if not value:
            raise SweepError(f"--set {key}: an empty value in {values!r}")
        try:
            parsed.append(parse_yaml(value, f"--set {key}"))
        except ConfigError as error:
            raise SweepError(str(error)) from None
    if len({json.dumps(v, sort_keys=True) for v in parsed}) != len(parsed):
        raise SweepError(f"--set {key} lists a value twice: {values!r}")
    return key, parsed


def parse_seeds(text: str | list[str]) -> list[int]:
    """`0-4` -> [0, 1, 2, 3, 4]; `0,3,7` or several words -> those seeds (distinct, in
    order)."""
    words = text if isinstance(text, list) else [text]
    seeds: list[int] = []
    for part in (p.strip() for word in words for p in word.split(",")):
        match = re.fullmatch(r"(\d{1,10})(?:-(\d{1,10}))?", part)
        if not match:
            raise SweepError(f"--seeds expects seeds such as 0-4 or 0,1,2, got {part!r}")
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) else low
        if high < low or high >= 2**32 or high - low >= 10_000:
            raise SweepError(f"--seeds: {part!r} is not a range of at most 10,000 seeds")
        seeds += range(low, high + 1)
    if len(set(seeds)) != len(seeds):
        raise SweepError(f"--seeds lists a seed twice: {seeds}")
    return seeds


def parse_against(items: list[str] | None) -> dict[str, int]:
    """`["greedy=200", "mcts:200=50"]` -> {"greedy": 200, "mcts:200": 50}."""
    if not items:
        return dict(DEFAULT_AGAINST)
    against: dict[str, int] = {}
    for item in items:
        spec, sep, games = item.rpartition("=")
        if not sep or not spec or not re.fullmatch(r"\d{1,7}", games) or int(games) < 1:
            raise SweepError(f"--against expects SPEC=GAMES (games >= 1), got {item!r}")
        if spec in against:
            raise SweepError(f"--against names {spec!r} twice")
        against[spec] = int(games)
    return against


@dataclasses.dataclass(frozen=True)
class Arm:
    """One variant of the base config: its overrides (dotted key -> value) and its name."""

    index: int
    overrides: tuple[tuple[str, Any], ...]

    @property
    def name(self) -> str:
        return ", ".join(f"{k}={json.dumps(v)}" for k, v in self.overrides) or "base"


@dataclasses.dataclass
class Sweep:
    """What a sweep command asks for, checked; `command()` is what the folder records."""

    config: str
    base: Config
    sets: list[tuple[str, list[Any]]]
    seeds: list[int]
    positions: int | None
    cpu_minutes: float | None
    player: str
    against: dict[str, int]
    eval_seed: int
    max_moves: int

    @property
    def arms(self) -> list[Arm]:
        keys = [key for key, _ in self.sets]
        grid = itertools.product(*(values for _, values in self.sets))
        return [Arm(k, tuple(zip(keys, values, strict=True))) for k, values in enumerate(grid)]

    def trials(self) -> list[tuple[Arm, int]]:
        """Every (arm, seed), seed by seed: a sweep stopped part way has every arm of the
        seeds it finished, which pair."""
        return [(arm, seed) for seed in self.seeds for arm in self.arms]

    def command(self) -> dict[str, Any]:
        return {
            "config": self.base.to_dict(),
            "set": [[key, values] for key, values in self.sets],
            "seeds": self.seeds,
            "budget": (
                {"positions": self.positions}
                if self.positions is not None
                else {"cpu_minutes": self.cpu_minutes}
            ),
            "player": self.player,
            "against": self.against,
            "eval_seed": self.eval_seed,
            "max_moves": self.max_moves,
        }

    def trial_config(self, arm: Arm, seed: int, backend: str | None = None) -> Config:
        """The checked config of one trial: the base with the arm's overrides, the seed, the
        budget, no final table of its own, and `backend` for self-play when given."""
        data = copy.deepcopy(self.base.to_dict())
        for key, value in arm.overrides:
            _assign(data, key, value)
        data["seed"] = seed
        data["minutes"] = 0.0
        if self.positions is not None:
            data[self.base.TOTAL], data["cpu_minutes"] = self.positions, 0.0
        else:
            data[self.base.TOTAL] = _highest(type(self.base), self.base.TOTAL)
            data["cpu_minutes"] = self.cpu_minutes
        for key in self.base.FINAL_TABLES:  # the sweep plays its own final games instead
            data["eval"][key] = dict.fromkeys(data["eval"][key], 0)
        if backend is not None and data["distributed"]["backend"] == "ray":
            data["distributed"]["backend"], data["distributed"]["address"] = backend, ""
        try:
            return type(self.base).from_dict(data, check_agents=False)
        except ConfigError as error:
            raise SweepError(f"arm {arm.name}: {error}") from None


def _assign(data: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    for part in parts[:-1]:
        data = data[part]
    data[parts[-1]] = value


def _highest(cls: type[Config], key: str) -> int:
    field = next(f for f in dataclasses.fields(cls) if f.name == key)
    return int(field.metadata["high"])


def check_key(base: Config, key: str) -> None:
    """SweepError unless `key` names a setting of the base config (or an entry of one of its
    mappings, such as `eval.final.greedy`) that the sweep does not set itself."""
    if key in RESERVED or key == base.TOTAL:
        raise SweepError(
            f"--set {key}: the sweep sets {key} itself (--seeds, --positions, --cpu-minutes)"
        )
    value: Any = base
    parts = key.split(".")
    for k, part in enumerate(parts):
        if dataclasses.is_dataclass(value):
            if part not in {f.name for f in dataclasses.fields(value)}:
                known = ", ".join(sorted(f.name for f in dataclasses.fields(value)))
                where = ".".join(parts[:k]) or "the config"
                raise SweepError(f"--set {key}: no key {part!r} in {where} (known: {known})")
            value = getattr(value, part)
        elif isinstance(value, dict) and k == len(parts) - 1:
            return
        else:
            raise SweepError(f"--set {key}: {'.'.join(parts[:k])} is not a section")
    if dataclasses.is_dataclass(value):
        raise SweepError(f"--set {key} names a section; set one of its keys")


def parse_player(spec: str, learner: str) -> int | None:
    """The search simulations of `az:PATH:N`, or None for `checkpoint:PATH` (the raw
    policy); PATH stands for each trial's final network."""
    if spec == "checkpoint:PATH":
        return None
    match = re.fullmatch(r"az:PATH:(\d{1,4})", spec)
    if match and 1 <= int(match.group(1)) <= 1024 and learner == "alphazero":
        return int(match.group(1))
    raise SweepError(
        f"--player expects checkpoint:PATH (the raw policy) or, for an AlphaZero config, "
        f"az:PATH:N with N from 1 to 1024 (PATH: each trial's final network), got {spec!r}"
    )


def make_sweep(
    config: str,
    sets: list[str],
    seeds: str | list[str],
    positions: int | None,
    cpu_minutes: float | None,
    player: str = DEFAULT_PLAYER,
    against: list[str] | None = None,
    eval_seed: int = EVAL_SEED,
    max_moves: int = 400,
) -> Sweep:
    """A checked sweep: every arm's config built and checked, the opponents built once."""
    from satellites_env.agents import make_agent

    if (positions is None) == (cpu_minutes is None):
        raise SweepError("give the trials' budget: --positions N or --cpu-minutes M (one)")
    base = load_config(config)
    parsed = [parse_set(text) for text in sets]
    keys = [key for key, _ in parsed]
    if len(set(keys)) != len(keys):
        raise SweepError(f"--set names a key twice: {keys}")
    for key in keys:
        check_key(base, key)
    parse_player(player, base.learner)
    opponents = parse_against(against)
    for spec in opponents:
        try:
            make_agent(spec, seed=0)
        except ValueError as error:
            raise SweepError(f"--against {spec}: {error}") from None
    sweep = Sweep(
        str(config),
        base,
        parsed,
        parse_seeds(seeds),
        positions,
        cpu_minutes,
        player,
        opponents,
        eval_seed,
        max_moves,
    )
    if len(sweep.arms) * len(sweep.seeds) > 10_000:
        raise SweepError(f"{len(sweep.arms)} arms x {len(sweep.seeds)} seeds: too many trials")
    for arm in sweep.arms:
        sweep.trial_config(arm, sweep.seeds[0])  # a bad value: said before anything runs
    return sweep


# --------------------------------------------------------------------------- the folder


def claim_sweep_folder(out: Path, command: dict[str, Any]) -> None:
    """Make `out` the folder of this sweep: new or empty (then marked), or marked by the same
    command. SweepError for a file, a folder that is not a sweep's, or another command's."""
    name = quoted_path(out)
    marker = out / SWEEP_MARKER
    try:
        if out.exists() and not out.is_dir():
            raise SweepError(f"--out {name} is a file, not a folder")
        for file in OUTPUT_FILES:
            check_output(out / file, "sweep file")
        if out.is_dir() and marker.exists():
            try:
                data = json.loads(read_input(marker, 1 << 22, "sweep marker"))
            except (ValueError, FileKindError) as error:
                raise SweepError(
                    f"{quoted_path(marker)} is not a satellites sweep marker "
                    f"({str(error)[:120]}); choose another --out folder"
                ) from None
            if not (isinstance(data, dict) and data.get("format") == SWEEP_FORMAT["format"]):
                raise SweepError(
                    f"{quoted_path(marker)} is not a satellites sweep marker; choose "
                    f"another --out folder"
                )
            if data.get("command") != command:
                raise SweepError(
                    f"--out {name} holds a sweep of another command (it differs in "
                    f"{', '.join(_changed(data.get('command'), command)) or 'its format'}"
                    f"); rerun that sweep's command to continue it, or give another --out "
                    f"folder"
                )
            return
        if out.is_dir() and any(os.scandir(out)):
            listed = ", ".join(sorted(e.name for e in os.scandir(out))[:3])
            raise SweepError(
                f"--out {name} holds files that are not a satellites sweep ({listed}) and "
                f"no {SWEEP_MARKER}; nothing in it is read or replaced: give a new or "
                f"empty folder"
            )
        make_folders(out)
        write_output(
            marker, json.dumps({**SWEEP_FORMAT, "command": command}, indent=1), "sweep marker"
        )
    except FileKindError as error:
        raise SweepError(str(error)) from None
    except OSError as error:
        raise SweepError(
            f"--out {name} cannot be used: {error.strerror or type(error).__name__}"
        ) from None


def _changed(old: Any, new: dict[str, Any]) -> list[str]:
    """The top keys of the command that differ (the config's as config.KEY)."""
    if not isinstance(old, dict):
        return []
    changed = []
    for key in new:
        if key == "config" and isinstance(old.get("config"), dict):
            before, after = flatten(old["config"]), flatten(new["config"])
            changed += [
                f"config {k}"
                for k in sorted(before.keys() | after.keys())
                if before.get(k) != after.get(k)
            ][:5]
        elif old.get(key) != new[key]:
            changed.append(f"--{key.replace('_', '-')}" if key != "budget" else "the budget")
    return changed


def trial_name(arm: Arm, seed: int) -> str:
    return f"arm{arm.index}-seed{seed}"


# --------------------------------------------------------------------------- one trial


def run_trial(
    sweep: Sweep,
    arm: Arm,
    seed: int,
    out: Path,
    console: Console,
    backend: str | None = None,
) -> dict[str, Any]:
    """Train one trial into its run folder (continuing it when it is there), play its
    evaluation games, and return (and save in results/) its result."""
    from .train import run

    config = sweep.trial_config(arm, seed, backend)
    name = trial_name(arm, seed)
    run_dir = out / "trials" / name
    resume = (run_dir / "checkpoint.pt").exists()
    tick = time.perf_counter()
    trainer = run(config, config_path(sweep.config), run_dir, resume, console)
    try:
        simulations = parse_player(sweep.player, config.learner)
        if simulations is None:
            player = trainer.players(False)[0]
        else:
            player = trainer.search_player(simulations)  # type: ignore[attr-defined]
        matches: list[Match] = [
            (player, spec, sweep.eval_seed, games, sweep.eval_seed)
            for spec, games in sweep.against.items()
        ]
        console.print(f"{name}: evaluating {sweep.player} ({arm.name}) ...")
        played = trainer.play_matches(matches, sweep.max_moves)
    finally:
        trainer.close()
    results = {}
    for (_, spec, *_), games in zip(matches, played, strict=True):
        pair = trainer.pair_result(player, spec, games)
        results[spec] = {
            "games": pair.games,
            "wins": pair.a_wins,
            "draws": pair.draws,
            "losses": pair.b_wins,
        }
    counters = trainer.counters
    result = {
        "arm": arm.index,
        "seed": seed,
        "results": results,
        "progress": trainer.progress,
        "unit": trainer.UNIT,
        "train_seconds": counters.seconds,
        "train_cpu_seconds": counters.cpu_seconds,
        "seconds": time.perf_counter() - tick,
    }
    save_result(out, name, result)
    return result


def save_result(out: Path, name: str, result: dict[str, Any]) -> None:
    make_folders(out / "results")
    write_output(out / "results" / f"{name}.json", json.dumps(result, indent=1), "trial result")


def load_result(out: Path, name: str, sweep: Sweep) -> dict[str, Any] | None:
    """A trial's saved result (None when it has none yet); SweepError when it is damaged."""
    path = out / "results" / f"{name}.json"
    if not path.exists():
        return None
    try:
        data = json.loads(read_input(path, 1 << 20, "trial result"))
        results = data["results"]
        if set(results) != set(sweep.against):
            raise ValueError("its opponents are not the sweep's")
        for spec, r in results.items():
            counts = [r[k] for k in ("games", "wins", "draws", "losses")]
            if not all(type(c) is int and c >= 0 for c in counts) or (
                counts[0] != sum(counts[1:]) or counts[0] != sweep.against[spec]
            ):
                raise ValueError(f"its counts against {spec} do not add up")
        return dict(data)
    except (ValueError, KeyError, TypeError, OSError) as error:
        raise SweepError(
            f"trial result {quoted_path(path)} is damaged ({str(error)[:100]}); delete it "
            f"to play the trial's evaluation again"
        ) from None


# --------------------------------------------------------------------------- statistics


def t_quantile(p: float, df: int) -> float:
    """The p-quantile (p > 0.5) of Student's t distribution with `df` degrees of freedom,
    by bisection on its CDF (Simpson's rule on the density)."""

    def density(x: float) -> float:
        return math.exp(
            math.lgamma((df + 1) / 2)
            - math.lgamma(df / 2)
            - 0.5 * math.log(df * math.pi)
            - (df + 1) / 2 * math.log1p(x * x / df)
        )

    def cdf(x: float, steps: int = 2000) -> float:
        h = x / steps
        total = density(0.0) + density(x)
        total += sum((4 if k % 2 else 2) * density(k * h) for k in range(1, steps))
        return 0.5 + total * h / 3

    low, high = 0.0, 1.0
    while cdf(high) < p:
        low, high = high, high * 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if cdf(middle) < p else (low, middle)
    return (low + high) / 2


def paired_interval(differences: list[float], level: float = 0.95) -> dict[str, Any]:
    """Mean of the per-seed differences with its Student t interval (None below 2 seeds)."""
    n = len(differences)
    mean = sum(differences) / n if n else math.nan
    if n < 2:
        return {"mean": mean if n else None, "low": None, "high": None, "seeds": n}
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1))
    half = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return {"mean": mean, "low": mean - half, "high": mean + half, "seeds": n}


def arm_statistics(
    sweep: Sweep, results: dict[tuple[int, int], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per arm and opponent: per-seed win rates, their mean, the pooled Wilson interval and
    the paired difference to the first arm (see the module docstring)."""
    rows = []
    for arm in sweep.arms:
        for spec in sweep.against:
            per_seed = {
                seed: results[arm.index, seed]["results"][spec]
                for seed in sweep.seeds
                if (arm.index, seed) in results
            }
            rates = {seed: r["wins"] / r["games"] for seed, r in per_seed.items()}
            wins = sum(r["wins"] for r in per_seed.values())
            games = sum(r["games"] for r in per_seed.values())
            low, high = wilson_interval(wins, games)
            first = {
                seed: results[0, seed]["results"][spec] for seed in rates if (0, seed) in results
            }
            differences = [rates[s] - r["wins"] / r["games"] for s, r in first.items()]
            rows.append(
                {
                    "arm": arm.index,
                    "name": arm.name,
                    "opponent": spec,
                    "seeds": {str(seed): rate for seed, rate in rates.items()},
                    "mean": sum(rates.values()) / len(rates) if rates else None,
                    "wins": wins,
                    "games": games,
                    "wilson": [low, high] if games else None,
                    "difference": None if arm.index == 0 else paired_interval(differences),
                }
            )
    return rows


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f}"


def print_table(sweep: Sweep, rows: list[dict[str, Any]], console: Console) -> None:
    budget = (
        f"{sweep.positions:,} {sweep.base.TOTAL.removeprefix('total_')}"
        if sweep.positions is not None
        else f"{sweep.cpu_minutes:g} CPU minutes"
    )
    table = Table(
        title=f"{sweep.player} after {budget} per trial, seeds "
        f"{', '.join(map(str, sweep.seeds))} (evaluation seed {sweep.eval_seed})"
    )
    for column in ("arm", "opponent", "mean", "per seed", "pooled 95% Wilson", "vs arm 0 [95%]"):
        table.add_column(column, justify="left" if column in ("arm", "opponent") else "right")
    for row in rows:
        difference = row["difference"]
        if difference is None:
            versus = ""
        elif difference["low"] is None:
            versus = f"{_signed(difference['mean'])} pts (1 seed: no interval)"
        else:
            versus = (
                f"{_signed(difference['mean'])} [{_signed(difference['low'])}, "
                f"{_signed(difference['high'])}] pts"
            )
        wilson = row["wilson"]
        table.add_row(
            f"{row['arm']}: {row['name']}",
            f"{row['opponent']} ({row['games']} games)",
            _percent(row["mean"]),
            " ".join(f"{rate:.0%}" for rate in row["seeds"].values()),
            f"[{wilson[0]:.1%}, {wilson[1]:.1%}]" if wilson else "-",
            versus,
        )
    console.print(table)


def plot(sweep: Sweep, rows: list[dict[str, Any]], path: Path) -> None:
    """sweep.png: per opponent, each arm's per-seed win rates and mean with its pooled
    Wilson interval (left), and its paired difference to arm 0 with the t interval (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    opponents = list(sweep.against)
    figure, axes = plt.subplots(
        len(opponents),
        2,
        figsize=(11, 1.2 + 0.5 * len(sweep.arms) * len(opponents) + 2),
        squeeze=False,
    )
    labels = [f"{arm.index}: {arm.name}"[:60] for arm in sweep.arms]
    for (rate_axis, diff_axis), spec in zip(axes, opponents, strict=True):
        mine = [row for row in rows if row["opponent"] == spec]
        for y, row in enumerate(mine):
            rate_axis.scatter(list(row["seeds"].values()), [y] * len(row["seeds"]), alpha=0.5)
            if row["mean"] is not None:
                low, high = row["wilson"]
                rate_axis.errorbar(
                    row["mean"],
                    y,
                    xerr=[[row["mean"] - low], [high - row["mean"]]],
                    fmt="D",
                    color="black",
                    capsize=4,
                )
            difference = row["difference"]
            if difference and difference["low"] is not None:
                mean = difference["mean"]
                diff_axis.errorbar(
                    mean,
                    y,
                    xerr=[[mean - difference["low"]], [difference["high"] - mean]],
                    fmt="o",
                    color="tab:blue",
                    capsize=4,
                )
        for axis in (rate_axis, diff_axis):
            axis.set_yticks(range(len(labels)), labels)
            axis.invert_yaxis()
        diff_axis.axvline(0, color="grey", linewidth=0.8, linestyle="--")
        rate_axis.set(xlabel=f"win rate vs {spec}", title="per seed (dots), mean, pooled 95%")
        diff_axis.set(xlabel="difference to arm 0", title="paired by seed, 95% t interval")
        diff_axis.tick_params(labelleft=False)
    figure.tight_layout()
    with open_output(path, "sweep plot") as file:
        figure.savefig(file, dpi=110, format="png")
    plt.close(figure)


def report(
    sweep: Sweep, results: dict[tuple[int, int], dict[str, Any]], out: Path, console: Console
) -> list[dict[str, Any]]:
    """Print the table, save sweep.json and sweep.png; returns the table's rows."""
    rows = arm_statistics(sweep, results)
    print_table(sweep, rows, console)
    summary = {
        "command": sweep.command() | {"config_name": sweep.config},
        "arms": [{"index": a.index, "name": a.name, "set": dict(a.overrides)} for a in sweep.arms],
        "rows": rows,
        "trials": [results[key] for key in sorted(results)],
    }
    write_output(out / "sweep.json", json.dumps(summary, indent=1), "sweep file")
    plot(sweep, rows, out / "sweep.png")
    console.print(f"table: {out / 'sweep.json'}; plot: {out / 'sweep.png'}")
    return rows


# --------------------------------------------------------------------------- back ends


def run_local(
    sweep: Sweep,
    todo: list[tuple[Arm, int]],
    out: Path,
    console: Console,
    keep: Callable[[tuple[int, int], dict[str, Any]], None],
) -> None:
    """The trials one after another, a bar over them above each trial's own bar."""
    columns = (
        TextColumn("[bold]trials"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("trials", total=len(todo), status="")
        for k, (arm, seed) in enumerate(todo):
            progress.update(task, status=f"{trial_name(arm, seed)}: {arm.name}")
            if not console.is_terminal:
                console.print(f"trial {k + 1} of {len(todo)}: {trial_name(arm, seed)} ({arm.name})")
            keep((arm.index, seed), run_trial(sweep, arm, seed, out, console))
            progress.advance(task)


def tune_trial(settings: dict[str, Any]) -> None:
    """A Ray Tune trainable: one trial, its result reported as JSON."""
    from ray import tune

    sweep, out = settings["sweep"], Path(settings["out"])
    arm = sweep.arms[settings["arm"]]
    console = Console(force_terminal=False)
    result = run_trial(sweep, arm, settings["seed"], out, console, backend="thread")
    tune.report({"result": json.dumps(result)})


def tune_resources(config: Config) -> dict[str, float]:
    """What a trial of `config` asks Ray Tune for: the cores it uses, its gradient threads
    or its generators (playing side by side), the more."""
    return {"cpu": max(config.threads, config.distributed.workers)}


def run_ray(
    sweep: Sweep,
    todo: list[tuple[Arm, int]],
    out: Path,
    address: str,
    console: Console,
    keep: Callable[[tuple[int, int], dict[str, Any]], None],
) -> None:
    """The trials as Ray Tune trials, each asking for the cores its config uses; the results
    come back through Tune (the trials' run folders stay where they ran)."""
    from satellites_env.distributed import connect, import_ray

    import_ray()
    from ray import tune

    started = connect(address or None)
    sigint = signal.getsignal(signal.SIGINT)  # Tune installs its own and leaves it
    try:
        for arm in sweep.arms:  # one resource request per arm
            need = tune_resources(sweep.trial_config(arm, sweep.seeds[0], "thread"))
            todo_arm = [seed for a, seed in todo if a.index == arm.index]
            if not todo_arm:
                continue
            tuner = tune.Tuner(
                tune.with_resources(tune_trial, need),
                param_space={
                    "sweep": sweep,
                    "out": str(out.absolute()),
                    "arm": arm.index,
                    "seed": tune.grid_search(todo_arm),
                },
                run_config=tune.RunConfig(
                    name=f"arm{arm.index}",
                    storage_path=str((out / "tune").absolute()),
                    verbose=0,
                ),
            )
            console.print(
                f"arm {arm.index} ({arm.name}): {len(todo_arm)} Ray Tune trials, "
                f"{need['cpu']:g} CPUs each"
            )
            grid = tuner.fit()
            for k in range(len(grid)):
                trial = grid[k]
                metrics = trial.metrics or {}
                if trial.error is not None or "result" not in metrics:
                    raise SweepError(
                        f"a Ray Tune trial of arm {arm.index} failed: {str(trial.error)[:500]}"
                    )
                result = json.loads(metrics["result"])
                save_result(out, trial_name(arm, result["seed"]), result)
                keep((arm.index, result["seed"]), result)
    finally:
        signal.signal(signal.SIGINT, sigint)
        if started:
            import ray

            ray.shutdown()


# --------------------------------------------------------------------------- the command


def sweep_command(
    config: str,
    sets: list[str],
    seeds: str | list[str],
    out: Path,
    console: Console,
    positions: int | None = None,
    cpu_minutes: float | None = None,
    player: str = DEFAULT_PLAYER,
    against: list[str] | None = None,
    eval_seed: int = EVAL_SEED,
    max_moves: int = 400,
    ray: str | None = None,
) -> list[dict[str, Any]]:
    """`satellites sweep`: check everything, claim `out`, run the trials that have no
    result yet (one after another, or on Ray Tune with `ray`), then print and save the table;
    returns its rows."""
    sweep = make_sweep(
        config, sets, seeds, positions, cpu_minutes, player, against, eval_seed, max_moves
    )
    out = Path(out)
    claim_sweep_folder(out, sweep.command())
    results: dict[tuple[int, int], dict[str, Any]] = {}
    todo = []
    for arm, seed in sweep.trials():
        saved = load_result(out, trial_name(arm, seed), sweep)
        if saved is None:
            todo.append((arm, seed))
        else:
            results[arm.index, seed] = saved
    console.print(
        f"sweep: {len(sweep.arms)} arms x {len(sweep.seeds)} seeds into {out}/ "
        f"({len(results)} trials done, {len(todo)} to run)"
    )

    def keep(key: tuple[int, int], result: dict[str, Any]) -> None:
        results[key] = result

    if todo and ray is not None:
        run_ray(sweep, todo, out, ray, console, keep)
    elif todo:
        run_local(sweep, todo, out, console, keep)
    return report(sweep, results, out, console)
