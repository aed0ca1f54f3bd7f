"""The config schema: `setting` and `section` fields, the `Config` base of the learners'
configs, and the checks that build a config from a (YAML) mapping."""

from __future__ import annotations

import copy
import dataclasses
import math
import typing
from collections.abc import Callable
from dataclasses import dataclass, field

from satellites_env.core.checks import quoted
from satellites_env.placement import BACKEND_KINDS, Placement

#: where self-play runs (training/distributed/pool.py): in this process in turn, in threads,
#: or in Ray actors (each names a placement kind: satellites_env.placement)
BACKENDS = tuple(BACKEND_KINDS)
#: the trunk's normalisations (training/common/network.py)
NORMS = ("group", "none")
#: the longest move cap a config may set (R20); the state's move counter is an int32
MAX_MOVES = 100_000


if typing.TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = typing.TypeVar("T")
#: a dataclass (a config or one of its sections)
D = typing.TypeVar("D", bound="DataclassInstance")
#: a learner's config class
C = typing.TypeVar("C", bound="Config")


class ConfigError(ValueError):
    """A bad configuration file or value."""


def setting(
    default: typing.Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    choices: tuple[str, ...] | None = None,
    doc: str = "",
    spec: bool = False,
) -> typing.Any:
    """A config field: its default, its bounds (`low`/`high`, open with `low_open` /
    `high_open`), the values it may take (`choices`), one line for the reference, and with
    `spec`, that it holds agent specs (a spec, a list of them, or a mapping keyed by them),
    compared by their canonical spelling."""
    metadata = {
        "spec": spec,
        "low": low,
        "high": high,
        "low_open": low_open,
        "high_open": high_open,
        "choices": choices,
        "doc": doc,
    }
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def section(kind: Callable[[], T], doc: str = "") -> T:
    """A nested section of a config (a dataclass of settings)."""
    return field(default_factory=kind, metadata={"doc": doc})


class NetworkSettings(typing.Protocol):
    """A config's `model:` section, as far as building a network of it needs
    ([`network_for`][training.common.network.network_for])."""

    channels: int
    blocks: int
    landing_values: bool
    norm: str


@dataclass
class EvalConfig:
    """`eval:` how the learner's policy is measured during and after the run."""

    every: int = setting(10, 1, 10**6, doc="iterations (updates) between evaluations")
    games: int = setting(
        20, 0, 100_000, doc="games per opponent in each evaluation (colours balanced; 0 = none)"
    )
    opponents: list[str] = setting(
        ["random", "greedy"], doc="agent specs played against", spec=True
    )
    final: dict[str, int] = setting(
        {"random": 100, "greedy": 100},
        0,
        100_000,
        doc="the final evaluation: agent spec -> games against it (colours balanced)",
        spec=True,
    )
    max_moves: int = setting(400, 1, MAX_MOVES, doc="move cap of evaluation games (R20)")


@dataclass
class DistributedConfig:
    """`distributed:` where self-play runs; every key may change on `--resume`, and
    `--ray [ADDRESS]` runs a session on Ray instead of the backend and address here (the
    config is not changed: `satellites_env.placement.Placement.of_config`)."""

    backend: str = setting(
        "local",
        choices=BACKENDS,
        doc="local: generators in this process, one after the other; "
        "thread: side by side in threads; ray: Ray actors (the `ray` "
        "extra)",
    )
    address: str = setting(
        "",
        doc="the Ray cluster to join (auto, or what `ray start --head` prints); empty: a local Ray",
    )
    workers: int = setting(
        1, 1, 1024, doc="self-play generators; the games in flight are split among them"
    )
    cpus_per_worker: float = setting(
        1.0, 0.0, 256.0, low_open=True, doc="Ray CPUs per generator actor (its torch threads)"
    )
    gpus_per_worker: float = setting(
        0.0,
        0.0,
        64.0,
        doc="Ray GPUs per generator actor, for a cluster with "
        "GPUs (AlphaZero's network uses it unless device: cpu)",
    )
    timeout: float = setting(
        600.0,
        0.0,
        7 * 24 * 3600.0,
        low_open=True,
        doc="seconds a generator may take for one batch before it is replaced",
    )
    max_replacements: int = setting(
        16, 0, 10**6, doc="dead generator actors replaced in one session before the run stops"
    )


@dataclass
class Config:
    """What every learner's config has. A subclass names its learner
    (`class PPOConfig(Config, learner="ppo")`), its own sections, the key of its length
    (`TOTAL`) and the keys `--resume` may change besides the common ones."""

    learner: str = setting("", doc="the learner that reads this file: ppo or alphazero")
    seed: int = setting(0, 0, 2**32 - 1, doc="seeds everything random in the run")
    threads: int = setting(2, 1, 256, doc="torch CPU threads of the gradient steps")
    checkpoint_every: int = setting(
        10, 1, 10**6, doc="iterations (updates) between checkpoints (one at the end too)"
    )
    minutes: float = setting(
        0.0,
        0.0,
        10**6,
        doc="a time budget for the whole run, final table included (summed over "
        "sessions): training and its evaluations end at 80% of it or at the run's "
        "length, whichever comes first, and the final table's games stop where the "
        "rest runs out; 0: none",
    )
    cpu_minutes: float = setting(
        0.0,
        0.0,
        10**6,
        doc="a budget of CPU time: the run ends after this many minutes of its "
        "process's CPU time in training (all its threads; summed over sessions) or "
        "at its length, whichever comes first; not with Ray self-play (its actors' "
        "time is not counted); 0: none",
    )
    distributed: DistributedConfig = field(
        default_factory=DistributedConfig, metadata={"doc": "where self-play runs"}
    )
    eval: EvalConfig = section(EvalConfig)

    #: learner name -> config class, filled by the subclasses (`import training` imports
    #: them all)
    LEARNERS: typing.ClassVar[dict[str, type[Config]]] = {}
    #: the learner a subclass is the config of (its `learner=` class argument)
    LEARNER: typing.ClassVar[str] = ""
    #: the key of the run's length (total_steps, total_positions)
    TOTAL: typing.ClassVar[str] = ""
    #: the `eval:` keys of the final table's games (opponent -> games); all of them at 0, the
    #: run plays no final table
    FINAL_TABLES: typing.ClassVar[tuple[str, ...]] = ("final",)
    #: settings `--resume` may change: they extend or re-pace a run without changing what it
    #: learns from so far (and TOTAL)
    RESUMABLE: typing.ClassVar[tuple[str, ...]] = (
        "threads",
        "checkpoint_every",
        "minutes",
        "cpu_minutes",
        "eval.every",
        "eval.games",
        "eval.final",
        "distributed.backend",
        "distributed.address",
        "distributed.workers",
        "distributed.cpus_per_worker",
        "distributed.gpus_per_worker",
        "distributed.timeout",
        "distributed.max_replacements",
    )
    #: the key of the games in flight, which the distributed workers share
    GAMES: typing.ClassVar[str] = ""

    def __init_subclass__(cls, learner: str = "", **kwargs: typing.Any) -> None:
        super().__init_subclass__(**kwargs)
        if learner:
            cls.LEARNER = learner
            Config.LEARNERS[learner] = cls

    @property
    def total(self) -> int:
        total: int = getattr(self, self.TOTAL)
        return total

    @property
    def resumable(self) -> tuple[str, ...]:
        return (self.TOTAL, *self.RESUMABLE)

    def to_dict(self) -> dict[str, typing.Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(
        cls: type[C],
        data: typing.Any,
        check_agents: bool = False,
        allow_pickle: bool = False,
        typed: tuple[str, ...] = (),
    ) -> C:
        """The checked config of this learner from a (YAML) mapping (`learner:` may be left
        out); missing keys take their defaults. With `check_agents` its agents and files are
        checked too (`check_files`: `allow_pickle` and `typed` as there)."""
        if not isinstance(data, dict):
            raise ConfigError(f"the config must be a mapping, got {type(data).__name__}")
        learner = data.get("learner", cls.LEARNER)
        if learner != cls.LEARNER:
            raise ConfigError(
                f"learner must be {cls.LEARNER!r} for this config, got {quoted(learner)}"
            )
        config = build(cls, {**data, "learner": learner})
        config.check()
        if check_agents:
            config.check_files(allow_pickle, typed)
        return config

    def value(self, key: str) -> typing.Any:
        """The value of a dotted key (`search.games`)."""
        value: typing.Any = self
        for part in key.split("."):
            value = getattr(value, part)
        return value

    def check(self) -> None:
        """Checks across keys (ConfigError); a subclass adds its own."""
        from satellites_env.agents import canonical_spec

        # one agent spelled two ways (mcts:5, mcts:05) is one agent
        if len({canonical_spec(s) for s in self.eval.opponents}) != len(self.eval.opponents):
            raise ConfigError(f"eval.opponents lists an opponent twice: {self.eval.opponents}")
        if len({canonical_spec(s) for s in self.eval.final}) != len(self.eval.final):
            raise ConfigError(f"eval.final lists an opponent twice: {list(self.eval.final)}")
        if not self.eval.opponents:
            raise ConfigError("eval.opponents must name at least one agent spec")
        if not self.eval.final:
            raise ConfigError("eval.final must name at least one agent spec")
        d = self.distributed
        if d.address and d.backend != "ray":
            raise ConfigError(
                f"distributed.address {d.address!r} is set but "
                f"distributed.backend is {d.backend!r}: set backend: ray (or pass "
                f"--ray ADDRESS)"
            )
        if d.address != d.address.strip() or any(c.isspace() for c in d.address):
            raise ConfigError(f"distributed.address must not contain spaces, got {d.address!r}")
        try:
            placement = Placement.of_config(d)
        except ValueError as error:
            raise ConfigError(f"distributed: {error}") from None
        self.check_placement(placement)

    def check_placement(self, placement: Placement) -> None:
        """ConfigError unless self-play can run at `placement`: the config's own, or the one
        of a session's `--ray` (some settings hold with one placement and not another)."""
        if self.cpu_minutes and placement.on_ray:
            raise ConfigError(
                "cpu_minutes counts this process's CPU time, not the Ray actors' that play "
                "self-play: use minutes with distributed.backend: ray (or --ray), or a local "
                "backend (thread, local) with cpu_minutes"
            )
        if placement.kind == "processes":
            raise ConfigError(
                "self-play runs in this process, in threads or on Ray, not in worker processes"
            )
        games = self.value(self.GAMES)
        if placement.workers > games:
            raise ConfigError(
                f"distributed.workers ({placement.workers}) must be <= {self.GAMES} "
                f"({games}): the games in flight are split among them"
            )

    def check_files(self, allow_pickle: bool = False, typed: tuple[str, ...] = ()) -> None:
        """ConfigError unless the agents and files the config names load (the agent checks,
        `allow_pickle` and `typed` as there); a learner adds checks of its own files."""
        check_agents_of(self, allow_pickle, typed)

    def agent_specs(self) -> list[tuple[str, str]]:
        """(key, agent spec) of every agent the run will build from its config."""
        return [(f"eval.opponents[{i}]", spec) for i, spec in enumerate(self.eval.opponents)] + [
            (f"eval.final[{spec!r}]", spec) for spec in self.eval.final
        ]


def build(cls: type[D], data: typing.Any, where: str = "", base: object | None = None) -> D:
    """An instance of the dataclass `cls` from a (YAML) mapping, every key checked; missing
    keys take their defaults, or with `base` (an object with the fields of `cls`, a section
    a dataclass too) its values: the mapping over `base`."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'the config'} must be a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted((k for k in data if k not in fields), key=repr)
    if unknown:
        name = unknown[0] if isinstance(unknown[0], str) else repr(unknown[0])
        raise ConfigError(
            f"unknown config key {where + '.' if where else ''}{clip(name)}; "
            f"known keys{' in ' + where if where else ''}: "
            f"{', '.join(sorted(fields))}"
        )
    values = {}
    if base is not None:
        values = {name: copy.deepcopy(getattr(base, name)) for name in fields}
    for name, value in data.items():
        key = f"{where}.{name}" if where else name
        expected = hints[name]
        if isinstance(expected, type) and dataclasses.is_dataclass(expected):
            values[name] = build(expected, value, key, values.get(name))
        else:
            values[name] = _checked(key, _typed(key, value, expected), fields[name].metadata)
    return cls(**values)


_TYPE_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _typed(key: str, value: typing.Any, expected: typing.Any) -> typing.Any:
    if typing.get_origin(expected) is dict:
        _, item = typing.get_args(expected)
        if not isinstance(value, dict) or not all(type(k) is str for k in value):
            raise ConfigError(f"{key} must be a mapping of strings, got {quoted(value)}")
        return {k: _typed(f"{key}[{k!r}]", v, item) for k, v in value.items()}
    if typing.get_origin(expected) is list:
        (item,) = typing.get_args(expected)
        if not isinstance(value, list) or not all(type(v) is item for v in value):
            raise ConfigError(f"{key} must be a list of {item.__name__}, got {quoted(value)}")
        return list(value)
    if expected is float and type(value) is int:
        return float(value)
    if expected is int and type(value) is float and math.isfinite(value) and value.is_integer():
        return int(value)  # `total_steps: 2e5`
    if type(value) is not expected:
        raise ConfigError(
            f"{key} must be {_TYPE_NAMES[expected]}, got {quoted(value)} ({type(value).__name__})"
        )
    return value


def _checked(key: str, value: typing.Any, meta: typing.Mapping[str, typing.Any]) -> typing.Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{key} must be a finite number, got {value}")
    if meta.get("choices") and value not in meta["choices"]:
        raise ConfigError(f"{key} must be one of {', '.join(meta['choices'])}, got {quoted(value)}")
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not item:
                raise ConfigError(f"{key}[{i}] is an empty string")
        return value
    if isinstance(value, dict):
        for name, item in value.items():
            if not name:
                raise ConfigError(f"{key} names an empty agent spec")
            _checked(f"{key}[{name!r}]", item, meta)
        return value
    if isinstance(value, str) and len(value) > 1000:
        raise ConfigError(f"{key} is longer than 1000 characters")
    low, high = meta.get("low"), meta.get("high")
    if (low is None and high is None) or isinstance(value, (bool, str)):
        return value
    above = low is None or (value > low if meta["low_open"] else value >= low)
    below = high is None or (value < high if meta["high_open"] else value <= high)
    if not (above and below):
        raise ConfigError(f"{key} must be {describe_range(meta)}, got {_number(value)}")
    return value


def describe_range(meta: typing.Mapping[str, typing.Any]) -> str:
    """`>= 1`, `> 0`, `<= 4096`, `in [0, 1]`, `in (0, 1)` for a setting's bounds."""
    low, high = meta.get("low"), meta.get("high")
    if high is None:
        return f"{'>' if meta['low_open'] else '>='} {_number(low)}"
    if low is None:
        return f"{'<' if meta['high_open'] else '<='} {_number(high)}"
    return (
        f"in {'(' if meta['low_open'] else '['}{_number(low)}, {_number(high)}"
        f"{')' if meta['high_open'] else ']'}"
    )


def _number(value: typing.Any) -> str:
    return quoted(value) if isinstance(value, int) else f"{value:g}"


def clip(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def config_from_dict(
    data: typing.Any,
    check_agents: bool = True,
    allow_pickle: bool = False,
    typed: tuple[str, ...] = (),
) -> Config:
    """The checked config of a (YAML) mapping; its `learner:` key picks the learner (ppo when
    it names none). With `check_agents` the agent specs it names are built once (known names
    and arguments, `checkpoint:PATH` files that exist and load), each through the gate of
    specs read from a file (`check_agents_of`)."""
    if not isinstance(data, dict):
        raise ConfigError(f"the config must be a mapping, got {type(data).__name__}")
    learner = data.get("learner", "ppo")
    if not isinstance(learner, str) or learner not in Config.LEARNERS:
        raise ConfigError(
            f"learner must be one of {', '.join(Config.LEARNERS)}, got {quoted(learner)}"
        )
    return Config.LEARNERS[learner].from_dict(data, check_agents, allow_pickle, typed)


def check_agents_of(
    config: Config, allow_pickle: bool = False, typed: tuple[str, ...] = ()
) -> None:
    """ConfigError unless every agent spec of `config` builds (the one grammar of specs:
    `make_agent` itself; a `checkpoint:PATH` is loaded and checked now, not at the first
    evaluation; an agent named under several keys is built once). A spec comes from the file,
    so it passes the gate of specs read from a file first (`check_spec_from_file`: one that
    may unpickle is refused, never built, unless `allow_pickle`), except the specs in `typed`,
    which the user typed on the command line and the caller has built already."""
    from satellites_env.agents import canonical_spec, check_spec_from_file, make_agent

    built = {canonical_spec(spec) for spec in typed}
    specs = [(key, spec, canonical_spec(spec)) for key, spec in config.agent_specs()]
    for key, spec, canonical in specs:  # every spec through the gate before any is built
        if canonical not in built:
            try:
                check_spec_from_file(spec, key, allow_pickle)
            except ValueError as error:
                raise ConfigError(str(error)) from None
    for key, spec, canonical in specs:
        if canonical in built:
            continue
        try:
            make_agent(spec, seed=0)
        except ValueError as error:
            raise ConfigError(f"{key}: {error}") from None
        built.add(canonical)


def differences(old: Config, new: Config) -> dict[str, tuple[typing.Any, typing.Any]]:
    """{dotted key: (old value, new value)} for every setting that differs, agent specs
    compared by their canonical spelling (`mcts:05` is `mcts:5`)."""
    before, after = flatten(_canonical(old)), flatten(_canonical(new))
    return {
        key: (before.get(key), after.get(key))
        for key in before.keys() | after.keys()
        if before.get(key) != after.get(key)
    }


def _canonical(config: typing.Any) -> dict[str, typing.Any]:
    """A config (or section) as a dict, the agent specs of its `spec` fields canonical."""
    from satellites_env.agents import canonical_spec

    data: dict[str, typing.Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value):
            data[f.name] = _canonical(value)
        elif f.metadata.get("spec") and isinstance(value, str):
            data[f.name] = canonical_spec(value) if value else value
        elif f.metadata.get("spec") and isinstance(value, list):
            data[f.name] = [canonical_spec(v) for v in value]
        elif f.metadata.get("spec") and isinstance(value, dict):
            data[f.name] = {canonical_spec(k): v for k, v in value.items()}
        else:
            data[f.name] = copy.deepcopy(value)
    return data


def flatten(data: dict[str, typing.Any], prefix: str = "") -> dict[str, typing.Any]:
    flat: dict[str, typing.Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
