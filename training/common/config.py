"""Run configuration: a typed dataclass loaded from YAML, every key documented.

An unknown key, a missing section or a value of the wrong type is an error that names it.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml


class ConfigError(ValueError):
    """A bad configuration file or value."""


@dataclass
class ModelConfig:
    channels: int = 64  # width of the residual CNN
    blocks: int = 4  # residual blocks in the trunk
    lookahead: float = 0.0  # initial weight of the one-ply lookahead logit prior (0 = off)


@dataclass
class SelfPlayConfig:
    envs: int = 64  # games played in parallel (one batched forward pass per step)
    max_moves: int = 400  # move cap of training games (R20); capped games are still scored
    pool_size: int = 10  # past snapshots kept in the opponent pool
    snapshot_every: int = 5  # updates between snapshots added to the pool
    pool_fraction: float = 0.3  # share of new games against a pool snapshot (else pure self-play)
    baseline_fraction: float = 0.0  # share of new games against `baseline_opponent`
    baseline_opponent: str = "greedy"  # agent spec used for baseline games
    shaping: float = 0.1  # weight of potential-based shaping by the heuristic (0 = sparse only)


@dataclass
class PPOConfig:
    steps_per_update: int = 4096  # learner decisions per update (games in flight are cut)
    epochs: int = 4  # passes over the collected transitions
    minibatch: int = 512  # transitions per gradient step
    learning_rate: float = 3e-4  # Adam step size
    anneal_lr: bool = False  # decay the step size linearly to 0 over total_steps
    gamma: float = 0.99  # discount per own decision
    gae_lambda: float = 0.95  # GAE bias/variance trade-off
    clip: float = 0.2  # PPO ratio clip
    value_coef: float = 0.5  # weight of the value loss
    entropy_coef: float = 0.01  # weight of the entropy bonus (keeps exploring)
    max_grad_norm: float = 0.5  # gradient clipping (global L2 norm)
    target_kl: float = 0.0  # end the update's epochs once a minibatch's approx KL > 1.5x this (0 = off)


@dataclass
class EvalConfig:
    every: int = 10  # updates between evaluations
    games: int = 20  # games per opponent (colours balanced)
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])  # agent specs
    final_games: int = 100  # games per opponent in the final evaluation
    max_moves: int = 400  # move cap of evaluation games (the standard R20 cap)


@dataclass
class TrainConfig:
    seed: int = 0  # seeds set-ups, sampling, updates and evaluation
    total_steps: int = 200_000  # learner transitions in the whole run
    threads: int = 2  # torch CPU threads
    checkpoint_every: int = 10  # updates between checkpoints
    model: ModelConfig = field(default_factory=ModelConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _build(cls, data: typing.Any, where: str):
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'config'} must be a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown config key {where + '.' if where else ''}{unknown[0]}; "
                          f"known keys{' in ' + where if where else ''}: {', '.join(sorted(known))}")
    values = {}
    for name, value in data.items():
        key = f"{where}.{name}" if where else name
        expected = hints[name]
        if dataclasses.is_dataclass(expected):
            values[name] = _build(expected, value, key)
        else:
            values[name] = _check_type(key, value, expected)
    return cls(**values)


def _check_type(key: str, value, expected):
    origin = typing.get_origin(expected)
    if origin is list:
        (item,) = typing.get_args(expected)
        if not isinstance(value, list) or not all(isinstance(v, item) for v in value):
            raise ConfigError(f"config key {key} must be a list of {item.__name__}, got {value!r}")
        return value
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool) and expected is not bool or not isinstance(value, expected):
        raise ConfigError(f"config key {key} must be {expected.__name__}, got {value!r} "
                          f"({type(value).__name__})")
    return value


def config_from_dict(data: dict) -> TrainConfig:
    """Validated config from a plain dict (as read from YAML)."""
    config = _build(TrainConfig, data, "")
    _check_values(config)
    return config


def load_config(path: str | Path) -> TrainConfig:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {error}") from error
    try:
        return config_from_dict(data)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def _check_values(config: TrainConfig) -> None:
    positive = {"total_steps": config.total_steps, "threads": config.threads,
                "checkpoint_every": config.checkpoint_every,
                "model.channels": config.model.channels, "model.blocks": config.model.blocks,
                "selfplay.envs": config.selfplay.envs, "selfplay.max_moves": config.selfplay.max_moves,
                "selfplay.pool_size": config.selfplay.pool_size,
                "selfplay.snapshot_every": config.selfplay.snapshot_every,
                "ppo.steps_per_update": config.ppo.steps_per_update, "ppo.epochs": config.ppo.epochs,
                "ppo.minibatch": config.ppo.minibatch, "eval.every": config.eval.every,
                "eval.games": config.eval.games, "eval.final_games": config.eval.final_games,
                "eval.max_moves": config.eval.max_moves}
    for key, value in positive.items():
        if value < 1:
            raise ConfigError(f"config key {key} must be >= 1, got {value}")
    fractions = {"selfplay.pool_fraction": config.selfplay.pool_fraction,
                 "selfplay.baseline_fraction": config.selfplay.baseline_fraction}
    for key, value in fractions.items():
        if not 0.0 <= value <= 1.0:
            raise ConfigError(f"config key {key} must be in [0, 1], got {value}")
    if config.model.lookahead < 0:
        raise ConfigError(f"config key model.lookahead must be >= 0 (0 = off), got "
                          f"{config.model.lookahead}")
    if config.ppo.target_kl < 0:
        raise ConfigError(f"config key ppo.target_kl must be >= 0 (0 = off), got "
                          f"{config.ppo.target_kl}")
    if config.selfplay.pool_fraction + config.selfplay.baseline_fraction > 1.0:
        raise ConfigError("selfplay.pool_fraction + selfplay.baseline_fraction must be <= 1")
    if config.model.channels % 8:
        raise ConfigError(f"config key model.channels must be a multiple of 8, got "
                          f"{config.model.channels}")
