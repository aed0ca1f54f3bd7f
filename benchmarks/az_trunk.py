"""Speed of the network's two trunks, GroupNorm against norm-free (`model.norm`), in one process.

    .venv/bin/python benchmarks/az_trunk.py [--config az_quick] [--rounds 6]
        [--threads 2]

Both networks have the config's shape and heads and differ only in `model.norm` (`group`:
GroupNorm after each convolution; `none`: biases and a zero-initialised residual gain). They
run, in alternating rounds on the same inputs, (1) self-play's forward pass: inference at the
batch one generator evaluates (`search.games / distributed.workers`), one torch thread, as in
self-play; (2) a gradient step of the trainer's loss at `replay.batch_size`, `--threads` torch
threads, with a tenth of the positions carrying a policy target (playout caps). The inputs are
positions of random games (the speed does not depend on the weights or the positions). Prints
ms per call of each and the ratio group / none.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from satellites_env.core import engine
from satellites_env.core.batch import configure_threads
from satellites_env.core.board import N_ACTIONS
from satellites_env.observation import observe
from training.alphazero.trainer import policy_value_loss
from training.common.config import load_config
from training.common.network import network_for


def random_positions(n: int, max_moves: int, seed: int = 0) -> dict:
    """Observations and legal masks of `n` positions from random games."""
    rng = np.random.default_rng(seed)
    work = engine.new_work()
    obs, masks = [], []
    while len(obs) < n:
        state = engine.init(rng=rng)
        while engine.status(state) == engine.ONGOING and len(obs) < n:
            mask = engine.legal_action_mask(state, work)
            obs.append(observe(state, engine.current_player(state), max_moves, work))
            masks.append(mask.copy())
            state = engine.step(state, int(rng.choice(np.flatnonzero(mask))), work)
    return {"obs": torch.as_tensor(np.stack(obs)), "mask": torch.as_tensor(np.stack(masks))}


def training_batch(positions: dict, size: int, policy_share: float, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(positions["obs"]), size, replace=False)
    mask = positions["mask"][rows]
    policy = mask.float() / mask.float().sum(1, keepdim=True)
    weight = torch.as_tensor(rng.random(size) < policy_share, dtype=torch.float32)
    return {
        "obs": positions["obs"][rows],
        "mask": mask,
        "policy": policy,
        "value": torch.as_tensor(rng.choice([-1.0, 1.0], size), dtype=torch.float32),
        "policy_weight": weight,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config", default="az_quick", help="a shipped config's name or a YAML path"
    )
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds (first: warm-up)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of the steps")
    args = parser.parse_args()
    configure_threads()  # numba's idle threads sleep, as under `satellites`
    config = load_config(args.config)
    infer_batch = config.search.games // max(1, config.distributed.workers)
    positions = random_positions(
        max(infer_batch, config.replay.batch_size) * 4, config.search.max_moves
    )
    obs = positions["obs"][:infer_batch]
    batch = training_batch(positions, config.replay.batch_size, config.search.full_fraction)
    nets = {
        norm: network_for(dataclasses.replace(config.model, norm=norm), seed=0)
        for norm in ("group", "none")
    }
    optimizers = {norm: torch.optim.AdamW(net.parameters(), lr=1e-4) for norm, net in nets.items()}
    seconds = {norm: {"forward": 0.0, "step": 0.0} for norm in nets}
    calls = {"forward": 50, "step": 10}
    for round_ in tqdm(range(args.rounds), desc="rounds"):
        for norm, net in nets.items():
            torch.set_num_threads(1)
            net.eval()
            with torch.inference_mode():
                tick = time.perf_counter()
                for _ in range(calls["forward"]):
                    net(obs)
                took_forward = time.perf_counter() - tick
            torch.set_num_threads(args.threads)
            net.train()
            tick = time.perf_counter()
            for _ in range(calls["step"]):
                loss, _ = policy_value_loss(net, batch, config.optim.value_coef, entropy=False)
                optimizers[norm].zero_grad(set_to_none=True)
                loss.backward()
                optimizers[norm].step()
            took_step = time.perf_counter() - tick
            if round_:  # the first round warms up (allocations, oneDNN kernels)
                seconds[norm]["forward"] += took_forward
                seconds[norm]["step"] += took_step
    timed = args.rounds - 1
    table = Table(
        title=f"{args.config}: {config.model.channels} x {config.model.blocks}, {N_ACTIONS} actions"
    )
    for column in (
        "trunk",
        f"forward, batch {infer_batch}, 1 thread",
        f"gradient step, batch {config.replay.batch_size}, {args.threads} threads",
    ):
        table.add_column(column, justify="right")
    for norm in nets:
        table.add_row(
            norm,
            *(
                f"{1000 * seconds[norm][part] / (timed * calls[part]):.2f} ms"
                for part in ("forward", "step")
            ),
        )
    table.add_row(
        "group / none",
        *(f"{seconds['group'][part] / seconds['none'][part]:.2f}x" for part in ("forward", "step")),
    )
    Console().print(table)


if __name__ == "__main__":
    main()
