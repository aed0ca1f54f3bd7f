"""How far the first gradient steps move a trained network, at two learning rates.

    .venv/bin/python benchmarks/finetune_drift.py RUN/checkpoint.pt [--network pretrained]
        [--rates 0.002 0.0002] [--steps 8 32 96]

Trains copies of `--network` with the trainer's loss and a fresh AdamW (as a run from
`init` starts) on the replay buffer saved in a run's checkpoint (batches of 256, random
symmetries), and prints, after each number of `--steps`, on the buffer's positions: the
share where the raw policy's most likely action is still the untrained network's, and the
mean value against the untrained network's. An exploiter's first buffer shows how quickly
its one-sided early games pull a good network away from what it played.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from training.alphazero.agent import load_network
from training.alphazero.config import AZOptimConfig
from training.alphazero.replay import ReplayBuffer, make_batch
from training.alphazero.trainer import make_optimizer, policy_value_loss
from training.common.checkpoint import load_checkpoint

BATCH = 256


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a run's checkpoint.pt (its replay buffer is used)")
    parser.add_argument("--network", default="pretrained", help="the network to fine-tune")
    parser.add_argument("--rates", type=float, nargs="+", default=[0.002, 0.0002])
    parser.add_argument("--steps", type=int, nargs="+", default=[8, 32, 96])
    args = parser.parse_args()
    torch.set_num_threads(1)
    payload = load_checkpoint(args.checkpoint)
    buffer = ReplayBuffer(payload["replay"]["capacity"])
    buffer.load_state_dict(payload["replay"])
    n = len(buffer)
    max_moves = payload["config"]["search"]["max_moves"]
    positions = make_batch(buffer, np.arange(n), np.zeros(n, np.int64), max_moves)

    def read(net: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
        net.eval()
        with torch.no_grad():
            logits, value = net.forward_all(positions["obs"], torch.arange(n))
        net.train()
        return logits.masked_fill(positions["mask"] == 0, float("-inf")).argmax(-1), value

    first, value0 = read(load_network(args.network))
    targets = positions["value"]
    print(
        f"{n} positions: {float((targets < 0).float().mean()):.0%} lost, mean value target "
        f"{float(targets.mean()):+.2f}; untrained mean value {float(value0.mean()):+.3f}"
    )
    for rate in args.rates:
        net = load_network(args.network)
        optimizer = make_optimizer(net, AZOptimConfig(learning_rate=rate))
        rng = np.random.default_rng(0)
        for step in range(1, max(args.steps) + 1):
            rows = rng.integers(0, n, BATCH)
            batch = make_batch(buffer, rows, rng.integers(0, 8, BATCH), max_moves)
            loss, _ = policy_value_loss(net, batch, 1.0, entropy=False)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            optimizer.step()
            if step in args.steps:
                action, value = read(net)
                same, mean = float((action == first).float().mean()), float(value.mean())
                print(f"lr {rate:g}, step {step}: same action {same:.1%}, mean value {mean:+.3f}")


if __name__ == "__main__":
    main()
