"""Self-play throughput of the generator pool: backend local vs thread vs ray, 1 and 2 workers.

What the trainer does for each update, without the learning step: broadcast the weights, then
`generate(n)` over the workers, with the model and self-play settings of a config.

* `--learner ppo` (default; the quick config): n = `ppo.steps_per_update` learner
  decisions; env steps/s, games/s, learner steps/s; then one PPO update timed;
* `--learner alphazero` (the az_quick config): n = `positions_per_iteration` searched
  positions; positions/s, network evaluations/s, games/s; then one iteration's gradient steps
  timed.

Prints each case with the ratios ray / local or thread / local at the same worker count (Ray's
overhead, or the parallel gain) and each case / local with 1 worker, and the load average of
the machine. The
local cases run with this process's numba threads (`--numba-threads`; by default those the
trainer uses), a Ray actor with its `cpus_per_worker` (1).

    python benchmarks/distributed_selfplay.py --rounds 20
    python benchmarks/distributed_selfplay.py --learner alphazero --rounds 5
    python benchmarks/distributed_selfplay.py --learner alphazero --numba-threads 1 --cases local:1
    python benchmarks/distributed_selfplay.py --learner alphazero --cases local:1 local:2 thread:2
    python benchmarks/distributed_selfplay.py --cases ray:2 --address 127.0.0.1:6380  # a cluster
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from rich.console import Console
from rich.table import Table

from satellites_env.core.batch import configure_threads
from satellites_env.placement import BACKEND_KINDS, Placement
from training.common.config import load_config
from training.common.network import PolicyValueNet
from training.distributed.pool import GeneratorPool
from training.ppo.selfplay import make_generator


@dataclass
class Learner:
    """How one learner's generation is measured: its pool's factory and weights, the work of
    one update (`n`), the games in flight, and the rates reported (column: counter key; the
    first one ranks the repeats; "count" is the batches' sample count)."""

    name: str
    unit: str  # what n counts
    unit_key: str  # the rate that counts it
    n: int
    games: int
    factory: Callable[[int], Callable]  # workers -> the pool's factory
    weights: object
    rates: dict[str, str]
    learning_seconds: Callable[[], float]  # one update's learning step, timed
    learning: str  # what that step is, in words


def ppo_learner(config) -> Learner:
    torch.manual_seed(0)
    net = PolicyValueNet(config.model.channels, config.model.blocks, config.model.lookahead)
    return Learner(
        "ppo",
        "learner steps",
        "count",
        config.ppo.steps_per_update,
        config.selfplay.envs,
        lambda workers: functools.partial(make_generator, config.selfplay, net.shape, workers),
        {"model": net.state_dict(), "pool": [], "pool_version": 0},
        {"env steps/s": "env_steps", "games/s": "games", "learner steps/s": "count"},
        lambda: update_seconds(config),
        f"PPO update ({config.threads} threads)",
    )


def alphazero_learner(config) -> Learner:
    from training.alphazero.generator import make_generator as az_generator
    from training.common.network import network_for

    steps = config.positions_per_iteration * config.replay.replay_ratio / config.replay.batch_size
    net = network_for(config.model, seed=0)
    return Learner(
        "alphazero",
        "positions",
        "positions",
        config.positions_per_iteration,
        config.search.games,
        lambda workers: functools.partial(az_generator, config, net.shape, workers),
        net.state_dict(),
        {"positions/s": "positions", "evaluations/s": "evaluations", "games/s": "games"},
        lambda: az_train_seconds(config),
        f"{steps:.0f} gradient steps ({config.threads} threads)",
    )


def measure(
    learner: Learner, seed: int, backend: str, workers: int, rounds: int, address: str | None
) -> dict:
    """Steady-state throughput of `rounds` updates' worth of generation (after a warm-up)."""
    torch.set_num_threads(1)
    placement = Placement(BACKEND_KINDS[backend], workers, address if backend == "ray" else None)
    with GeneratorPool(learner.factory(workers), placement, seed) as pool:
        # Warm up until as many games ended as are in flight: compiled kernels, started
        # actors, and games of every age in flight (the first ones all start together).
        version, finished = 0, 0
        while finished < learner.games:
            pool.set_weights(learner.weights, version)
            finished += sum(b.counters["games"] for b in pool.generate(learner.n))
            version += 1
        totals = dict.fromkeys(learner.rates.values(), 0)
        start = time.perf_counter()
        for round_ in range(rounds):
            pool.set_weights(learner.weights, version + round_)
            for batch in pool.generate(learner.n):
                for key in totals:
                    totals[key] += batch.count if key == "count" else batch.counters[key]
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
    pool = GeneratorPool(factory, Placement(), config.seed)
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


def numba_threads() -> int:
    import numba

    return numba.get_num_threads()


def az_train_seconds(config, iterations: int = 3) -> float:
    """Seconds of one AlphaZero iteration's gradient steps (positions_per_iteration x
    replay_ratio / batch_size of them) with the config's `threads`, from a buffer of
    self-play positions: the learner's serial part."""
    import numba

    from training.alphazero.trainer import AZTrainer

    with tempfile.TemporaryDirectory() as folder:
        trainer = AZTrainer(config, folder, console=Console(file=open(os.devnull, "w")))
        while len(trainer.buffer) < config.replay.min_positions:
            trainer.iterate()  # self-play (and training once the buffer is full enough)
        trainer.close()
        torch.set_num_threads(config.threads)
        numba.set_num_threads(min(config.threads, numba.config.NUMBA_NUM_THREADS))
        times = []
        for _ in range(iterations + 1):
            start = time.perf_counter()
            trainer.train(config.positions_per_iteration)
            times.append(time.perf_counter() - start)
    return min(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learner", choices=("ppo", "alphazero"), default="ppo")
    parser.add_argument(
        "--config",
        default=None,
        help="a shipped config's name or a YAML path (default: quick for ppo, "
        "az_quick for alphazero)",
    )
    parser.add_argument("--rounds", type=int, default=20, help="measured updates per case")
    parser.add_argument(
        "--cases",
        nargs="+",
        default=["local:1", "ray:1", "local:2", "ray:2"],
        help="BACKEND:WORKERS",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=2,
        help="measure the cases in turn this many times; keep each one's best",
    )
    parser.add_argument(
        "--numba-threads",
        type=int,
        default=None,
        help="numba threads of this process (the local cases); default: as "
        "the trainer (alphazero: the config's threads; ppo: numba's own)",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join for the ray cases (default: a local Ray)",
    )
    args = parser.parse_args()
    configure_threads()  # numba's idle threads sleep, as under `satellites`
    if args.learner == "ppo":
        config = load_config(args.config or "quick")
        learner = ppo_learner(config)
    else:
        config = load_config(args.config or "az_quick")
        learner = alphazero_learner(config)
    console = Console()
    rank = next(iter(learner.rates.values()))
    if args.numba_threads is None and args.learner == "alphazero":
        args.numba_threads = 1  # what AZTrainer sets; a Ray actor has its CPUs
    if args.numba_threads is not None:
        import numba

        numba.set_num_threads(min(args.numba_threads, numba.config.NUMBA_NUM_THREADS))
    started = False
    if any(case.startswith("ray") for case in args.cases):
        from satellites_env.distributed import connect

        started = connect(args.address, 2)  # one Ray for every ray case (start-up not timed)
    results: dict[str, dict] = {}
    for repeat in range(args.repeats):  # alternating: a load that comes and goes hits all
        for case in args.cases:
            backend, _, workers = case.partition(":")
            console.print(
                f"{case} (round {repeat + 1}/{args.repeats}): {args.rounds} updates "
                f"of {learner.n} {learner.unit}, {learner.games} games in flight ..."
            )
            r = measure(learner, config.seed, backend, int(workers), args.rounds, args.address)
            if case not in results or r[rank] > results[case][rank]:
                results[case] = r
    if started:
        import ray

        ray.shutdown()
    load = os.getloadavg()[0]
    table = Table(
        title=f"{learner.name} self-play generation, {args.config.name} "
        f"({learner.games} games in flight, model {config.model.channels}x"
        f"{config.model.blocks}), best of {args.repeats}; load average "
        f"{load:.1f} on {os.cpu_count()} CPUs; local cases: {numba_threads()} "
        f"numba threads"
    )
    for column in ("case", *learner.rates, "vs local same workers", "vs local:1"):
        table.add_column(column, justify="left" if column == "case" else "right")
    base = results.get("local:1")
    for case, r in results.items():
        peer = results.get("local:" + case.partition(":")[2])
        table.add_row(
            case,
            *(
                f"{r[key]:.2f}" if key == "games" else f"{r[key]:,.0f}"
                for key in learner.rates.values()
            ),
            f"{r[rank] / peer[rank]:.2f}x" if peer else "-",
            f"{r[rank] / base[rank]:.2f}x" if base else "-",
        )
    console.print(table)
    update = learner.learning_seconds()
    if base:
        generation = learner.n / base[learner.unit_key]
        share = generation / (generation + update)
        console.print(
            f"One update of {learner.n} {learner.unit}: generation {generation:.2f} s "
            f"(local:1) + {learner.learning} {update:.2f} s. Generation is {share:.0%} of an "
            f"update, so with K workers and no overhead an update takes {generation:.2f}/K + "
            f"{update:.2f} s: at most {1 / (1 - share):.2f}x faster training, however many "
            f"workers (load average {os.getloadavg()[0]:.1f} now)."
        )


if __name__ == "__main__":
    main()
