"""The Gumbel AlphaZero run configuration: typed dataclasses loaded from YAML dicts.

Every key is documented here (one comment each). An unknown key, a wrong type or a value out
of its range raises :class:`AZConfigError` (a ValueError) naming the key and the value.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from training.common.config import NORMS, ConfigError, DistributedConfig, distributed_from_dict


class AZConfigError(ValueError):
    """A bad AlphaZero configuration key or value."""


@dataclass
class AZModelConfig:
    channels: int = 32  # width of the residual CNN (training.common.network.PolicyValueNet)
    blocks: int = 2  # residual blocks in the trunk
    ownership: bool = False  # auxiliary ownership head (KataGo): trained to predict, per cell,
                             # who controls the colony of the satellite there at the game's end
    landing_values: bool = False  # one landing-cell map per value of the moving satellite
    max_pool: bool = False  # the value head pools the board's maximum as well as its mean
    norm: str = "group"  # group (GroupNorm) or none (SkipInit: biases and a zero-initialised
                         # residual gain; faster on a CPU)
    global_pool: bool = False  # each residual block adds a bias from its channels' board mean
                               # and maximum (KataGo's global pooling)


@dataclass
class AZSearchConfig:
    games: int = 128  # self-play games in flight (one batched forward per simulation step)
    max_moves: int = 400  # move cap of self-play games (R20); capped games are still scored
    full_simulations: int = 32  # simulations of a full search (its move is a policy target)
    cheap_simulations: int = 8  # simulations of a cheap search (value target only)
    full_fraction: float = 0.25  # playout-cap randomisation: share of moves with a full search
    max_considered: int = 16  # Gumbel-top-k: root actions sampled for sequential halving
    c_visit: float = 50.0  # sigma(q) = (c_visit + max visits) * c_scale * q
    c_scale: float = 0.1  # (mctx defaults)
    rescale_q: bool = True  # min-max rescale the completed q to [0, 1] at each node (mctx)
    win_check: bool = False  # a new leaf whose player to move can end the game at once with a
                             # win (R16-R23, two plies of the rules) is valued +1 exactly, no
                             # network call (self-play and az: agents of the run)
    noise_moves: int = 0  # 0: Gumbel root noise on every self-play move; N > 0: on each game's
                          # first N moves only, deterministic searches (g = 0) after them
    random_moves: float = 0.0  # epsilon-exploration: share of self-play moves (either colour)
                               # played uniformly at random among the legal ones (cheap search,
                               # no policy target; the game's result is still every value target)
    dagger: float = 0.0  # share of self-play games in which one colour (either, drawn per
                         # game) plays the raw policy's move (the prior's most likely action,
                         # as the raw-policy agent does) instead of its search's choice; its
                         # positions are searched and stored as ever (DAgger: the states the
                         # raw policy leads to, labelled by the search)
    dagger_until: float = 1.0  # share of the run (of total_positions, counted in whole
                               # iterations) during which new games may get a dagger colour;
                               # after it none do (games in flight finish as they began)
    random_opponent: float = 0.0  # share of self-play games in which one colour (either, drawn
                                  # per game) plays every move uniformly at random: opponents
                                  # unlike the network itself (a league's weakest member); its
                                  # moves are cheap searches: value targets, no policy target


@dataclass
class AZReplayConfig:
    capacity: int = 50_000  # positions kept (ring buffer: the oldest are overwritten)
    replay_ratio: float = 4.0  # positions trained on per new position (= average number of
                               # times each position is sampled once the buffer is full)
    batch_size: int = 256  # positions per gradient step
    min_positions: int = 2_000  # no training until the buffer holds this many
    symmetries: bool = True  # train on a random one of the 8 board symmetries of each sample
    cheap_value_targets: bool = True  # cheap-search positions are value targets
    cheap_policy_weight: float = 0.0  # weight of a cheap search's improved policy as a policy
                                      # target (a full search's weighs 1; KataGo's is 0)
    value_mix: float = 0.0  # value target = (1 - value_mix) x game result + value_mix x the
                            # root value of the position's own search
    td_lambda: float = 1.0  # value target: 1 is the game's result; below 1 the TD(lambda)
                            # return, bootstrapped from the following positions' root values
    policy_batch_size: int = 0  # extra positions per gradient step, drawn uniformly among the
                                # buffer's policy targets (full searches), beside batch_size
    capped_value: float = 1.0  # value target of a game the training cap stopped (search.
                               # max_moves, R20's truncation): this share of its R22/R23 score
                               # at the cap (1: the score; 0: no result, as a draw)
    surprise_weight: float = 0.0  # policy surprise weighting (KataGo): this share of a game's
                                  # policy weight goes to its full searches in proportion to
                                  # KL(improved policy || prior), the rest uniformly; 0: off


@dataclass
class AZOptimConfig:
    learning_rate: float = 1e-3  # Adam step size (the peak, when a schedule decays it)
    lr_schedule: str = "constant"  # constant, linear or cosine: decay over total_positions
    lr_final: float = 0.1  # the step size at the end of the run, as a share of learning_rate
    weight_decay: float = 1e-4  # L2 penalty (AdamW-style decoupled)
    value_coef: float = 1.0  # weight of the value loss (mean squared error)
    ownership_coef: float = 1.0  # weight of the ownership loss (mean squared error per cell)
    max_grad_norm: float = 5.0  # gradient clipping (global L2 norm)
    ema_decay: float = 0.0  # 0: off. Above 0 the evaluated network (the checks, the final
                            # evaluation, final.pt and checkpoint:/az: of a run) is an
                            # exponential moving average of the trained weights, updated after
                            # every gradient step with this decay; self-play and the gradient
                            # steps use the trained weights, so the run itself is unchanged


@dataclass
class AZEvalConfig:
    every: int = 10  # iterations between evaluations of the raw policy
    games: int = 20  # games per opponent (colours balanced)
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])  # agent specs
    final_games: int = 200  # games per opponent in the final evaluation (raw policy)
    final_search_games: int = 0  # extra final games per opponent with the search agent (0 = none)
    search_simulations: int = 16  # simulations of that search agent
    max_moves: int = 400  # move cap of evaluation games (the standard R20 cap)


@dataclass
class AZConfig:
    learner: str = "alphazero"  # which learner this config is for (always "alphazero")
    seed: int = 0  # seeds set-ups, Gumbel noise, playout caps, sampling, network init
    total_positions: int = 50_000  # self-play moves searched in the whole run
    positions_per_iteration: int = 1_024  # self-play moves between training phases
    threads: int = 2  # torch CPU threads for the gradient steps (inference and numba use one)
    overlap: bool = False  # self-play runs while the learner trains on the previous iteration's
                           # positions (one iteration stale; two cores: threads must be 1)
    device: str = "auto"  # the network's device: auto (cuda when available, else cpu), cpu,
                          # cuda or cuda:N; self-play trees and the engine stay on the CPU
    checkpoint_every: int = 10  # iterations between checkpoints
    model: AZModelConfig = field(default_factory=AZModelConfig)
    search: AZSearchConfig = field(default_factory=AZSearchConfig)
    replay: AZReplayConfig = field(default_factory=AZReplayConfig)
    optim: AZOptimConfig = field(default_factory=AZOptimConfig)
    eval: AZEvalConfig = field(default_factory=AZEvalConfig)
    # where self-play runs: the same section, keys, checks and messages as PPO's
    # (training/common/config.py, DistributedConfig); the workers share search.games
    distributed: DistributedConfig = field(default_factory=DistributedConfig)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "AZConfig":
        return az_config_from_dict(data)


LR_SCHEDULES = ("constant", "linear", "cosine")


def scheduled_lr(optim: AZOptimConfig, progress: float) -> float:
    """The step size at `progress` (share of total_positions played, clipped to [0, 1]):
    learning_rate, decayed linearly or along a half cosine to lr_final x learning_rate."""
    progress = min(max(progress, 0.0), 1.0)
    if optim.lr_schedule == "constant":
        return optim.learning_rate
    decay = (1.0 - progress if optim.lr_schedule == "linear"
             else 0.5 * (1.0 + math.cos(math.pi * progress)))
    return optim.learning_rate * (optim.lr_final + (1.0 - optim.lr_final) * decay)


# key -> (low, high, low inclusive); None = unbounded on that side
_RANGES: dict[str, tuple] = {
    "seed": (0, None, True),
    "total_positions": (1, None, True),
    "positions_per_iteration": (1, None, True),
    "threads": (1, 256, True),
    "checkpoint_every": (1, None, True),
    "model.channels": (8, 512, True),
    "model.blocks": (0, 64, True),
    "search.games": (1, 4096, True),
    "search.max_moves": (1, None, True),
    "search.full_simulations": (1, 1024, True),
    "search.cheap_simulations": (1, 1024, True),
    "search.full_fraction": (0.0, 1.0, True),
    "search.max_considered": (1, 256, True),
    "search.c_visit": (0.0, None, True),
    "search.c_scale": (0.0, None, False),
    "search.noise_moves": (0, None, True),
    "search.random_moves": (0.0, 1.0, True),
    "search.random_opponent": (0.0, 1.0, True),
    "search.dagger": (0.0, 1.0, True),
    "search.dagger_until": (0.0, 1.0, True),
    "replay.capacity": (1, None, True),
    "replay.replay_ratio": (0.0, None, False),
    "replay.batch_size": (1, None, True),
    "replay.policy_batch_size": (0, None, True),
    "replay.min_positions": (1, None, True),
    "replay.value_mix": (0.0, 1.0, True),
    "replay.td_lambda": (0.0, 1.0, True),
    "replay.capped_value": (0.0, 1.0, True),
    "replay.cheap_policy_weight": (0.0, 1.0, True),
    "replay.surprise_weight": (0.0, 1.0, True),
    "optim.learning_rate": (0.0, 1.0, False),
    "optim.lr_final": (0.0, 1.0, True),
    "optim.weight_decay": (0.0, 1.0, True),
    "optim.value_coef": (0.0, None, True),
    "optim.ownership_coef": (0.0, None, True),
    "optim.max_grad_norm": (0.0, None, False),
    "optim.ema_decay": (0.0, 0.99999, True),
    "eval.every": (1, None, True),
    "eval.games": (0, None, True),
    "eval.final_games": (0, None, True),
    "eval.final_search_games": (0, None, True),
    "eval.search_simulations": (1, 1024, True),
    "eval.max_moves": (1, None, True),
}


def _check_type(value, kind, where: str):
    origin = typing.get_origin(kind)
    if origin is list:
        (item,) = typing.get_args(kind)
        if not isinstance(value, list):
            raise AZConfigError(f"{where}: expected a list, got {value!r}")
        return [_check_type(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if kind is bool:
        if not isinstance(value, bool):
            raise AZConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise AZConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise AZConfigError(f"{where}: expected a finite number, got {value!r}")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise AZConfigError(f"{where}: expected a string, got {value!r}")
        return value
    raise AZConfigError(f"{where}: unsupported type {kind!r}")  # pragma: no cover


def _build(cls, data, prefix: str):
    if not isinstance(data, dict):
        raise AZConfigError(f"{prefix or 'config'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise AZConfigError(f"unknown key {prefix + unknown[0]!r} (known: {', '.join(sorted(names))})")
    values = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        where = prefix + f.name
        kind = hints[f.name]
        if dataclasses.is_dataclass(kind):
            values[f.name] = _build(kind, data[f.name], where + ".")
            continue
        value = _check_type(data[f.name], kind, where)
        if where in _RANGES:
            low, high, low_inclusive = _RANGES[where]
            bad = (low is not None and (value < low if low_inclusive else value <= low)) or (
                high is not None and value > high)
            if bad:
                span = (f"{'>=' if low_inclusive else '>'} {low}" if high is None
                        else f"in {'[' if low_inclusive else '('}{low}, {high}]")
                raise AZConfigError(f"{where} must be {span}, got {value!r}")
        values[f.name] = value
    return cls(**values)


def az_config_from_dict(data: dict) -> AZConfig:
    """An AZConfig from a (YAML) dict; missing keys take their defaults."""
    distributed = data.get("distributed", {}) if isinstance(data, dict) else {}
    if isinstance(data, dict):  # built by the shared code below, not by _build
        data = {key: value for key, value in data.items() if key != "distributed"}
    config = _build(AZConfig, data, "")
    if config.learner != "alphazero":
        raise AZConfigError(f"learner must be 'alphazero' for this config, got {config.learner!r}")
    s = config.search
    if s.cheap_simulations > s.full_simulations:
        raise AZConfigError(f"search.cheap_simulations ({s.cheap_simulations}) must be <= "
                            f"search.full_simulations ({s.full_simulations})")
    if config.model.channels % 8:
        raise AZConfigError(f"model.channels must be a multiple of 8 (GroupNorm groups), got "
                            f"{config.model.channels}")
    if not (config.device in ("auto", "cpu", "cuda")
            or (config.device.startswith("cuda:") and config.device[5:].isdigit())):
        raise AZConfigError(f"device must be auto, cpu, cuda or cuda:N, got {config.device!r}")
    if config.model.norm not in NORMS:
        raise AZConfigError(f"model.norm must be one of {', '.join(NORMS)}, got "
                            f"{config.model.norm!r}")
    if config.optim.lr_schedule not in LR_SCHEDULES:
        raise AZConfigError(f"optim.lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got "
                            f"{config.optim.lr_schedule!r}")
    if config.overlap and config.threads != 1:
        raise AZConfigError(f"overlap: true runs self-play and the gradient steps on one torch "
                            f"thread each; set threads: 1 (got {config.threads})")
    for spec in config.eval.opponents:
        if not spec:
            raise AZConfigError("eval.opponents: an empty agent spec")
    try:
        config.distributed = distributed_from_dict(distributed, s.games, "search.games")
    except ConfigError as error:
        raise AZConfigError(str(error)) from None
    return config


def load_az_config(path: str | Path) -> AZConfig:
    """Read a YAML file into an AZConfig (AZConfigError names what is wrong)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise AZConfigError(f"{path}: not valid YAML: {error}") from error
    return az_config_from_dict(data or {})
