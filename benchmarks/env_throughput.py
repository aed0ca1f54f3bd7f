"""Throughput of `satellites_v0` against PettingZoo's `connect_four_v3`, in the same process.

Random legal play through the wrapped AEC envs (`env.last()` + `env.step()` per step, the
loop every PettingZoo user writes), the same wall time for each; then the raw engine's
positions per second (exact legal mask + apply, no env). Prints a table and the ratio.

    python benchmarks/env_throughput.py --seconds 10
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from pettingzoo.classic import connect_four_v3
from rich.console import Console
from rich.progress import track
from rich.table import Table

from satellites_env import satellites_v0
from satellites_env.core.game import Game
from satellites_env.core.rules import apply_unchecked, fill_legal_mask, game_status, new_scratch
from satellites_env.core.state import initial_state


def aec_steps_per_second(make_env, seconds: float, seed: int, label: str) -> tuple[float, int]:
    """Random legal play through an AEC env for `seconds`; (steps/s, finished games)."""
    env = make_env()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = games = 0
    slices = 20
    deadline = time.perf_counter()
    start = deadline
    for _ in track(range(slices), description=f"{label:>16}", transient=True):
        deadline += seconds / slices
        while time.perf_counter() < deadline:
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                games += 1
                env.reset()
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
    return steps / (time.perf_counter() - start), games


def engine_positions_per_second(seconds: float, seed: int) -> tuple[float, int]:
    """Exact legal mask + apply straight on the core kernels (what search and training use)."""
    rng = np.random.default_rng(seed)
    scratch = new_scratch()
    mask = np.zeros(3217, dtype=np.int8)
    state = initial_state(rng)
    positions = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(1000):
            if game_status(state, 400) != 0:
                games += 1
                state = initial_state(rng)
            fill_legal_mask(state, mask, scratch)
            legal = np.flatnonzero(mask)
            apply_unchecked(state, legal[rng.integers(len(legal))], scratch)
            positions += 1
    return positions / (time.perf_counter() - start), games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="wall time per env")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    # Compile (or load from cache) the numba kernels before timing anything.
    warm = Game.new(seed=0)
    warm.legal_mask()
    aec_steps_per_second(satellites_v0.env, 0.5, args.seed, "warm-up")

    ours, our_games = aec_steps_per_second(satellites_v0.env, args.seconds, args.seed,
                                           "satellites_v0")
    peer, peer_games = aec_steps_per_second(connect_four_v3.env, args.seconds, args.seed,
                                            "connect_four_v3")
    engine, engine_games = engine_positions_per_second(args.seconds, args.seed)

    table = Table(title=f"Random legal play, {args.seconds:g} s each, one process")
    table.add_column("what")
    table.add_column("steps/s", justify="right")
    table.add_column("games", justify="right")
    table.add_row("satellites_v0.env() (wrapped AEC)", f"{ours:,.0f}", str(our_games))
    table.add_row("connect_four_v3.env() (wrapped AEC)", f"{peer:,.0f}", str(peer_games))
    table.add_row("satellites core: mask + apply", f"{engine:,.0f}", str(engine_games))
    console = Console()
    console.print(table)
    console.print(f"ratio satellites_v0 / connect_four_v3 = [bold]{ours / peer:.2f}x[/bold]")


if __name__ == "__main__":
    main()
