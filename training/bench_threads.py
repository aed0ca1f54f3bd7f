"""Median move time of a `checkpoint:PATH` agent with the other core idle and busy.

    python -m training.bench_threads            # the agent's default: one torch thread
    SATELLITES_TORCH_THREADS=2 python -m training.bench_threads   # as before: all cores

The network has the quick config's shape (32 channels, 2 blocks, lookahead prior). "busy"
runs a pure-Python spin loop in a second process for the whole measurement, like a second
trainer, evaluator or test run on a 2-core machine.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from satellites_env.agents import make_agent
from satellites_env.core import Game

from .common.checkpoint import save_checkpoint
from .common.network import PolicyValueNet


def _spin(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def median_move_ms(spec: str, moves: int = 300) -> float:
    agent = make_agent(spec, seed=0)
    game, times = Game.new(seed=0), []
    for _ in range(moves):
        if game.is_over:
            game = Game.new(seed=len(times))
        start = time.perf_counter()
        action = agent.act(game)
        times.append(time.perf_counter() - start)
        game.play(action)
    return statistics.median(times[10:]) * 1000


def main(moves: int = 300) -> None:
    with tempfile.TemporaryDirectory() as folder:
        torch.manual_seed(0)
        net = PolicyValueNet(32, 2, 10.0)
        path = save_checkpoint(Path(folder) / "policy.pt", {"model": net.state_dict(),
                                                            "model_shape": net.shape})
        spec = f"checkpoint:{path}"
        threads = make_agent(spec).threads
        median_move_ms(spec, 20)  # compile and warm up
        for mode in ("idle", "busy"):
            stop = multiprocessing.Event()
            spinner = multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
            if mode == "busy":
                spinner.start()
                time.sleep(0.5)
            try:
                ms = median_move_ms(spec, moves)
            finally:
                stop.set()
                if spinner.is_alive():
                    spinner.join()
            print(f"agent torch threads {threads}, other core {mode}: median move {ms:.2f} ms "
                  f"(load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
