"""Throughput of `satellites_v0` against PettingZoo's `connect_four_v3`, in the same process.

Random legal play through the wrapped AEC envs (`env.last()` + `env.step()` per step, the
loop every PettingZoo user writes), then the raw engine's positions per second (exact legal
mask + apply, no env). The envs take turns, one timed slice each per round, and each keeps
its best round (best of `--rounds`), so a busy machine hurts both alike. Prints a table, the
ratio and the load average seen during the run (the machine may be shared).

    python benchmarks/env_throughput.py --seconds 5 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from pettingzoo.classic import connect_four_v3
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from satellites_env import satellites_v0
from satellites_env.core import engine
from satellites_env.core.batch import configure_threads


def aec_round(env, rng: np.random.Generator, seconds: float) -> tuple[float, int]:
    """Random legal play through an AEC env for `seconds`; (steps/s, finished games)."""
    steps = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(100):
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                games += 1
                env.reset()
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        if time.perf_counter() >= deadline:
            return steps / (time.perf_counter() - start), games


def engine_round(rng: np.random.Generator, seconds: float) -> tuple[float, int]:
    """Exact legal mask + apply straight on the engine kernels (what search and training use)."""
    work = engine.new_work()
    mask = np.zeros(3217, dtype=np.int8)
    state = engine.init(rng=rng)
    positions = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(1000):
            if engine.game_status(state, 400) != engine.ONGOING:
                games += 1
                state = engine.init(rng=rng)
            engine.fill_legal_mask(state, mask, work)
            legal = np.flatnonzero(mask)
            engine.apply_unchecked(state, legal[rng.integers(len(legal))], work)
            positions += 1
    return positions / (time.perf_counter() - start), games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per env per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best one counts")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    configure_threads()  # numba's idle threads sleep, as under `satellites`

    envs = {"satellites_v0": satellites_v0.env(), "connect_four_v3": connect_four_v3.env()}
    rngs = {name: np.random.default_rng(args.seed) for name in envs}
    for name, env in envs.items():  # compile (or load) the numba kernels; warm the caches
        env.reset(seed=args.seed)
        aec_round(env, rngs[name], 0.5)
    engine_round(np.random.default_rng(args.seed), 0.5)

    best = {name: (0.0, 0) for name in (*envs, "engine")}
    load_before = os.getloadavg()
    with Progress(transient=True) as progress:
        task = progress.add_task("rounds", total=args.rounds * (len(envs) + 1))
        for round_ in range(args.rounds):
            for name, env in envs.items():
                progress.update(task, description=f"round {round_ + 1}: {name}")
                result = aec_round(env, rngs[name], args.seconds)
                best[name] = max(best[name], result)
                progress.advance(task)
            progress.update(task, description=f"round {round_ + 1}: engine")
            best["engine"] = max(
                best["engine"],
                engine_round(np.random.default_rng(args.seed + round_), args.seconds),
            )
            progress.advance(task)
    load_after = os.getloadavg()

    ours, peer = best["satellites_v0"][0], best["connect_four_v3"][0]
    table = Table(
        title=f"Random legal play: best of {args.rounds} rounds of {args.seconds:g} s, one process"
    )
    table.add_column("what")
    table.add_column("steps/s", justify="right")
    table.add_column("games (best round)", justify="right")
    table.add_row(
        "satellites_v0.env() (wrapped AEC)", f"{ours:,.0f}", str(best["satellites_v0"][1])
    )
    table.add_row(
        "connect_four_v3.env() (wrapped AEC)", f"{peer:,.0f}", str(best["connect_four_v3"][1])
    )
    table.add_row(
        "satellites engine: mask + apply", f"{best['engine'][0]:,.0f}", str(best["engine"][1])
    )
    console = Console()
    console.print(table)
    console.print(f"ratio satellites_v0 / connect_four_v3 = [bold]{ours / peer:.2f}x[/bold]")
    console.print(
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; load average (1 min) {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after"
    )


if __name__ == "__main__":
    main()
