"""Behaviour cloning from a Minari data set of Satellites games.

1. Records `greedy`'s games against `random` as a Minari data set (`satellites dataset` does
   the same from the command line), unless `--dataset` names one that exists already;
2. loads it with ``minari.load_dataset`` and trains a small policy network (PyTorch) to predict
   the recorded action from the observation planes, illegal actions masked out;
3. plays the cloned policy (its most likely legal action) against `random` and `greedy` through
   the Gymnasium env and prints its win rates.

Runs in seconds on the defaults (the first run in a fresh install compiles numba's kernels):

    python examples/minari_behaviour_cloning.py --games 40 --epochs 5 --eval-games 10
"""

from __future__ import annotations

import argparse
import tempfile
import time

import gymnasium
import minari
import numpy as np
import torch
from torch import nn

from satellites_env import ENV_ID
from satellites_env.core.board import N_ACTIONS, N_MOVE_ACTIONS
from satellites_env.dataset import datasets_root, record_dataset
from satellites_env.observation import OBSERVATION_SHAPE


class Policy(nn.Module):
    """Three convolutions over the (10, 10, 22) planes, then the 3,217 logits: a move's from
    its cell (move ids are cell-major: 32 per cell, RULES.md section 8), the 16 pushes and
    the pass from the pooled features."""

    def __init__(self, channels: int = 32):
        super().__init__()
        planes = OBSERVATION_SHAPE[-1]
        self.body = nn.Sequential(
            nn.Conv2d(planes, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
        )
        self.moves = nn.Conv2d(channels, N_MOVE_ACTIONS // 100, 1)  # 32 moves per cell
        self.others = nn.Linear(channels, N_ACTIONS - N_MOVE_ACTIONS)

    def forward(self, planes: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        features = self.body(planes.permute(0, 3, 1, 2))
        moves = self.moves(features).permute(0, 2, 3, 1).flatten(1)  # cell-major, as the ids
        logits = torch.cat([moves, self.others(features.mean(dim=(2, 3)))], dim=1)
        return logits.masked_fill(mask == 0, -1e9)  # illegal actions never chosen


def load_steps(dataset) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(planes, masks, actions) of every step of every episode of the data set."""
    planes, masks, actions = [], [], []
    for episode in dataset.iterate_episodes():
        planes.append(episode.observations["observation"][:-1])  # the last one has no action
        masks.append(episode.observations["action_mask"][:-1])
        actions.append(episode.actions)
    return (
        torch.from_numpy(np.concatenate(planes)),
        torch.from_numpy(np.concatenate(masks)),
        torch.from_numpy(np.concatenate(actions)).long(),
    )


def train(policy: Policy, data, epochs: int, batch_size: int, seed: int) -> float:
    """Cross-entropy on the recorded actions; returns the last epoch's mean loss."""
    planes, masks, actions = data
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    loss_sum = 0.0
    for _ in range(epochs):
        order = torch.randperm(len(actions), generator=generator)
        loss_sum, batches = 0.0, 0
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            loss = nn.functional.cross_entropy(policy(planes[index], masks[index]), actions[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum, batches = loss_sum + loss.item(), batches + 1
        loss_sum /= batches
    return loss_sum


def win_rate(policy: Policy, opponent: str, games: int, seed: int) -> float:
    """The cloned policy's score against `opponent` (a win 1, a draw 1/2), colours alternated."""
    env = gymnasium.make(ENV_ID, opponent=opponent)
    points = 0.0
    with torch.no_grad():
        for i in range(games):
            env.unwrapped.agent_color = ("red", "blue")[i % 2]
            observation, _ = env.reset(seed=seed + i)
            done, reward = False, 0.0
            while not done:
                planes = torch.from_numpy(observation["observation"])[None]
                mask = torch.from_numpy(observation["action_mask"])[None]
                action = int(policy(planes, mask).argmax())
                observation, reward, terminated, truncated, _ = env.step(action)
                done = terminated or truncated
            points += (reward + 1) / 2
    env.close()
    return points / games


def main(
    games: int = 40,
    epochs: int = 5,
    eval_games: int = 10,
    dataset_id: str | None = None,
    root: str | None = None,
    seed: int = 0,
    torch_threads: int = 1,
) -> dict[str, float]:
    """Record (or load), clone, evaluate; returns the numbers it prints."""
    torch.set_num_threads(torch_threads)
    torch.manual_seed(seed)
    with tempfile.TemporaryDirectory() as scratch:
        if dataset_id is None:  # a fresh data set in a scratch folder
            dataset_id, root = "satellites/greedy-vs-random-v0", scratch
            record_dataset(dataset_id, "greedy", "random", games, seed=seed, root=root)
        with datasets_root(root):  # Minari's MINARI_DATASETS_PATH, for this block only
            dataset = minari.load_dataset(dataset_id)
            episodes = dataset.total_episodes
            data = load_steps(dataset)
    started = time.monotonic()
    policy = Policy()
    loss = train(policy, data, epochs, batch_size=64, seed=seed)
    trained = time.monotonic() - started
    policy.eval()
    summary = {
        "episodes": float(episodes),
        "steps": float(len(data[2])),
        "loss": loss,
        "train_seconds": trained,
        "vs_random": win_rate(policy, "random", eval_games, seed + 10_000),
        "vs_greedy": win_rate(policy, "greedy", eval_games, seed + 20_000),
    }
    print(
        f"cloned greedy from {summary['episodes']:.0f} games ({summary['steps']:.0f} steps) in "
        f"{trained:.1f} s, loss {loss:.3f}; win rate vs random "
        f"{summary['vs_random']:.0%}, vs greedy {summary['vs_greedy']:.0%} "
        f"({eval_games} games each)"
    )
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games to record (default 40)")
    parser.add_argument("--epochs", type=int, default=5, help="training epochs (default 5)")
    parser.add_argument("--eval-games", type=int, default=10, help="games per opponent")
    parser.add_argument("--dataset", default=None, help="an existing data set's id to clone")
    parser.add_argument("--root", default=None, help="its folder (MINARI_DATASETS_PATH)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.games, args.epochs, args.eval_games, args.dataset, args.root, args.seed)
