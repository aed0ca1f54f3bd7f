"""The PPO learner: GAE over each player's own decisions, clipped objective, masked policy.

Rewards: the game result (R24, +1/-1/0) on a player's last decision, plus optional
potential-based shaping `shaping * (gamma * phi(s') - phi(s))` where phi is the potential of
`training.ppo.shaping` at the player's decision points and phi = 0 after the end.
Potential-based shaping leaves the optimal policy unchanged (Ng et al., 1999) and gives the
long early games a signal before the sparse result arrives.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
from torch.nn import functional as F

from ..common.network import PolicyValueNet, masked_entropy
from .config import PPOUpdateConfig
from .prior import PriorNet, masked_logits
from .selfplay import Trajectory


@dataclass
class Batch:
    observations: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    lookaheads: torch.Tensor | None = None  # (N, 3217) when the network uses the prior

    def __len__(self) -> int:
        return len(self.actions)


def shaped_rewards(trajectory: Trajectory, gamma: float, shaping: float) -> np.ndarray:
    """The result on the last decision of a finished game, plus the shaping terms."""
    rewards = np.zeros(len(trajectory), dtype=np.float32)
    if trajectory.done:
        rewards[-1] = trajectory.outcome
    if shaping:
        potentials = np.asarray(trajectory.potentials, dtype=np.float32)
        after = 0.0 if trajectory.done else trajectory.bootstrap_potential
        following = np.append(potentials[1:], after)
        rewards += shaping * (gamma * following - potentials)
    return rewards


def gae(
    rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float, next_value: float = 0.0
) -> np.ndarray:
    """Generalised advantage estimates of one segment; `next_value` follows its last step
    (0 after the end of a game, the bootstrap value for a cut segment)."""
    advantages = np.zeros_like(rewards)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        delta = rewards[t] + gamma * next_value - values[t]
        running = delta + gamma * lam * running
        advantages[t] = running
        next_value = values[t]
    return advantages


@torch.no_grad()
def build_batch(
    net: PolicyValueNet, trajectories: list[Trajectory], config: PPOUpdateConfig, shaping: float
) -> Batch:
    """Stack trajectories; values from the current network, advantages by GAE."""
    observations = torch.from_numpy(np.stack([o for t in trajectories for o in t.observations]))
    masks = torch.from_numpy(np.stack([m for t in trajectories for m in t.masks]))
    cut = [t for t in trajectories if not t.done]
    net.eval()
    values = _values(net, observations)
    # a cut segment always has its bootstrap observation
    cut_observations = [cast(np.ndarray, t.bootstrap_observation) for t in cut]
    bootstrap = _values(net, torch.from_numpy(np.stack(cut_observations))) if cut else np.zeros(0)
    bootstrap_of = {id(t): float(v) for t, v in zip(cut, bootstrap, strict=False)}
    advantage_parts: list[np.ndarray] = []
    return_parts: list[np.ndarray] = []
    start = 0
    for trajectory in trajectories:
        end = start + len(trajectory)
        rewards = shaped_rewards(trajectory, config.gamma, shaping)
        adv = gae(
            rewards,
            values[start:end],
            config.gamma,
            config.gae_lambda,
            bootstrap_of.get(id(trajectory), 0.0),
        )
        advantage_parts.append(adv)
        return_parts.append(adv + values[start:end])
        start = end
    advantages = np.concatenate(advantage_parts)
    returns = np.concatenate(return_parts)
    # Normalised over the whole batch: a per-minibatch std is undefined for a last chunk of one.
    normalised = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    return Batch(
        observations,
        masks,
        torch.tensor([a for t in trajectories for a in t.actions], dtype=torch.int64),
        torch.tensor([p for t in trajectories for p in t.log_probs], dtype=torch.float32),
        torch.from_numpy(normalised),
        torch.from_numpy(returns),
        torch.from_numpy(np.stack([v for t in trajectories for v in t.lookaheads]))
        if isinstance(net, PriorNet)
        else None,
    )


def _values(net: PolicyValueNet, observations: torch.Tensor) -> np.ndarray:
    return torch.cat([net.value(chunk) for chunk in observations.split(2048)]).numpy()


def ppo_update(
    net: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    config: PPOUpdateConfig,
    generator: torch.Generator,
) -> dict[str, float]:
    """Clipped PPO epochs over the batch; returns mean losses and diagnostics (`approx_kl`:
    the approximate KL to the collecting policy; `minibatches`: the steps taken)."""
    net.train()
    totals = {
        "policy_loss": 0.0,
        "value_loss": 0.0,
        "entropy": 0.0,
        "approx_kl": 0.0,
        "clip_fraction": 0.0,
    }
    updates = 0
    for chunk in _minibatches(len(batch), config, generator):
        lookahead = batch.lookaheads[chunk] if batch.lookaheads is not None else None
        logits, values = masked_logits(
            net, batch.observations[chunk], batch.masks[chunk], lookahead
        )
        log_probs_all = torch.log_softmax(logits, dim=-1)
        log_probs = log_probs_all.gather(1, batch.actions[chunk, None]).squeeze(1)
        advantages = batch.advantages[chunk]
        log_ratio = log_probs - batch.log_probs[chunk]
        ratio = log_ratio.exp()
        with torch.no_grad():
            approx_kl = ((ratio - 1) - log_ratio).mean().item()
        policy_loss = -torch.min(
            ratio * advantages, ratio.clamp(1 - config.clip, 1 + config.clip) * advantages
        ).mean()
        value_loss = F.mse_loss(values, batch.returns[chunk])
        entropy = masked_entropy(logits).mean()
        loss = policy_loss + config.value_coef * value_loss - config.entropy_coef * entropy
        if not torch.isfinite(loss):
            raise FloatingPointError(
                f"PPO loss is {loss.item()} (policy {policy_loss.item()}, "
                f"value {value_loss.item()}, entropy {entropy.item()})"
            )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
        optimizer.step()
        with torch.no_grad():
            totals["policy_loss"] += policy_loss.item()
            totals["value_loss"] += value_loss.item()
            totals["entropy"] += entropy.item()
            totals["approx_kl"] += approx_kl
            totals["clip_fraction"] += ((ratio - 1).abs() > config.clip).float().mean().item()
        updates += 1
    return {**{key: value / updates for key, value in totals.items()}, "minibatches": updates}


def _minibatches(
    size: int, config: PPOUpdateConfig, generator: torch.Generator
) -> Iterator[torch.Tensor]:
    """Index chunks: `config.epochs` shuffled passes over the batch."""
    for _ in range(config.epochs):
        yield from torch.randperm(size, generator=generator).split(config.minibatch)
