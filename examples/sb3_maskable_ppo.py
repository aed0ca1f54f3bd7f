"""MaskablePPO (sb3-contrib) on the single-agent Gymnasium env against a fixed opponent.

Trains for a step budget on `SatellitesGymEnv` (the opponent's moves happen inside `step`), then
plays a few evaluation games with the trained model, always passing the legal-action mask.

    python examples/sb3_maskable_ppo.py        # 10,000 steps and 10 games: about a minute
    python examples/sb3_maskable_ppo.py --opponent greedy --agent-color blue --save ppo.zip

The time is one CPU core's (PyTorch runs on one thread unless `--torch-threads` says otherwise);
the first run in a fresh install adds numba's one-time compile of the engine.

Needs the `examples` extra: pip install -e ".[examples]".
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from satellites_env.gym_env import SatellitesGymEnv


class SatellitesCNN(BaseFeaturesExtractor):
    """A small CNN over the (10, 10, 22) planes; the action mask part of the observation is not
    a feature (MaskablePPO applies it to the logits itself)."""

    def __init__(
        self, observation_space: gymnasium.spaces.Dict, features_dim: int = 128, channels: int = 32
    ):
        super().__init__(observation_space, features_dim)
        height, width, planes = observation_space["observation"].shape
        self.net = nn.Sequential(
            nn.Conv2d(planes, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(channels * height * width, features_dim),
            nn.ReLU(),
        )

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.net(observations["observation"].permute(0, 3, 1, 2))  # channels first


def evaluate(
    model: MaskablePPO, env: SatellitesGymEnv, games: int, seed: int, deterministic: bool = True
) -> dict:
    """Play `games` games of `model` against the env's opponent, with masks; count results."""
    results = {"wins": 0, "draws": 0, "losses": 0, "illegal_actions": 0, "steps": 0}
    for game in range(games):
        obs, _ = env.reset(seed=seed + game)
        while True:
            masks = env.action_masks()
            action, _ = model.predict(obs, action_masks=masks, deterministic=deterministic)
            action = int(action)
            if not masks[action]:
                results["illegal_actions"] += 1
            obs, reward, terminated, truncated, _ = env.step(action)  # raises if illegal
            results["steps"] += 1
            if terminated or truncated:
                results["wins" if reward > 0 else "losses" if reward < 0 else "draws"] += 1
                break
    return results


def main(
    total_steps: int = 10_000,
    n_envs: int = 2,
    opponent: str = "random",
    agent_color: str = "random",
    eval_games: int = 10,
    seed: int = 0,
    n_steps: int = 256,
    batch_size: int = 128,
    n_epochs: int = 4,
    learning_rate: float = 3e-4,
    max_moves: int = 400,
    torch_threads: int | None = 1,
    save: str | None = None,
    verbose: bool = True,
) -> dict:
    """Train MaskablePPO for `total_steps` learner steps, evaluate it, return a summary dict."""
    if torch_threads:
        torch.set_num_threads(torch_threads)
    start = time.perf_counter()
    env_kwargs = dict(opponent=opponent, agent_color=agent_color, max_moves=max_moves)
    # Monitor (added by make_vec_env) keeps episode returns; the env raises on any illegal
    # action, so a finished run is also a run without one.
    train_env = make_vec_env(SatellitesGymEnv, n_envs=n_envs, seed=seed, env_kwargs=env_kwargs)
    model = MaskablePPO(
        "MultiInputPolicy",
        train_env,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        learning_rate=learning_rate,
        gamma=0.995,
        ent_coef=0.01,
        seed=seed,
        verbose=0,
        policy_kwargs=dict(features_extractor_class=SatellitesCNN, net_arch=dict(pi=[64], vf=[64])),
    )
    # A masked action on the fresh env, as MaskablePPO itself gets them (VecEnv.env_method).
    assert get_action_masks(train_env).shape == (n_envs, train_env.action_space.n)
    model.learn(total_timesteps=total_steps)
    train_seconds = time.perf_counter() - start

    returns = [info["r"] for info in model.ep_info_buffer]
    eval_env = SatellitesGymEnv(**env_kwargs)
    results = evaluate(model, eval_env, eval_games, seed=seed + 10_000)
    eval_env.close()
    train_env.close()
    if save:
        model.save(save)
    summary = {
        "train_steps": int(model.num_timesteps),
        "train_episodes": len(returns),
        "train_mean_return": float(np.mean(returns)) if returns else None,
        "train_seconds": round(train_seconds, 1),
        "eval_games": eval_games,
        **results,
        "seconds": round(time.perf_counter() - start, 1),
    }
    if verbose:
        mean = summary["train_mean_return"]
        print(
            f"MaskablePPO vs {opponent} (playing {agent_color_text(agent_color)}): "
            f"{summary['train_steps']} steps, "
            f"{summary['train_episodes']} episodes in the last-100 buffer"
            + (f" (mean return {mean:+.2f})" if mean is not None else "")
            + f", {summary['train_seconds']} s"
        )
        print(
            f"evaluation, {eval_games} games: {results['wins']} won, {results['draws']} drawn, "
            f"{results['losses']} lost; illegal actions: {results['illegal_actions']}"
        )
    return summary


def agent_color_text(agent_color: str) -> str:
    """The learner's colour in words: "red", "blue", or "a colour drawn each game" for `random`."""
    return "a colour drawn each game" if agent_color == "random" else agent_color


def _parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-steps", type=int, default=10_000)
    parser.add_argument("--n-envs", type=int, default=2)
    parser.add_argument(
        "--opponent", default="random", help="agent spec: random, greedy, mcts:N, checkpoint:PATH"
    )
    parser.add_argument("--agent-color", default="random", choices=["red", "blue", "random"])
    parser.add_argument("--eval-games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-steps", type=int, default=256, help="rollout length per env")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--n-epochs", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--max-moves", type=int, default=400)
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="PyTorch threads (0: PyTorch's default); a network this small runs fastest on one",
    )
    parser.add_argument("--save", default=None, help="save the trained model to this .zip")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(**vars(_parse_args()))
