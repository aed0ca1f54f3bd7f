"""Run configuration: a typed dataclass loaded from YAML, every key documented.

Everything is checked before anything runs, and every problem is a ConfigError naming the file
and the key: an unknown or duplicate key, a section that is not a mapping, a value of the
wrong type, a number out of its range (NaN and infinities included), an agent spec that
names no agent, or a `checkpoint:PATH` opponent that does not exist or does not load.

Numbers are read as YAML 1.2 reads them: `5e-4` and `1e3` are floats (PyYAML's YAML 1.1
rules would make them strings), and an int key accepts a float with an integral value
(`total_steps: 2e5`).
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from training.distributed.pool import BACKENDS


# The trunk's normalisations (training.common.network.ResidualBlock); here so that configs
# check them without importing torch.
NORMS = ("group", "none")


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
    games: int = 20  # games per opponent (colors balanced)
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])  # agent specs
    final_games: int = 100  # games per opponent in the final evaluation
    max_moves: int = 400  # move cap of evaluation games (the standard R20 cap)


@dataclass
class DistributedConfig:
    # "local": generators in this process, in turn; "thread": in this process, side by side
    # (AlphaZero); "ray": Ray actors (the `ray` extra)
    backend: str = "local"
    address: str = ""  # Ray cluster to join ("auto", or the address `ray start --head` prints); "" = a local Ray
    workers: int = 1  # self-play generators; the games in flight are split among them (PPO: selfplay.envs, AlphaZero: search.games)
    cpus_per_worker: float = 1.0  # Ray CPUs reserved per generator actor (its torch threads, rounded down)
    gpus_per_worker: float = 0.0  # Ray GPUs per generator actor (PPO's self-play stays on the CPU; AlphaZero's network uses it unless device: cpu)
    timeout: float = 600.0  # seconds a generator may take for one batch before it is replaced
    max_replacements: int = 16  # dead generator actors replaced over a session before the run stops




@dataclass
class TrainConfig:
    learner: str = "ppo"  # which learner reads this file: "ppo" here (see training/train.py)
    seed: int = 0  # seeds set-ups, sampling, updates and evaluation
    total_steps: int = 200_000  # learner transitions in the whole run
    threads: int = 2  # torch CPU threads
    checkpoint_every: int = 10  # updates between checkpoints
    model: ModelConfig = field(default_factory=ModelConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    distributed: DistributedConfig = field(default_factory=DistributedConfig)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# Bounds beyond "positive": a typo such as `envs: 12800000` would otherwise exhaust memory
# when the trainer is built, long after the config was accepted.
MAX_SEED = 2**32 - 1
MAX_ENVS = 4096
MAX_CHANNELS = 1024  # as training.common.checkpoint.MAX_CHANNELS
MAX_BLOCKS = 64  # as training.common.checkpoint.MAX_BLOCKS
MAX_THREADS = 256
MAX_WORKERS = 1024


class _Loader(yaml.SafeLoader):
    """Safe YAML that reads floats as YAML 1.2 does and refuses duplicate keys."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping", node.start_mark,
                            f"found duplicate key {key!r} (first at line "
                            f"{seen[key].line + 1})", key_node.start_mark)
                    seen[key] = key_node.start_mark
                except TypeError:  # an unhashable key: SafeLoader reports it below
                    pass
        return super().construct_mapping(node, deep)


_Loader.yaml_implicit_resolvers = {
    first: list(resolvers) for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)
                |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                |[-+]?\.(?:inf|Inf|INF)
                |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))


def _build(cls, data: typing.Any, where: str):
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'the config'} must be a mapping, got "
                          f"{type(data).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted((k for k in data if k not in known), key=repr)
    if unknown:
        name = unknown[0] if isinstance(unknown[0], str) else repr(unknown[0])
        raise ConfigError(f"unknown config key {where + '.' if where else ''}{name}; "
                          f"known keys{' in ' + where if where else ''}: "
                          f"{', '.join(sorted(known))}")
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
            raise ConfigError(f"config key {key} must be a list of {item.__name__}, "
                              f"got {_show(value)}")
        return list(value)
    if expected is float and type(value) is int:
        return float(value)
    if (expected is int and type(value) is float and math.isfinite(value)
            and value.is_integer()):
        return int(value)  # `total_steps: 2e5`
    if type(value) is not expected:
        raise ConfigError(f"config key {key} must be {expected.__name__}, got {_show(value)} "
                          f"({type(value).__name__})")
    return value


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def config_from_dict(data: dict, check_agents: bool = True) -> TrainConfig:
    """Validated config from a plain dict (as read from YAML).

    With `check_agents` the agent specs (evaluation opponents and the baseline opponent) are
    checked too: known names and arguments, and `checkpoint:PATH` files that exist and load.
    """
    config = _build(TrainConfig, data, "")
    _check_values(config)
    if check_agents:
        _check_agents(config)
    return config


def read_yaml(path: str | Path) -> typing.Any:
    """The YAML document in `path` (floats as in YAML 1.2, duplicate keys refused)."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"config file {str(path)!r} is a directory")
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"config file {str(path)!r} cannot be read as UTF-8 text: "
                          f"{error}") from None
    return parse_yaml(text, str(path))


def parse_yaml(text: str, name: str = "<config>") -> typing.Any:
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {name!r} is not valid YAML: {error}") from None
    except Exception as error:  # noqa: BLE001 - PyYAML's constructors raise many kinds
        # e.g. ValueError for a timestamp such as 2001-02-30, RecursionError for nesting too
        # deep to read, IndexError for `!!float` with no value
        raise ConfigError(f"config file {name!r} is not valid YAML: "
                          f"{type(error).__name__}: {str(error)[:200]}") from None
    if data is None:
        raise ConfigError(f"config file {name!r} is empty (no keys, only blanks or comments)")
    return data


def load_config(path: str | Path, check_agents: bool = True) -> TrainConfig:
    """The validated config in the YAML file `path`; errors name the file and the key."""
    path = Path(path)
    data = read_yaml(path)
    try:
        return config_from_dict(data, check_agents)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def _check_values(config: TrainConfig) -> None:
    if config.learner != "ppo":
        raise ConfigError(f"learner must be 'ppo' for this config type, got {config.learner!r}")
    counts = {"total_steps": config.total_steps, "threads": config.threads,
              "checkpoint_every": config.checkpoint_every,
              "model.blocks": config.model.blocks,
              "selfplay.envs": config.selfplay.envs,
              "selfplay.max_moves": config.selfplay.max_moves,
              "selfplay.pool_size": config.selfplay.pool_size,
              "selfplay.snapshot_every": config.selfplay.snapshot_every,
              "ppo.steps_per_update": config.ppo.steps_per_update, "ppo.epochs": config.ppo.epochs,
              "ppo.minibatch": config.ppo.minibatch, "eval.every": config.eval.every,
              "eval.games": config.eval.games, "eval.final_games": config.eval.final_games,
              "eval.max_moves": config.eval.max_moves}
    for key, value in counts.items():
        if value < 1:
            raise ConfigError(f"{key} must be >= 1, got {value}")
    floats = {f"{section}.{f.name}": getattr(getattr(config, section), f.name)
              for section in ("model", "selfplay", "ppo") for f in
              dataclasses.fields(getattr(config, section)) if f.type in ("float", float)}
    for key, value in floats.items():
        if not math.isfinite(value):
            raise ConfigError(f"{key} must be a finite number, got {value}")
    upper = {"seed": (config.seed, MAX_SEED), "threads": (config.threads, MAX_THREADS),
             "selfplay.envs": (config.selfplay.envs, MAX_ENVS),
             "model.channels": (config.model.channels, MAX_CHANNELS),
             "model.blocks": (config.model.blocks, MAX_BLOCKS)}
    for key, (value, most) in upper.items():
        if value > most:
            raise ConfigError(f"{key} must be <= {most}, got {value}")
    if config.seed < 0:
        raise ConfigError(f"seed must be >= 0, got {config.seed}")
    if config.model.channels < 8 or config.model.channels % 8:
        raise ConfigError(f"model.channels must be a multiple of 8 (>= 8), got "
                          f"{config.model.channels}")
    ranges = {  # key: (value, low, low inclusive, high, high inclusive)
        "model.lookahead": (config.model.lookahead, 0.0, True, math.inf, False),
        "selfplay.pool_fraction": (config.selfplay.pool_fraction, 0.0, True, 1.0, True),
        "selfplay.baseline_fraction": (config.selfplay.baseline_fraction, 0.0, True, 1.0, True),
        "selfplay.shaping": (config.selfplay.shaping, 0.0, True, math.inf, False),
        "ppo.learning_rate": (config.ppo.learning_rate, 0.0, False, math.inf, False),
        "ppo.gamma": (config.ppo.gamma, 0.0, True, 1.0, True),
        "ppo.gae_lambda": (config.ppo.gae_lambda, 0.0, True, 1.0, True),
        "ppo.clip": (config.ppo.clip, 0.0, False, 1.0, False),
        "ppo.value_coef": (config.ppo.value_coef, 0.0, True, math.inf, False),
        "ppo.entropy_coef": (config.ppo.entropy_coef, 0.0, True, math.inf, False),
        "ppo.max_grad_norm": (config.ppo.max_grad_norm, 0.0, False, math.inf, False),
        "ppo.target_kl": (config.ppo.target_kl, 0.0, True, math.inf, False),
    }
    for key, (value, low, low_in, high, high_in) in ranges.items():
        above = value >= low if low_in else value > low
        below = value <= high if high_in else value < high
        if above and below:
            continue
        if high == math.inf:
            rule = f"{'>=' if low_in else '>'} {low:g}"
        else:
            rule = f"in {'[' if low_in else '('}{low:g}, {high:g}{']' if high_in else ')'}"
        raise ConfigError(f"{key} must be {rule}, got {value:g}")
    if config.selfplay.pool_fraction + config.selfplay.baseline_fraction > 1.0:
        raise ConfigError("selfplay.pool_fraction + selfplay.baseline_fraction must be <= 1, "
                          f"got {config.selfplay.pool_fraction} + "
                          f"{config.selfplay.baseline_fraction}")
    check_distributed(config.distributed, config.selfplay.envs, "selfplay.envs")
    if not config.eval.opponents:
        raise ConfigError("eval.opponents must name at least one agent spec")
    if len(set(config.eval.opponents)) != len(config.eval.opponents):
        raise ConfigError(f"eval.opponents lists an opponent twice: {config.eval.opponents}")


def distributed_from_dict(data: typing.Any, games: int, games_key: str) -> DistributedConfig:
    """The `distributed:` section of any learner's config, built and checked as PPO's is (the
    same keys, types and messages); `games` is the learner's games in flight (`games_key`),
    which the workers share. Raises ConfigError."""
    distributed = _build(DistributedConfig, data, "distributed")
    check_distributed(distributed, games, games_key)
    return distributed


def check_distributed(d: DistributedConfig, games: int, games_key: str) -> None:
    """ConfigError unless `d` can run: a known backend, an address only for Ray, at most one
    worker per game in flight (`games`, the config key `games_key`), sane resources."""
    if d.backend not in BACKENDS:
        raise ConfigError(f"distributed.backend must be one of {', '.join(BACKENDS)}, got "
                          f"{d.backend!r}")
    if d.address and d.backend != "ray":
        raise ConfigError(f"distributed.address {d.address!r} is set but distributed.backend "
                          f"is {d.backend!r}: set backend: ray (or pass --ray ADDRESS)")
    if d.address != d.address.strip() or any(c.isspace() for c in d.address):
        raise ConfigError(f"distributed.address must not contain spaces, got {d.address!r}")
    if not 1 <= d.workers <= MAX_WORKERS:
        raise ConfigError(f"distributed.workers must be in [1, {MAX_WORKERS}], got {d.workers}")
    if d.workers > games:
        raise ConfigError(f"distributed.workers ({d.workers}) must be <= {games_key} "
                          f"({games}): the games in flight are split among them")
    if d.max_replacements < 0:
        raise ConfigError(f"distributed.max_replacements must be >= 0, got {d.max_replacements}")
    for key, value, zero_ok, high in (("cpus_per_worker", d.cpus_per_worker, False, MAX_THREADS),
                                      ("gpus_per_worker", d.gpus_per_worker, True, 64.0),
                                      ("timeout", d.timeout, False, 7 * 24 * 3600.0)):
        if not (math.isfinite(value) and (value >= 0 if zero_ok else value > 0)
                and value <= high):
            raise ConfigError(f"distributed.{key} must be a finite number "
                              f"{'>= 0' if zero_ok else '> 0'} and <= {high:g}, got {value:g}")


def check_agent_spec(spec: str) -> None:
    """Raise AgentSpecError/CheckpointError (ValueErrors) unless `make_agent(spec)` works.

    Built once here through `make_agent` itself (the one grammar of specs): the baselines and
    MCTS cost nothing to build, and a `checkpoint:PATH` is loaded and checked, so a missing or
    bad file is found before training starts rather than at the first evaluation.
    """
    from satellites_env.agents import make_agent

    make_agent(spec, seed=0)


def _check_agents(config: TrainConfig) -> None:
    specs = [("selfplay.baseline_opponent", config.selfplay.baseline_opponent)]
    specs += [(f"eval.opponents[{i}]", spec) for i, spec in enumerate(config.eval.opponents)]
    for key, spec in specs:
        try:
            check_agent_spec(spec)
        except ValueError as error:
            raise ConfigError(f"{key}: {error}") from None
