"""Where a gradient step's time goes, operator by operator, and what a second thread gives.

    PYTHONPATH=. .venv/bin/python benchmarks/az_step_profile.py [--config az_quick]
        [--steps 8] [--rounds 3]

Takes the config's gradient steps as the trainer does (its loss, clipping and fused AdamW on
a channels-last network, `replay.batch_size` positions of random games a step) and prints
(1) the load average, (2) ms a step on the config's `threads`, (3) torch.profiler's top
operators by self CPU time over `--steps` steps, forward and backward, and (4) ms a step on
1 and 2 torch threads, taking turns for `--rounds` rounds (median and best).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from benchmarks.az_phases import random_positions
from training.alphazero import trainer as az_trainer
from training.alphazero.replay import ReplayBuffer, make_batch
from training.common.config import load_config
from training.common.network import network_for, reuse_freed_memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="az_quick")
    parser.add_argument("--steps", type=int, default=8, help="steps per timing and profile")
    parser.add_argument("--rounds", type=int, default=3, help="1- and 2-thread rounds")
    parser.add_argument("--top", type=int, default=15, help="operators listed")
    args = parser.parse_args()
    if min(args.steps, args.rounds, args.top) < 1:
        parser.error("--steps, --rounds and --top must be at least 1")
    reuse_freed_memory()
    run = load_config(args.config)
    replay, optim = run.replay, run.optim
    data = random_positions(max(4 * replay.batch_size, 2000), seed=0)
    buffer = ReplayBuffer(len(data["states"]))
    buffer.add(*(data[k] for k in ("states", "actions", "policy", "value", "policy_weight")))
    rng = np.random.default_rng(0)
    batches = [
        make_batch(
            buffer,
            buffer.sample(replay.batch_size, rng),
            rng.integers(0, 8, size=replay.batch_size),
            run.search.max_moves,
        )
        for _ in range(args.steps)
    ]
    net = network_for(run.model, seed=0).to(memory_format=torch.channels_last).train()
    optimizer = az_trainer.make_optimizer(net, optim)

    def steps(threads: int) -> float:
        torch.set_num_threads(threads)
        tick = time.perf_counter()
        for batch in batches:
            loss, _ = az_trainer.policy_value_loss(net, batch, optim.value_coef, entropy=False)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), optim.max_grad_norm)
            optimizer.step()
        return (time.perf_counter() - tick) / len(batches) * 1e3

    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"OMP_WAIT_POLICY: {os.environ.get('OMP_WAIT_POLICY', 'unset')}")
    steps(run.threads)  # warm up
    print(f"{args.config}: {steps(run.threads):.1f} ms a step on {run.threads} thread(s)")
    torch.set_num_threads(run.threads)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        steps(run.threads)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.top))
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for threads in times:
            times[threads].append(steps(threads))
    for threads, ms in times.items():
        print(
            f"{threads} thread(s): median {np.median(ms):.1f} ms, best {min(ms):.1f} ms a step "
            f"({', '.join(f'{m:.0f}' for m in ms)})"
        )
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
