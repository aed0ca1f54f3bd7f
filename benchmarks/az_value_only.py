"""Self-play with value-only leaves (the policy heads only where the search reads the logits)
against the peer that asks every leaf for its logits, alternating in one process.

    .venv/bin/python benchmarks/az_value_only.py [--config configs/az_quick.yaml]
        [--positions 3000] [--rounds 3]

Each round plays `--positions` self-play moves with each search in turn, from the same seed,
with the config's network shape (untrained weights) and search, as one generator of the run
plays them: `search.games / distributed.workers` games in flight, one torch and one numba
thread. Prints the milliseconds per searched position and per network row of each, the share
of rows that ran the policy heads, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import numba
import torch

from training.alphazero import load_az_config
from training.alphazero.network import Evaluator, network_for
from training.alphazero.replay import ReplayBuffer
from training.alphazero.selfplay import SelfPlay


def play(selfplay: SelfPlay, evaluate, positions: int, buffer: ReplayBuffer) -> dict:
    search = selfplay.search
    evals, policy, network = search.evaluations, search.policy_evaluations, \
        search.timers["network"]
    start = selfplay.stats.positions
    tick = time.perf_counter()
    selfplay.play(positions, evaluate, buffer)
    wall = time.perf_counter() - tick
    done = selfplay.stats.positions - start
    rows = search.evaluations - evals
    return {"ms per position": 1e3 * wall / done,
            "network ms per position": 1e3 * (search.timers["network"] - network) / done,
            "policy rows": (search.policy_evaluations - policy) / max(rows, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/az_quick.yaml")
    parser.add_argument("--positions", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    run = load_az_config(args.config)
    games = max(1, run.search.games // max(1, run.distributed.workers))
    config = dataclasses.replace(run.search, games=games)
    evaluate = Evaluator(network_for(run.model, seed=0).eval())
    variants = {"value-only leaves (shipped)": SelfPlay(config, seed=0),
                "every leaf's logits (peer)": SelfPlay(config, seed=0, value_only_leaves=False)}
    # each its own buffer, made before any timing (a ring: old positions are overwritten)
    buffers = {name: ReplayBuffer(100_000) for name in variants}
    for name, selfplay in variants.items():
        play(selfplay, evaluate, 200, buffers[name])  # compile / load the kernels, warm up
    results = {name: [] for name in variants}
    for r in range(args.rounds):
        for name, selfplay in variants.items():
            results[name].append(play(selfplay, evaluate, args.positions, buffers[name]))
            print(f"round {r + 1}: {name}: {results[name][-1]['ms per position']:.3f} ms "
                  "per position", flush=True)
    print(f"\n{args.config}: {games} games in flight, {args.positions} positions x "
          f"{args.rounds} rounds, 1 torch / 1 numba thread\n")
    print("| search | ms per position | network ms per position | rows with policy heads |")
    print("| --- | ---: | ---: | ---: |")
    medians = {}
    for name, rounds in results.items():
        medians[name] = {k: statistics.median(x[k] for x in rounds) for k in rounds[0]}
        m = medians[name]
        print(f"| {name} | {m['ms per position']:.3f} | {m['network ms per position']:.3f} | "
              f"{m['policy rows']:.0%} |")
    shipped, peer = (medians[name]["ms per position"] for name in variants)
    print(f"\npeer / shipped: {peer / shipped:.2f}x per position")


if __name__ == "__main__":
    main()
