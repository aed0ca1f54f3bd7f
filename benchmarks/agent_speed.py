"""Time per action of the baseline agents on the same positions, in one process.

Positions come from games between two greedy agents (the end phase included); every agent
answers the same positions. Prints ms per action and the ratio to greedy.

    python benchmarks/agent_speed.py --agents greedy mcts:200 --positions 60
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table

from satellites_env.agents import make_agent
from satellites_env.core import Game
from satellites_env.core.batch import configure_threads


def sample_positions(count: int, seed: int) -> list[Game]:
    """Every 3rd position of greedy-vs-greedy games until `count` are collected."""
    positions: list[Game] = []
    game_seed = seed
    while len(positions) < count:
        game = Game.new(seed=game_seed)
        players = (make_agent("greedy", seed=game_seed), make_agent("greedy", seed=game_seed + 1))
        while not game.is_over and len(positions) < count:
            if game.moves % 3 == 0 and game.pending_push is None:
                positions.append(game.clone())
            game.play(players[game.to_move].act(game))
        game_seed += 1
    return positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=["random", "greedy", "mcts:200"])
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    configure_threads()  # numba's idle threads sleep, as under `satellites`
    positions = sample_positions(args.positions, args.seed)
    timings: dict[str, list[float]] = {}
    for spec in args.agents:
        agent = make_agent(spec, seed=args.seed)
        agent.act(positions[0])  # compile / warm up
        times = []
        for game in track(positions, description=f"{spec:>10}", transient=True):
            start = time.perf_counter()
            agent.act(game)
            times.append(time.perf_counter() - start)
        timings[spec] = times
    table = Table(title=f"Time per action over {len(positions)} positions (greedy-vs-greedy games)")
    for column in ("agent", "mean ms", "median ms", "max ms", "vs greedy"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    greedy = np.mean(timings["greedy"]) if "greedy" in timings else None
    for spec, times in timings.items():
        ratio = f"{np.mean(times) / greedy:.0f}x" if greedy else "-"
        table.add_row(
            spec,
            f"{1000 * np.mean(times):.1f}",
            f"{1000 * np.median(times):.1f}",
            f"{1000 * np.max(times):.1f}",
            ratio,
        )
    Console().print(table)


if __name__ == "__main__":
    main()
