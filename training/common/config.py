"""The one config system of both learners: typed dataclasses read from YAML, every key
documented, everything checked before anything runs.

A learner's config is a [`Config`][training.common.config.Config] subclass
(``training/ppo/config.py``, ``training/alphazero/config.py``) whose sections are dataclasses of
[`setting`][training.common.config.setting] fields: each field carries its default, its bounds and
one line of documentation, so the checks, the reference page (``docs/configs.md``, written by
``python -m training.common.config``) and the defaults come from one place. Every problem is a
[`ConfigError`][training.common.config.ConfigError] naming the key (and, read from a file, the
file): an unknown or duplicate key, a section that is not a mapping, a value of the wrong type, a
number out of its range (NaN and infinities included; every number has a ceiling the code can
honour), an agent spec that names no agent, or a `checkpoint:PATH` opponent that does not exist or
does not load.

Numbers are read as YAML 1.2 reads them (`parse_yaml`): `5e-4` and `1e3` are floats and
`1:30`, `0x10` and `yes` are strings, not YAML 1.1's 90, 16 and true; an int key accepts a
float with an integral value (`total_steps: 2e5`). A `--config` value names a file when it
contains a path separator or ends in `.yaml` or `.yml`, and a shipped config otherwise
(`config_path`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import os
import re
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from satellites_env.core.checks import quoted

#: where self-play runs (training/distributed/pool.py): in this process in turn, in threads,
#: or in Ray actors
BACKENDS = ("local", "thread", "ray")
#: the trunk's normalisations (training/common/network.py)
NORMS = ("group", "none", "batch")
#: a config file larger than this is not a config (and YAML aliases cannot blow it up)
MAX_CONFIG_BYTES = 1 << 20
#: the longest move cap a config may set (R20); the state's move counter is an int32
MAX_MOVES = 100_000


if typing.TYPE_CHECKING:
    from _typeshed import DataclassInstance
    from rich.console import Console

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
    `--ray [ADDRESS]` sets backend and address."""

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
        if self.cpu_minutes and d.backend == "ray":
            raise ConfigError(
                "cpu_minutes counts this process's CPU time, not the Ray actors' that play "
                "self-play: use minutes with distributed.backend: ray (or --ray), or a local "
                "backend (thread, local) with cpu_minutes"
            )
        if d.address and d.backend != "ray":
            raise ConfigError(
                f"distributed.address {d.address!r} is set but "
                f"distributed.backend is {d.backend!r}: set backend: ray (or pass "
                f"--ray ADDRESS)"
            )
        if d.address != d.address.strip() or any(c.isspace() for c in d.address):
            raise ConfigError(f"distributed.address must not contain spaces, got {d.address!r}")
        games = self.value(self.GAMES)
        if d.workers > games:
            raise ConfigError(
                f"distributed.workers ({d.workers}) must be <= {self.GAMES} "
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


# --------------------------------------------------------------------------- reading YAML


class _Loader(yaml.SafeLoader):
    """Safe YAML with YAML 1.2's plain scalars (see `parse_yaml`) that refuses duplicate keys."""

    def construct_mapping(
        self, node: typing.Any, deep: bool = False
    ) -> dict[typing.Any, typing.Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"found duplicate key {key!r} (first at line {seen[key].line + 1})",
                            key_node.start_mark,
                        )
                    seen[key] = key_node.start_mark
                except TypeError:  # an unhashable key: SafeLoader reports it below
                    pass
        mapping: dict[typing.Any, typing.Any] = super().construct_mapping(node, deep)
        return mapping


# PyYAML resolves plain scalars by YAML 1.1: `1:30` is 90, `0x10` 16, `010` 8, `1_000` 1000,
# `yes`/`on` true and `2001-02-03` a date. These resolvers keep only null and the merge key
# from it and read numbers and booleans as YAML 1.2's core schema does, in decimal; every other
# plain scalar is a string, so a number key refuses it instead of reading something else.
_YAML_1_1 = (
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:value",
)
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _YAML_1_1]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(  # before the float resolver, which also matches `12`
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
                |[-+]?\.(?:inf|Inf|INF)
                |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)
#: the most nodes a config may hold with its aliases expanded (a shipped one has about 100):
#: aliases and merge keys cannot make a small file cost more than this to read and check
MAX_CONFIG_NODES = 100_000
_INT = re.compile(r"^[-+]?[0-9]+$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))$"
)
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = ("", "~", "null", "Null", "NULL")


def _tagged(tag: str, form: str, read: Callable[[str], typing.Any]) -> None:
    """An explicit `!!TAG` reads only its YAML 1.2 core-schema forms (`form` says which):
    `!!int 1_000`, `!!bool yes` or `!!float 1:30` (YAML 1.1's) is an error, not a value."""

    def construct(loader: _Loader, node: typing.Any) -> typing.Any:
        text = loader.construct_scalar(node)
        try:
            return read(text)
        except (ValueError, KeyError):
            raise yaml.constructor.ConstructorError(
                None, None, f"!!{tag} {_clip(text, 40)!r} is not {form}", node.start_mark
            ) from None

    _Loader.add_constructor(f"tag:yaml.org,2002:{tag}", construct)


def _match(
    pattern: re.Pattern[str], convert: Callable[[str], typing.Any]
) -> Callable[[str], typing.Any]:
    def read(text: str) -> typing.Any:
        if not pattern.match(text):
            raise ValueError(text)
        return convert(text)

    return read


def _null(text: str) -> None:
    if text not in _NULLS:
        raise ValueError(text)


def _float(text: str) -> float:
    return float(text.lower().replace(".inf", "inf").replace(".nan", "nan"))


_tagged("int", "a decimal integer (YAML 1.2)", _match(_INT, lambda text: int(text, 10)))
_tagged("float", "a YAML 1.2 number such as 5e-4, .5 or .inf", _match(_FLOAT, _float))
_tagged("bool", "true or false (YAML 1.2)", lambda text: _BOOLS[text])
_tagged("null", "null, ~ or nothing (YAML 1.2)", _null)


def _refused(loader: _Loader, node: typing.Any) -> typing.Any:
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"the tag {node.tag.replace('tag:yaml.org,2002:', '!!')} is not one of YAML 1.2's "
        f"(a config holds !!str, !!int, !!float, !!bool, !!null, !!seq and !!map)",
        node.start_mark,
    )


for _tag in ("binary", "timestamp", "omap", "pairs", "set", "value", "yaml"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refused)


class _NotAConfig(ValueError):
    """A YAML document too large, with its aliases expanded, to be a config."""


def _expanded_size(root: typing.Any) -> int:
    """How many nodes the document `root` holds with its aliases expanded (each shared node
    counted where it appears), computed once per node; _NotAConfig above MAX_CONFIG_NODES or
    for a node inside itself (a recursive alias)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[typing.Any, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = (
            [n for pair in node.value for n in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
            if isinstance(node, yaml.SequenceNode)
            else []
        )
        if done:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[id(node)] > MAX_CONFIG_NODES:
                raise _NotAConfig(
                    f"it holds more than {MAX_CONFIG_NODES:,} values with its aliases "
                    f"expanded (line {node.start_mark.line + 1})"
                )
            continue
        if id(node) in open_nodes:
            raise ValueError(
                f"line {node.start_mark.line + 1}: an alias refers to a node inside itself"
            )
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise _NotAConfig(f"line {child.start_mark.line + 1}: an alias inside its own node")
            stack.append((child, False))
    return sizes[id(root)]


#: an exploiter config's section of settings that --init applies over the others (fine-tuning
#: a trained network); read by `satellites exploit`, never by the learner
FINE_TUNING = "fine_tuning"


def read_yaml(path: str | Path) -> typing.Any:
    """The YAML document in `path`, read as `parse_yaml` says."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"config file {str(path)!r} is a directory")
    if not path.is_file():
        raise ConfigError(
            f"config file {str(path)!r} does not exist"
            if not path.exists()
            else f"config file {str(path)!r} is not a regular file"
        )
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"config file {str(path)!r} is larger than "
                f"{MAX_CONFIG_BYTES // 1024} KiB: not a config"
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(
            f"config file {str(path)!r} cannot be read as UTF-8 text: {error}"
        ) from None
    return parse_yaml(text, str(path))


def parse_yaml(text: str, name: str = "<config>") -> typing.Any:
    """The YAML document in `text` (ConfigError naming `name` when it is not one).

    Plain scalars are read as YAML 1.2's core schema reads them, numbers in decimal: `12`,
    `-3`, `010` (ten), `5e-4`, `1e3`, `.5`, `.inf` and `.nan` are numbers; `true` and `false`
    (also `True`, `TRUE`, ...) booleans; `~`, `null` and nothing null. Everything else is a
    string: YAML 1.1's forms (`1:30`, `1_000`, `0b11`, `yes`, `off`, dates) and hexadecimal
    or octal (`0x10`, `0o17`). Duplicate keys are errors. An explicit tag reads only YAML
    1.2's forms (`!!int`, `!!float`, `!!bool`, `!!null`, `!!str`, `!!seq`, `!!map`; YAML 1.1's
    `!!binary`, `!!timestamp`, `!!set`, ... are refused). With its aliases expanded a document
    holds at most MAX_CONFIG_NODES values, so reading and checking it costs at most that."""
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _expanded_size(node)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except _NotAConfig as error:  # too large expanded, or an alias inside itself
        raise ConfigError(f"config file {name!r} is not a config: {error}") from None
    except yaml.MarkedYAMLError as error:  # one line: where, and what
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = " ".join(str(error.problem or error.context or "").split())
        raise ConfigError(
            f"config file {name!r} is not valid YAML: {where}{_clip(what, 200)}"
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(
            f"config file {name!r} is not valid YAML: {_clip(' '.join(str(error).split()), 200)}"
        ) from None
    except Exception as error:
        # e.g. ValueError for a timestamp such as 2001-02-30, RecursionError for nesting too
        # deep to read, IndexError for `!!float` with no value
        raise ConfigError(
            f"config file {name!r} is not valid YAML: {type(error).__name__}: {str(error)[:200]}"
        ) from None
    if data is None:
        raise ConfigError(f"config file {name!r} is empty (no keys, only blanks or comments)")
    return data


# --------------------------------------------------------------------------- building


def build(cls: type[D], data: typing.Any, where: str = "") -> D:
    """An instance of the dataclass `cls` from a (YAML) mapping, every key checked; missing
    keys take their defaults."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'the config'} must be a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted((k for k in data if k not in fields), key=repr)
    if unknown:
        name = unknown[0] if isinstance(unknown[0], str) else repr(unknown[0])
        raise ConfigError(
            f"unknown config key {where + '.' if where else ''}{_clip(name)}; "
            f"known keys{' in ' + where if where else ''}: "
            f"{', '.join(sorted(fields))}"
        )
    values = {}
    for name, value in data.items():
        key = f"{where}.{name}" if where else name
        expected = hints[name]
        if isinstance(expected, type) and dataclasses.is_dataclass(expected):
            values[name] = build(expected, value, key)
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


def _clip(text: str, most: int = 60) -> str:
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
    evaluation). A spec comes from the file, so it passes the gate of specs read from a file
    first (`check_spec_from_file`: one that may unpickle is refused, never built, unless
    `allow_pickle`), except the specs in `typed`, which the user typed on the command line."""
    from satellites_env.agents import canonical_spec, check_spec_from_file, make_agent

    mine = {canonical_spec(spec) for spec in typed}
    specs = config.agent_specs()
    for key, spec in specs:  # every spec through the gate before any is built
        if canonical_spec(spec) not in mine:
            try:
                check_spec_from_file(spec, key, allow_pickle)
            except ValueError as error:
                raise ConfigError(str(error)) from None
    for key, spec in specs:
        try:
            make_agent(spec, seed=0)
        except ValueError as error:
            raise ConfigError(f"{key}: {error}") from None


def shipped_folder() -> Path:
    """The folder of the shipped configs: `training/configs/` in an installed wheel (package
    data), `configs/` at the top of a clone (and of its editable install)."""
    package = Path(__file__).resolve().parents[1]
    installed = package / "configs"
    if any(installed.glob("*.yaml")):
        return installed
    return package.parent / "configs"


#: the folder of the shipped configs (`satellites train --config NAME`)
SHIPPED = shipped_folder()
#: the endings that make a `--config` value a file
YAML_SUFFIXES = (".yaml", ".yml")


def shipped_configs() -> list[str]:
    """The names of the shipped configs (`quick`, `az_quick`, ...)."""
    return sorted(path.stem for path in SHIPPED.glob("*.yaml"))


def names_a_file(value: str) -> bool:
    """Whether a `--config` value names a file: it contains a path separator or ends in
    `.yaml` or `.yml`. Any other value is the name of a shipped config, whatever files the
    current folder holds."""
    separators = [sep for sep in (os.sep, os.altsep) if sep]
    return any(sep in value for sep in separators) or value.lower().endswith(YAML_SUFFIXES)


def config_path(name_or_path: str | Path) -> Path:
    """The file a `--config` value names. A `Path`, or a string that `names_a_file`, is that
    file; any other string is the name of a shipped config (`az_quick`).

    Raises:
        ConfigError: the value is empty, or names no shipped config.
    """
    if isinstance(name_or_path, Path):
        return name_or_path
    if not name_or_path:
        raise ConfigError(
            f"the config is empty: name a shipped config "
            f"({', '.join(shipped_configs())}) or a YAML file"
        )
    if names_a_file(name_or_path):
        return Path(name_or_path)
    if name_or_path in shipped_configs():
        return SHIPPED / f"{name_or_path}.yaml"
    raise ConfigError(
        f"{quoted(_clip(name_or_path))} is not a shipped config (shipped: "
        f"{', '.join(shipped_configs())}); a config file is named by a path "
        f"with a / or ending in .yaml or .yml (./{_clip(name_or_path)}.yaml)"
    )


def purpose(path: Path) -> str:
    """A config file's one-line purpose: its first line, when that is a comment."""
    with path.open(encoding="utf-8") as handle:
        first = handle.readline().strip()
    return first.lstrip("#").strip() if first.startswith("#") else ""


def config_command(action: str, name: str | None, console: Console) -> None:
    """`satellites config list` (each shipped config with its purpose) and `satellites config
    show NAME` (the shipped file, to copy and edit).

    Raises:
        ConfigError: `name` is no shipped config.
    """
    if action == "list":
        names = shipped_configs()
        width = max(map(len, names))
        for name in names:
            console.print(
                f"{name:<{width}}  {purpose(SHIPPED / f'{name}.yaml')}",
                markup=False,
                highlight=False,
            )
        return
    if name not in shipped_configs():
        raise ConfigError(
            f"{quoted(_clip(name or ''))} is not a shipped config (shipped: "
            f"{', '.join(shipped_configs())})"
        )
    text = (SHIPPED / f"{name}.yaml").read_text(encoding="utf-8")
    console.file.write(text)
    console.file.flush()


def load_config(
    name_or_path: str | Path, check_agents: bool = True, allow_pickle: bool = False
) -> Config:
    """The checked config in a YAML file (or a shipped one, by name), read once; every error
    names the file and the key. An agent spec that may unpickle is refused unless
    `allow_pickle` (`--allow-pickle`)."""
    path = config_path(name_or_path)
    data = read_yaml(path)
    if isinstance(data, dict) and FINE_TUNING in data:
        raise ConfigError(
            f"{path} is an exploiter's config (it has {FINE_TUNING}:): train it with "
            f"satellites exploit --target SPEC --config {name_or_path}"
        )
    try:
        return config_from_dict(data, check_agents, allow_pickle)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


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


# --------------------------------------------------------------------------- the reference


def reference() -> str:
    """The Markdown reference of every key of every learner's config (docs/configs.md)."""
    lines = [
        "# Configuration reference",
        "",
        "Every key of the run configs, with its default and range, for each learner.",
        "Unknown or duplicate keys and out-of-range values are errors naming the file and",
        "the key, reported before anything runs. This page is written by",
        "`python -m training.common.config > docs/configs.md` (a test checks it).",
        "",
    ]
    for learner, cls in Config.LEARNERS.items():
        lines += [
            f"## `learner: {learner}`",
            "",
            " ".join(inspect.cleandoc(cls.__doc__ or "").split()),
            "",
            "| key | default | range | meaning |",
            "| --- | --- | --- | --- |",
        ]
        lines += [_row(key, f) for key, f in _fields(cls, "")]
        lines.append("")
    return "\n".join(lines)


def _fields(
    cls: type[DataclassInstance], prefix: str
) -> Iterator[tuple[str, dataclasses.Field[typing.Any]]]:
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            yield from _fields(hints[f.name], f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}", f


def _row(key: str, f: dataclasses.Field[typing.Any]) -> str:
    meta = f.metadata
    default = f.default
    if f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    if meta.get("choices"):
        span = ", ".join(meta["choices"])
    elif meta.get("low") is None and meta.get("high") is None:
        span = ""
    else:
        span = describe_range(meta)
    shown = (
        "" if default == "" else (str(default).lower() if isinstance(default, bool) else default)
    )
    return f"| `{key}` | `{shown}` | {span} | {meta.get('doc', '')} |"


if __name__ == "__main__":  # the registered learners live in the imported module, not here
    from training.common.config import reference as _reference

    print(_reference())
