"""Where an AlphaZero run's time goes, phase by phase, against the machine's own peak.

    PYTHONPATH=. .venv/bin/python benchmarks/az_phases.py [--configs az_quick az_standard]
        [--steps 150] [--train-steps 16] [--bf16-size 512]

For each config's network (a fresh one: speed does not depend on the weights) it times the
phases of one training iteration (`positions_per_iteration` searched moves, then the
gradient steps the replay ratio asks for them) and prints, per phase, its seconds in that
iteration, its share, and its achieved rate against the peak measured in the same process:
a 2048x2048 fp32 matmul and a bf16 matmul (`--bf16-size`: on a CPU without native bf16 the
2048 one takes minutes), with the same number of torch threads as the phase.

- self-play forward: the search's batched network calls (1 torch thread, as in the run);
- tree and engine: the numba search kernels between them;
- batch assembly and augmentation: replay sampling and `make_batch` (the 8 symmetries);
- gradient step: the loss's forward and backward (the config's `threads`);
- optimizer step: gradient clipping and the optimizer.

FLOPs of the network phases are counted by `torch.utils.flop_counter.FlopCounterMode`
(convolutions and matrix products: the elementwise work is not counted), per self-play call
from the rows evaluated and the rows whose policy heads ran. The optimizer's are counted by
hand, 15 per parameter (clipping's norm and scale, AdamW's moments, decay and update).
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from satellites_env.core import engine
from satellites_env.core.batch import configure_threads
from training.alphazero import trainer as az_trainer
from training.alphazero.replay import ReplayBuffer, make_batch
from training.alphazero.search import SLOTS
from training.alphazero.selfplay import SelfPlay
from training.common.config import load_config
from training.common.network import BatchedInference, network_for

OPTIMIZER_FLOPS_PER_PARAMETER = 15


def _best_seconds(function, repeats: int) -> float:
    function()
    best = float("inf")
    for _ in range(repeats):
        tick = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - tick)
    return best


def matmul_peak(threads: int, size: int, dtype: torch.dtype, repeats: int) -> float:
    """GFLOP/s of a size x size matmul in `dtype` on `threads` torch threads (the best of
    `repeats`)."""
    torch.set_num_threads(threads)
    a = torch.randn(size, size).to(dtype)
    b = torch.randn(size, size).to(dtype)
    return 2 * size**3 / _best_seconds(lambda: a @ b, repeats) / 1e9


def _flops(function) -> int:
    with FlopCounterMode(display=False) as counter:
        function()
    return counter.get_total_flops()


def random_positions(n: int, seed: int) -> dict[str, np.ndarray]:
    """n positions of random games, stored as the replay buffer stores searched ones (a tenth
    with a policy target over up to SLOTS legal actions, as playout caps give)."""
    rng = np.random.default_rng(seed)
    work = engine.new_work()
    states, actions, policy = [], [], []
    while len(states) < n:
        state = engine.init(rng=rng)
        while engine.status(state) == engine.ONGOING and len(states) < n:
            legal = np.flatnonzero(engine.legal_action_mask(state, work))
            row = np.full(SLOTS, -1, np.int16)
            chosen = legal[:SLOTS]
            row[: len(chosen)] = chosen
            p = np.zeros(SLOTS, np.float16)
            p[: len(chosen)] = rng.dirichlet(np.ones(len(chosen)))
            states.append(state.copy())
            actions.append(row)
            policy.append(p)
            engine.apply_unchecked(state, int(rng.choice(legal)), work)
    return {
        "states": np.stack(states),
        "actions": np.stack(actions),
        "policy": np.stack(policy),
        "value": rng.choice([-1.0, 0.0, 1.0], n).astype(np.float32),
        "policy_weight": (rng.random(n) < 0.1).astype(np.float32),
    }


def measure(config_name: str, args) -> tuple[str, list[tuple], dict]:
    """The phase rows of one config: (name, seconds per iteration, GFLOP/s or None, threads,
    rate text)."""
    run = load_config(config_name)
    search, replay, optim = run.search, run.replay, run.optim
    iteration = run.positions_per_iteration
    train_threads = run.threads

    # self-play, as a generator plays it: 1 torch thread, 1 numba thread
    torch.set_num_threads(1)
    numba.set_num_threads(1)  # as the trainer: spinning kernel threads slow torch down
    net = network_for(run.model, seed=0).eval()
    evaluator = BatchedInference(net)
    per_row = _flops(
        lambda: net.forward_all(torch.zeros(1, 10, 10, 22), torch.zeros(0, dtype=torch.int64))
    )
    with torch.inference_mode():
        per_policy_row = _flops(
            lambda: net.forward_all(torch.zeros(1, 10, 10, 22), torch.zeros(1, dtype=torch.int64))
        )
    per_policy_row -= per_row
    counted = {"rows": 0, "policy": 0}

    def evaluate(obs, policy_rows=None):
        counted["rows"] += len(obs)
        counted["policy"] += len(obs) if policy_rows is None else len(policy_rows)
        return evaluator(obs, policy_rows)

    selfplay = SelfPlay(search, seed=0)
    buffer = ReplayBuffer(100_000)
    selfplay.play(1, evaluate, buffer)  # compile / load the kernels
    tree = selfplay.search
    tree.timers = {k: 0.0 for k in tree.timers}
    counted.update(rows=0, policy=0)
    steps0, positions0 = tree.steps, selfplay.stats.positions
    tick = time.perf_counter()
    while tree.steps - steps0 < args.steps:
        selfplay.play(1, evaluate, buffer)
    wall = time.perf_counter() - tick
    positions = selfplay.stats.positions - positions0
    scale = iteration / positions  # seconds per iteration
    net_s, tree_s = tree.timers["network"], tree.timers["tree+engine"]
    other_s = max(wall - net_s - tree_s, 0.0)
    forward_flops = counted["rows"] * per_row + counted["policy"] * per_policy_row

    # training, as the trainer steps: the config's threads
    torch.set_num_threads(train_threads)
    data = random_positions(max(4 * replay.batch_size, 2000), seed=0)
    buffer = ReplayBuffer(len(data["states"]))
    buffer.add(*(data[k] for k in ("states", "actions", "policy", "value", "policy_weight")))
    rng = np.random.default_rng(0)
    net = network_for(run.model, seed=0)
    net.train()
    make_optimizer = getattr(az_trainer, "make_optimizer", None)
    optimizer = (
        make_optimizer(net, optim)
        if make_optimizer
        else torch.optim.AdamW(
            net.parameters(), lr=optim.learning_rate, weight_decay=optim.weight_decay
        )
    )
    n_params = sum(p.numel() for p in net.parameters())

    def batch():
        rows = buffer.sample(replay.batch_size, rng)
        syms = rng.integers(0, 8, size=len(rows))
        return make_batch(buffer, rows, syms, search.max_moves)

    def grad(b):
        loss, _ = az_trainer.policy_value_loss(net, b, optim.value_coef, entropy=False)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()

    def opt():
        torch.nn.utils.clip_grad_norm_(net.parameters(), optim.max_grad_norm)
        optimizer.step()

    sample = batch()
    grad_flops = _flops(lambda: grad(sample))
    opt()
    times = {"batch": 0.0, "grad": 0.0, "opt": 0.0}
    policy_rows = 0
    for _ in range(args.train_steps):
        t0 = time.perf_counter()
        b = batch()
        t1 = time.perf_counter()
        grad(b)
        t2 = time.perf_counter()
        opt()
        t3 = time.perf_counter()
        times["batch"] += t1 - t0
        times["grad"] += t2 - t1
        times["opt"] += t3 - t2
        policy_rows += int((b["policy_weight"] > 0).sum())
    steps = iteration * replay.replay_ratio / replay.batch_size  # per iteration
    per_step = {k: v / args.train_steps for k, v in times.items()}

    rows = [
        (
            "self-play forward",
            net_s * scale,
            forward_flops / net_s / 1e9,
            1,
            f"{counted['rows'] / net_s:,.0f} evaluations/s",
        ),
        (
            "tree, engine and driver",
            (tree_s + other_s) * scale,
            None,
            1,
            f"{positions / wall:,.1f} positions/s (all of self-play)",
        ),
        (
            "batch assembly and augmentation",
            per_step["batch"] * steps,
            None,
            train_threads,
            f"{replay.batch_size / per_step['batch']:,.0f} positions/s",
        ),
        (
            "gradient step (forward+backward)",
            per_step["grad"] * steps,
            grad_flops / per_step["grad"] / 1e9,
            train_threads,
            f"{per_step['grad'] * 1e3:.1f} ms a step, {grad_flops / 1e9:.2f} GFLOP",
        ),
        (
            "optimizer step (clip + AdamW)",
            per_step["opt"] * steps,
            OPTIMIZER_FLOPS_PER_PARAMETER * n_params / per_step["opt"] / 1e9,
            train_threads,
            f"{per_step['opt'] * 1e3:.2f} ms a step, {n_params:,} parameters",
        ),
    ]
    facts = {
        "model": run.model,
        "iteration": iteration,
        "steps": steps,
        "train_threads": train_threads,
        "positions_per_s": positions / wall,
        "policy_share": policy_rows / (args.train_steps * replay.batch_size),
    }
    return config_name, rows, facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", default=["az_quick", "az_standard"])
    parser.add_argument("--steps", type=int, default=150, help="self-play simulation steps")
    parser.add_argument("--train-steps", type=int, default=16, help="gradient steps timed")
    parser.add_argument(
        "--bf16-size",
        type=int,
        default=512,
        help="side of the bf16 peak matmul (the fp32 one is 2048)",
    )
    args = parser.parse_args()
    if min(args.steps, args.train_steps, args.bf16_size) < 1:
        parser.error("--steps, --train-steps and --bf16-size must be at least 1")
    configure_threads()  # numba's idle threads sleep, as under `satellites`
    try:
        threads = sorted({1} | {load_config(name).threads for name in args.configs})
    except (FileNotFoundError, ValueError) as error:
        parser.exit(2, f"az_phases: {error}\n")

    def peaks_now() -> dict[int, tuple[float, float]]:
        return {
            t: (
                matmul_peak(t, 2048, torch.float32, 3),
                matmul_peak(t, args.bf16_size, torch.bfloat16, 1),
            )
            for t in threads
        }

    # the peak before and after the phases, the higher kept: on a shared machine the load
    # changes during the run, and a peak measured at a busy moment would flatter the phases
    before = peaks_now()
    measured = [measure(name, args) for name in args.configs]
    after = peaks_now()
    peaks = {t: (max(before[t][0], after[t][0]), max(before[t][1], after[t][1])) for t in threads}

    print(
        "Peak, same process: "
        + "; ".join(
            f"{t} thread{'s' if t > 1 else ''}: fp32 {fp32:,.1f} GFLOP/s (2048), bf16 {bf16:,.1f} "
            f"GFLOP/s ({args.bf16_size})"
            for t, (fp32, bf16) in peaks.items()
        )
    )
    summary = []
    for name, rows, facts in measured:
        model = facts["model"]
        total = sum(r[1] for r in rows)
        print()
        print(
            f"### {name}: {model.channels} channels x {model.blocks} blocks, one iteration = "
            f"{facts['iteration']} positions + {facts['steps']:.0f} gradient steps "
            f"({facts['train_threads']} torch thread(s) for the steps)"
        )
        print()
        print("| phase | s / iteration | share | GFLOP/s | of fp32 peak | of bf16 peak | rate |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for phase, seconds, gflops, threads, rate in rows:
            fp32, bf16 = peaks[threads]
            cells = (
                ("—", "—", "—")
                if gflops is None
                else (f"{gflops:.1f}", f"{gflops / fp32:.0%}", f"{gflops / bf16:.0%}")
            )
            print(
                f"| {phase} | {seconds:.2f} | {seconds / total:.0%} | {' | '.join(cells)} "
                f"| {rate} |"
            )
        print(f"| total | {total:.2f} | 100% | | | | |")
        worst = max(rows, key=lambda r: r[1])
        summary.append(
            f"{name}: {facts['positions_per_s']:,.1f} searched positions/s, "
            f"{total:.1f} s an iteration, most in {worst[0]} "
            f"({worst[1] / total:.0%})"
        )
    print()
    print("Summary: " + "; ".join(summary))


if __name__ == "__main__":
    main()
