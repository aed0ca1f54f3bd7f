"""The PPO run configuration (`learner: ppo`): its sections and their checks.

Every key is a [`setting`][training.common.config.setting] with its bounds and documentation; the
loading and checking are the common config system's
([`training.common.config`][training.common.config]).
"""

from __future__ import annotations

from dataclasses import dataclass

from training.common.config import MAX_MOVES, Config, ConfigError, section, setting


@dataclass
class PPOModelConfig:
    """`model:` the residual CNN (training/common/network.py) and PPO's prior."""

    channels: int = setting(64, 8, 1024, doc="width of the residual CNN (a multiple of 8)")
    blocks: int = setting(4, 1, 64, doc="residual blocks in the trunk")
    lookahead: float = setting(
        0.0,
        0.0,
        1000.0,
        doc="initial weight of the one-ply lookahead logit prior "
        "(training/ppo/prior.py); 0 = no prior, the network alone",
    )


@dataclass
class SelfPlayConfig:
    """`selfplay:` the games PPO learns from."""

    envs: int = setting(
        64, 1, 4096, doc="games played in parallel (one batched forward pass per step)"
    )
    max_moves: int = setting(
        400, 1, MAX_MOVES, doc="move cap of training games (R20); capped games are still scored"
    )
    pool_size: int = setting(10, 1, 1000, doc="past snapshots kept in the opponent pool")
    snapshot_every: int = setting(5, 1, 10**6, doc="updates between snapshots added to the pool")
    pool_fraction: float = setting(0.3, 0.0, 1.0, doc="share of new games against a pool snapshot")
    baseline_fraction: float = setting(
        0.0, 0.0, 1.0, doc="share of new games against baseline_opponent"
    )
    baseline_opponent: str = setting("greedy", doc="agent spec of the baseline games", spec=True)
    shaping: float = setting(
        0.1,
        0.0,
        1000.0,
        doc="weight of potential-based shaping by the "
        "heuristic (training/ppo/shaping.py; 0 = the "
        "result alone)",
    )


@dataclass
class PPOUpdateConfig:
    """`ppo:` the update."""

    steps_per_update: int = setting(
        4096,
        1,
        65_536,
        doc="learner decisions per update (games in flight are cut and bootstrapped)",
    )
    epochs: int = setting(4, 1, 100, doc="passes over the collected transitions")
    minibatch: int = setting(512, 1, 65_536, doc="transitions per gradient step")
    learning_rate: float = setting(3e-4, 0.0, 1.0, low_open=True, doc="Adam step size")
    anneal_lr: bool = setting(
        False, doc="decay the step size linearly to 2% of itself over total_steps"
    )
    gamma: float = setting(0.99, 0.0, 1.0, doc="discount per own decision")
    gae_lambda: float = setting(0.95, 0.0, 1.0, doc="GAE bias/variance trade-off")
    clip: float = setting(0.2, 0.0, 1.0, low_open=True, high_open=True, doc="PPO ratio clip")
    value_coef: float = setting(0.5, 0.0, 1000.0, doc="weight of the value loss")
    entropy_coef: float = setting(0.01, 0.0, 1000.0, doc="weight of the entropy bonus")
    max_grad_norm: float = setting(
        0.5, 0.0, 1e6, low_open=True, doc="gradient clipping (global L2 norm)"
    )


@dataclass
class PPOConfig(Config, learner="ppo"):
    """PPO with action masking over vectorised self-play (training/ppo/), the second learner:
    its policy starts from a hand-made one-ply prior (`model.lookahead`)."""

    learner: str = setting("ppo", doc="the learner that reads this file")
    total_steps: int = setting(200_000, 1, 10**12, doc="learner transitions in the whole run")
    model: PPOModelConfig = section(PPOModelConfig)
    selfplay: SelfPlayConfig = section(SelfPlayConfig)
    ppo: PPOUpdateConfig = section(PPOUpdateConfig)

    TOTAL = "total_steps"
    GAMES = "selfplay.envs"

    def check(self) -> None:
        super().check()
        if self.model.channels % 8:
            raise ConfigError(f"model.channels must be a multiple of 8, got {self.model.channels}")
        s = self.selfplay
        if s.pool_fraction + s.baseline_fraction > 1.0:
            raise ConfigError(
                f"selfplay.pool_fraction + selfplay.baseline_fraction must be "
                f"<= 1, got {s.pool_fraction} + {s.baseline_fraction}"
            )

    def agent_specs(self) -> list[tuple[str, str]]:
        return [
            ("selfplay.baseline_opponent", self.selfplay.baseline_opponent),
            *super().agent_specs(),
        ]
