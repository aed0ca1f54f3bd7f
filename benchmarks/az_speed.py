"""Speed of the Gumbel AlphaZero self-play: network evaluations/s, searched positions/s,
games/s, and where the time goes (engine, tree, network), printed as a table.

    .venv/bin/python benchmarks/az_speed.py [--config az_quick] [--games 128]
        [--channels 32] [--blocks 2] [--full 16] [--cheap 4] [--fraction 0.25] [--steps 300]
        [--threads 1] [--torch-threads 1]

With `--config`, the network shape and the search settings are the config's (`model:` and
`search:`), and the flags that name them are ignored.

The network is a fresh (untrained) one: its speed does not depend on its weights, but the game
lengths do (untrained play is close to random, so few games end in a short benchmark; games/s
is measured over `--steps` simulation steps and is low for that reason).

The split: `network` is the batched forward passes (torch); `tree + engine` is the two numba
kernels of each step (selection, expansion, backup, and the engine calls inside them).
`engine` is estimated by replaying the same engine work outside the search (copy the parent
state, apply the action, game status, legal mask, observation planes) on leaf states recorded
during the run, times the number of leaves; `tree` is the rest.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from numba import njit

from satellites_env.core import engine
from satellites_env.core.batch import configure_threads
from satellites_env.core.board import N_ACTIONS, N_CELLS
from satellites_env.observation import N_PLANES, fill_observation
from training.alphazero.config import AZModelConfig, AZSearchConfig
from training.alphazero.replay import ReplayBuffer
from training.alphazero.selfplay import SelfPlay
from training.common.network import BatchedInference, network_for


@njit(cache=True)
def _engine_work(states, actions, max_moves, mask, planes, work, scratch):
    """The engine part of expanding one leaf, for each (parent state, action)."""
    for i in range(states.shape[0]):
        scratch[:] = states[i]
        engine.apply_unchecked(scratch, actions[i], work)
        if engine.game_status(scratch, max_moves) == 0:
            engine.fill_legal_mask(scratch, mask, work)
            fill_observation(scratch, scratch[N_CELLS], max_moves, planes, work)


def engine_seconds_per_leaf(samples: int = 2000, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    states, actions = [], []
    work = engine.new_work()
    while len(states) < samples:
        state = engine.init(rng=rng)
        while engine.status(state) == engine.ONGOING and len(states) < samples:
            legal = np.flatnonzero(engine.legal_action_mask(state, work))
            action = int(rng.choice(legal))
            states.append(state.copy())
            actions.append(action)
            engine.apply_unchecked(state, action, work)
    states = np.stack(states)
    actions = np.array(actions, dtype=np.int64)
    mask = np.zeros(N_ACTIONS, np.int8)
    planes = np.zeros((N_CELLS, N_PLANES), np.float32)
    scratch = np.zeros(states.shape[1], np.int32)
    _engine_work(states[:10], actions[:10], 400, mask, planes, work, scratch)  # compile
    tick = time.perf_counter()
    _engine_work(states, actions, 400, mask, planes, work, scratch)
    return (time.perf_counter() - tick) / len(states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", help="an AlphaZero run config: its model and search")
    parser.add_argument("--games", type=int, default=128)
    parser.add_argument("--channels", type=int, default=32)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--full", type=int, default=16)
    parser.add_argument("--cheap", type=int, default=4)
    parser.add_argument("--fraction", type=float, default=0.25)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1, help="numba threads (the trainer uses 1)")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch threads for inference (the trainer uses 1)",
    )
    args = parser.parse_args()
    configure_threads()  # numba's idle threads sleep, as under `satellites`
    import numba

    torch.set_num_threads(args.torch_threads)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    if args.config:
        from training.common.config import load_config

        run = load_config(args.config)
        model, config = run.model, run.search
    else:
        model = AZModelConfig(channels=args.channels, blocks=args.blocks)
        config = AZSearchConfig(
            games=args.games,
            full_simulations=args.full,
            cheap_simulations=args.cheap,
            full_fraction=args.fraction,
        )
    net = network_for(model, seed=0).eval()
    evaluate = BatchedInference(net)

    # 1. the network alone, at the batch size of the search
    obs = np.random.default_rng(0).random((config.games, 10, 10, N_PLANES), dtype=np.float32)
    evaluate(obs)
    tick = time.perf_counter()
    reps = 10
    for _ in range(reps):
        evaluate(obs)
    net_rate = reps * config.games / (time.perf_counter() - tick)

    # 2. self-play
    selfplay = SelfPlay(config, seed=0)
    buffer = ReplayBuffer(100_000)
    selfplay.play(1, evaluate, buffer)  # compile / load the kernels
    search = selfplay.search
    search.timers = {k: 0.0 for k in search.timers}
    evals0, steps0 = search.evaluations, search.steps
    pos0, games0 = selfplay.stats.positions, selfplay.stats.games
    tick = time.perf_counter()
    while search.steps - steps0 < args.steps:
        selfplay.play(1, evaluate, buffer)
    wall = time.perf_counter() - tick
    evals = search.evaluations - evals0
    positions = selfplay.stats.positions - pos0
    games = selfplay.stats.games - games0
    leaves = evals  # every evaluation is a new node (a leaf or a root), expanded on the engine
    engine_s = min(engine_seconds_per_leaf() * leaves, search.timers["tree+engine"])
    tree_s = search.timers["tree+engine"] - engine_s
    net_s = search.timers["network"]
    other = max(wall - tree_s - engine_s - net_s, 0.0)

    print(
        f"Gumbel AlphaZero self-play: {config.games} games in flight, net {model.channels}ch x "
        f"{model.blocks} blocks, {config.full_simulations}/{config.cheap_simulations} "
        f"simulations (full share {config.full_fraction}), {args.threads} numba / "
        f"{args.torch_threads} torch threads, {args.steps} simulation steps"
    )
    print()
    print("| measure | value |")
    print("| --- | ---: |")
    print(f"| network alone, batch {config.games} | {net_rate:,.0f} evaluations/s |")
    print(f"| self-play network evaluations | {evals / wall:,.0f} /s |")
    print(f"| searched positions (moves) | {positions / wall:,.1f} /s |")
    print(f"| finished games | {games / wall:,.3f} /s ({games} games) |")
    print(f"| evaluations per move | {evals / max(positions, 1):.1f} |")
    print()
    print("| part | seconds | share |")
    print("| --- | ---: | ---: |")
    for name, seconds in (
        ("network (torch forward)", net_s),
        ("engine (numba, estimated)", engine_s),
        ("tree (numba: select, expand, backup)", tree_s),
        ("python (driver, recording)", other),
    ):
        print(f"| {name} | {seconds:.2f} | {seconds / wall:.0%} |")
    print(f"| total | {wall:.2f} | 100% |")


if __name__ == "__main__":
    main()
