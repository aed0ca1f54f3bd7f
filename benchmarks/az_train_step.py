"""Speed of one AlphaZero gradient step: the trainer's loss against its peer, in one process.

    .venv/bin/python benchmarks/az_train_step.py [--config configs/az_quick.yaml]
        [--positions 30000] [--steps 40] [--threads 2]

The trainer's `policy_value_loss` sends only the positions with a policy target (full searches:
`search.full_fraction` of a batch with playout caps) through the policy heads; the peer is the
same loss with every position through every head (the loss before that change). Both train
copies of one fresh network on the same batches (a replay buffer filled by `--positions` moves
of self-play with that network), in alternating rounds, and the script prints the ms per step
of each part (batch, forward, backward, optimizer) and the ratio of the totals.
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch
from tqdm import tqdm

from training.alphazero import load_az_config
from training.alphazero.generator import build_selfplay
from training.alphazero.network import Evaluator, network_for
from training.alphazero.replay import ReplayBuffer, make_batch
from training.alphazero.trainer import policy_value_loss

PARTS = ("batch", "forward", "backward", "optimizer")


def every_row_loss(net, batch: dict, value_coef: float, **_) -> tuple[torch.Tensor, dict]:
    """The peer: the same weighted cross-entropy + value MSE, every position through every
    head (rows of policy weight 0 multiply their cross-entropy by 0)."""
    logits, value = net(batch["obs"])
    illegal = batch["mask"] == 0
    log_probs = torch.log_softmax(logits.masked_fill(illegal, float("-inf")), -1)
    per_sample = -(batch["policy"] * log_probs.masked_fill(illegal, 0.0)).sum(-1)
    weight = batch["policy_weight"]
    policy = (per_sample * weight).sum() / weight.sum().clamp(min=1.0)
    return policy + value_coef * torch.mean((value - batch["value"]) ** 2), {}


def timed_step(net, optimizer, loss_fn, buffer, rows, syms, config, seconds: dict) -> None:
    tick = time.perf_counter()
    batch = make_batch(buffer, rows, syms, config.search.max_moves)
    tock = time.perf_counter()
    seconds["batch"] += tock - tick
    loss, _ = loss_fn(net, batch, config.optim.value_coef, entropy=False)
    tick = time.perf_counter()
    seconds["forward"] += tick - tock
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), config.optim.max_grad_norm)
    tock = time.perf_counter()
    seconds["backward"] += tock - tick
    optimizer.step()
    seconds["optimizer"] += time.perf_counter() - tock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/az_quick.yaml")
    parser.add_argument("--positions", type=int, default=30_000,
                        help="self-play moves that fill the replay buffer")
    parser.add_argument("--steps", type=int, default=40, help="timed steps per loss")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    args = parser.parse_args()
    config = load_az_config(args.config)
    torch.set_num_threads(args.threads)
    net = network_for(config.model, seed=0)
    buffer = ReplayBuffer(config.replay.capacity)
    print(f"filling the buffer: {args.positions:,} self-play moves ...")
    build_selfplay(config, 0, config.search.games).play(args.positions, Evaluator(net), buffer)
    if len(buffer) == 0:
        raise SystemExit("no self-play game finished: raise --positions")
    contenders = {"trainer (policy rows only)": policy_value_loss,
                  "peer (every row)": every_row_loss}
    runs = {}
    for name in contenders:
        twin = copy.deepcopy(net).train()
        runs[name] = (twin, torch.optim.AdamW(twin.parameters(), lr=config.optim.learning_rate,
                                              weight_decay=config.optim.weight_decay),
                      dict.fromkeys(PARTS, 0.0))
    rng = np.random.default_rng(0)
    policy_rows = 0
    for step in tqdm(range(args.steps + 3), desc="gradient steps", unit="step"):
        rows = buffer.sample(config.replay.batch_size, rng)
        syms = rng.integers(0, 8, size=len(rows))
        if step >= 3:
            policy_rows += int((buffer.policy_weight[rows] > 0).sum())
        for name, loss_fn in contenders.items():  # the same batch for both, in turn
            twin, optimizer, seconds = runs[name]
            if step == 3:  # the first steps warm up the allocator and the kernels
                seconds.update(dict.fromkeys(PARTS, 0.0))
            timed_step(twin, optimizer, loss_fn, buffer, rows, syms, config, seconds)
    print(f"\n{args.config}: batch {config.replay.batch_size}, {policy_rows / args.steps:.1f} "
          f"policy targets a batch on average, {args.threads} torch threads, {args.steps} steps")
    print("\n| loss | " + " | ".join(PARTS) + " | ms per step |")
    print("| --- |" + " ---: |" * (len(PARTS) + 1))
    totals = {}
    for name, (_, _, seconds) in runs.items():
        totals[name] = sum(seconds.values()) / args.steps
        cells = " | ".join(f"{1000 * seconds[p] / args.steps:.1f}" for p in PARTS)
        print(f"| {name} | {cells} | {1000 * totals[name]:.1f} |")
    trainer, peer = totals.values()
    print(f"\npeer / trainer: {peer / trainer:.2f}x the time of a step")


if __name__ == "__main__":
    main()
