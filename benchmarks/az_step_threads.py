"""Gradient steps beside the thread backend's idle generator threads, their initializer as
shipped against numba's thread count alone (the one before), in one process.

    .venv/bin/python benchmarks/az_step_threads.py [--config configs/az_quick.yaml] [--pairs 4]
        [--cli-order]

Each round builds the config's trainer (`distributed.backend: thread`), plays three
iterations (the generator threads are then started and idle), times 64 gradient steps of the
trainer's loss on its own buffer with the config's torch threads, and closes the trainer; the
two initializers alternate, so a drift of the machine hits both. `shipped` is
`training.distributed.pool.one_thread_each` (numba and torch on one thread in each generator
thread); `numba only` sets numba's count alone, so each generator thread's first torch
operator starts an OpenMP team whose idle helper stays. Prints each round's ms per step, the
medians and their ratio.

torch is imported before the engine here, unless `--cli-order` imports the `satellites` CLI
(and so the engine) first and then the learners, as `satellites train` does. In that order
the engine has set OMP_WAIT_POLICY=PASSIVE for numba by then, and `training` imports torch
without it (training/__init__.py); torch imported under PASSIVE made the steps about 1.5
times slower with either initializer (docs/alphazero.md, ninth round).
"""

from __future__ import annotations

import sys

if "--cli-order" in sys.argv:
    import satellites_env.cli  # noqa: F401  (the order of `satellites train`'s process:
    import training  # noqa: F401  the CLI, then the learners, which import torch)

import torch  # noqa: E402

import argparse  # noqa: E402
import statistics
import tempfile
import time

import numba
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

import training.distributed.pool as pool
from training.alphazero import load_az_config
from training.alphazero.trainer import AZTrainer

STEPS = 64


def numba_only() -> None:
    """The initializer before one_thread_each: numba's count alone."""
    numba.set_num_threads(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/az_quick.yaml")
    parser.add_argument("--pairs", type=int, default=4, help="alternating pairs of rounds")
    parser.add_argument("--cli-order", action="store_true",
                        help="import the satellites CLI before torch (read before argparse)")
    args = parser.parse_args()
    config = load_az_config(args.config)
    config.distributed.backend = "thread"
    config.replay.min_positions = 1  # steps on whatever three iterations finished
    shipped = pool.one_thread_each
    variants = {"shipped": shipped, "numba only": numba_only}
    times: dict[str, list[float]] = {name: [] for name in variants}
    quiet = Console(file=open("/dev/null", "w"))
    try:
        for _ in tqdm(range(args.pairs), desc="pairs"):
            for name, initializer in variants.items():
                pool.one_thread_each = initializer  # read when the trainer opens its pool
                with tempfile.TemporaryDirectory() as run_dir:
                    trainer = AZTrainer(config, run_dir, console=quiet)
                    try:
                        for _ in range(3):
                            trainer.iterate()
                        torch.set_num_threads(config.threads)
                        new_samples = STEPS * config.replay.batch_size / config.replay.replay_ratio
                        tick = time.perf_counter()
                        trainer.train(new_samples)
                        times[name].append(1000 * (time.perf_counter() - tick) / STEPS)
                    finally:
                        trainer.close()
    finally:
        pool.one_thread_each = shipped
    order = "CLI import order" if args.cli_order else "torch imported first"
    table = Table(title=f"{args.config}, {order}: ms per gradient step (batch "
                        f"{config.replay.batch_size}, {config.threads} torch threads), "
                        f"{config.distributed.workers} idle generator threads")
    table.add_column("initializer")
    for i in range(args.pairs):
        table.add_column(f"round {i + 1}", justify="right")
    table.add_column("median", justify="right")
    for name, values in times.items():
        table.add_row(name, *(f"{v:.1f}" for v in values), f"{statistics.median(values):.1f}")
    ratio = statistics.median(times["numba only"]) / statistics.median(times["shipped"])
    table.add_row("numba only / shipped", *([""] * args.pairs), f"{ratio:.2f}x")
    Console().print(table)


if __name__ == "__main__":
    main()
