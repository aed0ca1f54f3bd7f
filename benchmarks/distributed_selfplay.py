"""Self-play throughput of the generator pool: backend local vs ray, 1 and 2 workers.

What the trainer does for each update, without the PPO step: broadcast the weights, then
`generate(steps_per_update)` over the workers, with the model and self-play settings of a
config (configs/quick.yaml by default). Prints env steps/s, games/s and learner steps/s per
case, and the ratios: ray / local at the same worker count (Ray's overhead, or its parallel
gain), and each case / local with 1 worker.

    python benchmarks/distributed_selfplay.py --rounds 20
    python benchmarks/distributed_selfplay.py --cases ray:2 --address 127.0.0.1:6380  # a cluster
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from training.common.config import load_config
from training.common.network import PolicyValueNet
from training.distributed.pool import GeneratorPool
from training.ppo.selfplay import make_generator

ROOT = Path(__file__).resolve().parents[1]


def measure(config, backend: str, workers: int, rounds: int, address: str | None) -> dict:
    """Steady-state throughput of `rounds` updates' worth of generation (after a warm-up)."""
    torch.manual_seed(0)
    net = PolicyValueNet(config.model.channels, config.model.blocks, config.model.lookahead)
    weights = {"model": net.state_dict(), "pool": [], "pool_version": 0}
    factory = functools.partial(make_generator, config.selfplay, net.shape, workers)
    torch.set_num_threads(1)
    with GeneratorPool(factory, workers, config.seed, backend=backend, address=address) as pool:
        # Warm up until as many games ended as are in flight: compiled kernels, started
        # actors, and games of every age in flight (the first ones all start together).
        version, finished = 0, 0
        while finished < config.selfplay.envs:
            pool.set_weights(weights, version)
            finished += sum(b.counters["games"] for b in pool.generate(
                config.ppo.steps_per_update))
            version += 1
        totals = {"env_steps": 0, "games": 0, "learner_steps": 0}
        start = time.perf_counter()
        for round_ in range(rounds):
            pool.set_weights(weights, version + round_)
            batches = pool.generate(config.ppo.steps_per_update)
            totals["env_steps"] += sum(b.counters["env_steps"] for b in batches)
            totals["games"] += sum(b.counters["games"] for b in batches)
            totals["learner_steps"] += sum(b.count for b in batches)
        seconds = time.perf_counter() - start
    return {key: value / seconds for key, value in totals.items()} | {"seconds": seconds}


def update_seconds(config, updates: int = 3) -> float:
    """Seconds of one PPO update (GAE + epochs) of `steps_per_update` decisions, with the
    config's `threads`: the learner's serial part, which more workers do not shorten."""
    from training.ppo.update import build_batch, ppo_update

    torch.manual_seed(0)
    net = PolicyValueNet(config.model.channels, config.model.blocks, config.model.lookahead)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.ppo.learning_rate)
    factory = functools.partial(make_generator, config.selfplay, net.shape, 1)
    pool = GeneratorPool(factory, 1, config.seed)
    pool.set_weights({"model": net.state_dict(), "pool": [], "pool_version": 0}, 0)
    generator = torch.Generator().manual_seed(0)
    times = []
    for _ in range(updates + 1):
        torch.set_num_threads(1)
        segments = [t for b in pool.generate(config.ppo.steps_per_update) for t in b.samples]
        torch.set_num_threads(config.threads)
        start = time.perf_counter()
        batch = build_batch(net, segments, config.ppo, config.selfplay.shaping)
        ppo_update(net, optimizer, batch, config.ppo, generator)
        times.append(time.perf_counter() - start)
    return min(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "quick.yaml")
    parser.add_argument("--rounds", type=int, default=20, help="measured updates per case")
    parser.add_argument("--cases", nargs="+", default=["local:1", "ray:1", "local:2", "ray:2"],
                        help="BACKEND:WORKERS")
    parser.add_argument("--repeats", type=int, default=2,
                        help="measure the cases in turn this many times; keep each one's best")
    parser.add_argument("--address", default=None,
                        help="Ray cluster to join for the ray cases (default: a local Ray)")
    args = parser.parse_args()
    config = load_config(args.config)
    console = Console()
    started = False
    if any(case.startswith("ray") for case in args.cases):
        from satellites_env.distributed import connect

        started = connect(args.address, 2)  # one Ray for every ray case (start-up not timed)
    results: dict[str, dict] = {}
    for repeat in range(args.repeats):  # alternating: a load that comes and goes hits all
        for case in args.cases:
            backend, _, workers = case.partition(":")
            console.print(f"{case} (round {repeat + 1}/{args.repeats}): {args.rounds} updates "
                          f"of {config.ppo.steps_per_update} learner steps, "
                          f"{config.selfplay.envs} games in flight ...")
            r = measure(config, backend, int(workers), args.rounds, args.address)
            if case not in results or r["env_steps"] > results[case]["env_steps"]:
                results[case] = r
    if started:
        import ray

        ray.shutdown()
    load = os.getloadavg()[0]
    table = Table(title=f"Self-play generation, {args.config.name} ({config.selfplay.envs} "
                        f"games in flight, model {config.model.channels}x{config.model.blocks}), "
                        f"best of {args.repeats}; load average {load:.1f} on {os.cpu_count()} "
                        f"CPUs")
    for column in ("case", "env steps/s", "games/s", "learner steps/s", "vs local same workers",
                   "vs local:1"):
        table.add_column(column, justify="left" if column == "case" else "right")
    base = results.get("local:1")
    for case, r in results.items():
        peer = results.get("local:" + case.partition(":")[2])
        table.add_row(case, f"{r['env_steps']:.0f}", f"{r['games']:.2f}",
                      f"{r['learner_steps']:.0f}",
                      f"{r['env_steps'] / peer['env_steps']:.2f}x" if peer else "-",
                      f"{r['env_steps'] / base['env_steps']:.2f}x" if base else "-")
    console.print(table)
    update = update_seconds(config)
    if base:
        generation = config.ppo.steps_per_update / base["learner_steps"]
        share = generation / (generation + update)
        console.print(
            f"One update of {config.ppo.steps_per_update} decisions: generation {generation:.2f} s "
            f"(local:1) + PPO update {update:.2f} s ({config.threads} threads). Generation is "
            f"{share:.0%} of an update, so with K workers and no overhead an update takes "
            f"{generation:.2f}/K + {update:.2f} s: at most {1 / (1 - share):.2f}x faster "
            f"training, however many workers.")


if __name__ == "__main__":
    main()
