"""A CleanRL-style self-play loop over the PettingZoo AEC env `satellites_v0`.

One small torch policy plays both colors through the standard AEC API (`agent_iter`, `last`,
`step`), sampling only legal actions (the mask from the observation), and is trained with
REINFORCE with a learned value baseline: each action of a game gets that player's final reward
(R24: +1 win, -1 loss, 0 draw).

    python examples/pettingzoo_selfplay_loop.py --total-steps 50000   # about 1.5 minutes

That is the default budget; the time is one CPU core's, plus numba's one-time compile of the
engine on the first run in a fresh install.

Needs only the `train` extra (PyTorch).
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn
from torch.distributions import Categorical

from satellites_env import satellites_v0
from satellites_env.core import N_ACTIONS, PUSH_BASE

MASKED_LOGIT = -1e8  # a finite "minus infinity", so the entropy of a masked policy stays finite


class TinyPolicy(nn.Module):
    """Conv trunk; the 3200 move logits come straight from a per-cell conv head, because move
    ids are `cell * 32 + direction * 4 + (k - 1)` (RULES.md section 8); pushes and the pass
    come from a pooled linear head; a value head gives the baseline."""

    def __init__(self, planes: int = 22, channels: int = 32):
        super().__init__()
        self.trunk = nn.Sequential(
            nn.Conv2d(planes, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
        )
        self.moves = nn.Conv2d(channels, 32, 1)
        self.others = nn.Linear(channels, N_ACTIONS - PUSH_BASE)  # 16 pushes + pass
        self.value = nn.Linear(channels, 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """obs (B, 10, 10, 22) float, mask (B, 3217) bool -> masked logits (B, 3217), value (B,)."""
        x = self.trunk(obs.permute(0, 3, 1, 2))
        moves = self.moves(x).permute(0, 2, 3, 1).reshape(len(obs), PUSH_BASE)  # cell-major
        pooled = x.mean(dim=(2, 3))
        logits = torch.cat([moves, self.others(pooled)], dim=1)
        return logits.masked_fill(~mask, MASKED_LOGIT), self.value(pooled).squeeze(1)


def play_episode(env, policy: TinyPolicy, seed: int, generator: torch.Generator) -> dict:
    """One self-play game through the AEC API; returns what the update needs."""
    env.reset(seed=seed)
    observations, masks, actions, players = [], [], [], []
    final_reward = {}
    illegal = 0
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _info = env.last()
        if termination or truncation:
            final_reward[agent] = reward  # the agent's reward for the whole game
            env.step(None)
            continue
        obs = torch.as_tensor(observation["observation"])
        mask = torch.as_tensor(observation["action_mask"], dtype=torch.bool)
        with torch.no_grad():
            logits, _ = policy(obs[None], mask[None])
        probs = torch.softmax(logits[0], dim=0)  # exactly 0 on illegal actions
        action = int(torch.multinomial(probs, 1, generator=generator))
        if not mask[action]:
            illegal += 1
        observations.append(obs)
        masks.append(mask)
        actions.append(action)
        players.append(agent)
        env.step(action)
    game = env.unwrapped.game
    # Ended by the rules or the move cap: never by the illegal-action wrapper.
    assert game.is_over, "the game stopped before its end (an illegal action?)"
    return {
        "obs": torch.stack(observations),
        "mask": torch.stack(masks),
        "action": torch.tensor(actions),
        "return": torch.tensor([float(final_reward[p]) for p in players]),
        "winner": game.score().winner,
        "truncated": game.truncated,
        "steps": len(actions),
        "illegal": illegal,
    }


def update(
    policy: TinyPolicy,
    optimizer: torch.optim.Optimizer,
    episodes: list[dict],
    ent_coef: float,
    vf_coef: float,
) -> dict:
    """One REINFORCE step with a value baseline over a batch of games."""
    obs = torch.cat([e["obs"] for e in episodes])
    mask = torch.cat([e["mask"] for e in episodes])
    action = torch.cat([e["action"] for e in episodes])
    returns = torch.cat([e["return"] for e in episodes])
    logits, value = policy(obs, mask)
    dist = Categorical(logits=logits)
    advantage = (returns - value).detach()
    policy_loss = -(dist.log_prob(action) * advantage).mean()
    value_loss = ((returns - value) ** 2).mean()
    entropy = dist.entropy().mean()
    loss = policy_loss + vf_coef * value_loss - ent_coef * entropy
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    optimizer.step()
    return {"loss": loss.item(), "entropy": entropy.item(), "value_loss": value_loss.item()}


def main(
    total_steps: int = 50_000,
    games_per_update: int = 4,
    learning_rate: float = 1e-3,
    ent_coef: float = 0.01,
    vf_coef: float = 0.5,
    seed: int = 0,
    max_moves: int = 400,
    torch_threads: int | None = 1,
    verbose: bool = True,
) -> dict:
    """Self-play for about `total_steps` agent steps; return a summary dict."""
    if torch_threads:
        torch.set_num_threads(torch_threads)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    env = satellites_v0.env(max_moves=max_moves)
    policy = TinyPolicy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    steps = games = updates = illegal = red_wins = blue_wins = draws = truncated = 0
    stats: dict = {}
    batch: list[dict] = []
    while steps < total_steps:
        episode = play_episode(env, policy, seed=seed + games, generator=generator)
        games += 1
        steps += episode["steps"]
        illegal += episode["illegal"]
        truncated += episode["truncated"]
        winner = episode["winner"]
        red_wins += winner == 0
        blue_wins += winner == 1
        draws += winner is None
        batch.append(episode)
        if len(batch) == games_per_update or steps >= total_steps:
            stats = update(policy, optimizer, batch, ent_coef, vf_coef)
            updates += 1
            batch = []
            if verbose:
                print(
                    f"update {updates}: {steps} steps, {games} games, "
                    f"entropy {stats['entropy']:.2f}, value loss {stats['value_loss']:.3f}"
                )
    env.close()
    summary = {
        "steps": steps,
        "games": games,
        "updates": updates,
        "illegal_actions": illegal,
        "red_wins": red_wins,
        "blue_wins": blue_wins,
        "draws": draws,
        "truncated_games": truncated,
        "seconds": round(time.perf_counter() - start, 1),
        **{f"last_{k}": v for k, v in stats.items()},
    }
    if verbose:
        print(
            f"self-play: {steps} steps, {games} games ({red_wins} red wins, {blue_wins} blue "
            f"wins, {draws} draws, {truncated} truncated), {updates} updates, "
            f"illegal actions: {illegal}, {summary['seconds']} s"
        )
    return summary


def _parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-steps", type=int, default=50_000)
    parser.add_argument("--games-per-update", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-moves", type=int, default=400)
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="PyTorch threads (0: PyTorch's default); a network this small runs fastest on one",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(**vars(_parse_args()))
