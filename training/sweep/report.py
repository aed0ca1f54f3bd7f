"""A sweep's table, sweep.json and sweep.png."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from satellites_env.files import (
    open_output,
    write_output,
)

from .grid import Sweep
from .statistics import arm_statistics


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
