"""A sweep's statistics: each arm's mean and pooled Wilson interval, and its difference to
the first arm paired by seed with a Student t interval."""

from __future__ import annotations

import math
from typing import Any

from satellites_env.arena import wilson_interval

from .grid import Sweep


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
