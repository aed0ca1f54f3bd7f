"""Self-play on `SatellitesVectorEnv`: N games stepped together, finished games restart at once.

Two loops:

1. masked random play: every game picks a uniformly random legal action from its mask;
2. self-play between two simple policies: "eager" (prefers a displacement or a move that
   lands next to an opponent satellite, i.e. goes for connections) against "random"; eager
   plays red in the even games and blue in the odd ones.

Both print games finished and results. Runs in a few seconds once numba's kernels are cached
(the first run in a fresh install compiles them first).

    python examples/vector_selfplay.py --envs 64 --steps 600
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from satellites_env.core.board import N_ACTIONS, N_MOVE_ACTIONS, ORTHO, RAY
from satellites_env.vector import SatellitesVectorEnv

# Landing cell of every move action and that cell's orthogonal neighbours (-1: off board),
# so "lands next to an opponent" is one gather over the whole batch.
_SOURCE = np.arange(N_MOVE_ACTIONS) // 32
_TARGET = RAY[_SOURCE, (np.arange(N_MOVE_ACTIONS) // 4) % 8, np.arange(N_MOVE_ACTIONS) % 4]
_NEAR = np.where(_TARGET[:, None] >= 0, ORTHO[np.maximum(_TARGET, 0)], -1)


def random_policy(obs: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per game (random keys, the mask picks the largest)."""
    keys = rng.random(obs["action_mask"].shape) + obs["action_mask"]
    return keys.argmax(axis=1)


def eager_policy(obs: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """A random legal action among displacements and moves that land next to an opponent
    satellite when there are some, else any legal action."""
    mask = obs["action_mask"].astype(bool)
    planes = obs["observation"].reshape(len(mask), 100, -1)
    opponent = planes[:, :, 4:8].sum(axis=2) > 0  # planes 4-7: opponent satellites, any value
    padded = np.concatenate([opponent, np.zeros((len(mask), 1), bool)], axis=1)  # -1 -> False
    lands_on = padded[:, np.where(_TARGET >= 0, _TARGET, 100)]
    lands_next = padded[:, _NEAR].any(axis=2)
    wanted = np.zeros_like(mask)
    wanted[:, :N_MOVE_ACTIONS] = mask[:, :N_MOVE_ACTIONS] & (lands_on | lands_next)
    choice = np.where(wanted.any(axis=1, keepdims=True), wanted, mask)
    return (rng.random(mask.shape) + choice).argmax(axis=1)


def masked_random(envs: int, steps: int, seed: int) -> None:
    env = SatellitesVectorEnv(envs, copy=False)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    results = np.zeros(3, dtype=np.int64)  # red wins, blue wins, draws
    ended = {"terminated": 0, "truncated": 0}
    start = time.perf_counter()
    for _ in range(steps):
        obs, rewards, terminations, truncations, _infos = env.step(random_policy(obs, rng))
        done = terminations | truncations
        ended["terminated"] += int(terminations.sum())
        ended["truncated"] += int(truncations.sum())
        red = rewards[done, 0]
        results += [(red > 0).sum(), (red < 0).sum(), (red == 0).sum()]
    seconds = time.perf_counter() - start
    print(
        f"masked random: {envs} games x {steps} steps = {envs * steps:,} positions in "
        f"{seconds:.2f} s; {sum(ended.values())} games finished ({ended['terminated']} by the "
        f"rules, {ended['truncated']} at the move cap); red won {results[0]}, blue "
        f"{results[1]}, draws {results[2]}"
    )


def self_play(envs: int, steps: int, seed: int) -> None:
    env = SatellitesVectorEnv(envs, max_moves=300, copy=False)
    rng = np.random.default_rng(seed + 1)
    obs, infos = env.reset(seed=seed + 1)
    eager_color = np.arange(envs) % 2  # eager is red (0) in even games, blue (1) in odd ones
    score = {"eager": 0, "random": 0, "draw": 0}
    for _ in range(steps):
        eager_to_move = infos["current_player"] == eager_color
        actions = np.where(eager_to_move, eager_policy(obs, rng), random_policy(obs, rng))
        obs, rewards, terminations, truncations, infos = env.step(actions)
        for i in np.flatnonzero(terminations | truncations):
            eager_reward = rewards[i, eager_color[i]]
            score["eager" if eager_reward > 0 else "random" if eager_reward < 0 else "draw"] += 1
    games = sum(score.values())
    print(
        f"self-play eager vs random: {games} games finished; eager won {score['eager']}, "
        f"random {score['random']}, draws {score['draw']}"
    )
    assert games > 0
    assert N_ACTIONS == env.single_action_space.n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    masked_random(args.envs, args.steps, args.seed)
    self_play(args.envs, args.steps, args.seed)


if __name__ == "__main__":
    main()
