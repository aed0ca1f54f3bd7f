"""Agents and `make_agent(spec)`: the one grammar of agent specs.

Specs: `random`, `greedy`, `mcts:N` (N simulations per action, default 200) and
`openspiel-mcts:N[:heuristic]` (OpenSpiel's MCTS bot with random rollouts, default 200, or
with `mcts:N`'s leaf value; the `openspiel` extra, imported only when a spec names it), built
here, and
the specs other packages register: the trainer (the `train` extra) registers
`checkpoint:PATH` (a trained network's raw policy; `:sample` or `:sample=T` after PATH
samples at temperature T), `az:PATH[:SIMS]` (a network with its Gumbel search, SIMS
simulations, default 32; PATH `pretrained` is the network shipped with the package) and
`rllib:PATH` (an RLlib RLModule saved with `save_to_path`; the `rllib` extra).

Registering: a package names a factory `factory(argument, seed) -> Agent` (raising
AgentSpecError for a bad argument, the empty one included) in the
`satellites.agents` entry-point group (``[project.entry-points."satellites.agents"]`` in its
pyproject), or calls [`register_agent`][satellites_env.agents.register_agent] at run time. This
package imports no registered package itself: an entry point is loaded only when a spec names it.

Specs read from a file (a config, a run folder, a ladder database) pass one gate,
[`check_spec_from_file`][satellites_env.agents.check_spec_from_file], before anything builds
them: only the kinds that load data alone (`DATA_ONLY_KINDS`) pass without the user's
`allow_pickle`; the gate reads the spec's text and loads nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from ..core.checks import quoted
from .base import Agent, AgentSpecError, parse_int_argument
from .greedy import GreedyAgent
from .mcts import MCTSAgent
from .random_agent import RandomAgent

BASELINES = ("random", "greedy", "mcts:N")
#: the specs built here (the baselines and OpenSpiel's MCTS bot)
BUILT_IN = (*BASELINES, "openspiel-mcts:N[:heuristic]")
#: the entry-point group of agent factories
GROUP = "satellites.agents"
#: the most simulations an `mcts:N` spec may ask for, checked when the spec is parsed: the
#: tree then holds at most this many nodes (a few hundred MB), and a move takes tens of
#: seconds, not hours
MAX_SIMULATIONS = 100_000

#: the agent kinds that load data only: the baselines, and the trainer's own `checkpoint:` and
#: `az:` factories (networks read with torch's weights-only loader). Any other kind (`rllib:`,
#: another package's, or these names taken by other code) may unpickle files, which runs code.
DATA_ONLY_KINDS = ("random", "greedy", "mcts", "checkpoint", "az")
#: the factories behind the data-only kinds that other packages register (entry-point values)
_DATA_ONLY_FACTORIES = {
    "checkpoint": "training.agents:checkpoint_agent",
    "az": "training.agents:az_agent",
}

Factory = Callable[[str, "int | None"], Agent]
_registered: dict[str, Factory] = {}


def register_agent(name: str, factory: Factory) -> None:
    """Make `NAME:ARGUMENT` specs build `factory(ARGUMENT, seed)` (an Agent)."""
    if not name.isidentifier() or name in ("random", "greedy", "mcts"):
        raise ValueError(f"agent name {quoted(name)} must be a new identifier")
    _registered[name] = factory


def registered_names() -> list[str]:
    """The spec names registered by other packages (run time and entry points)."""
    return sorted(set(_registered) | {ep.name for ep in entry_points(group=GROUP)})


def _factory(name: str, spec: str) -> Factory | None:
    if name in _registered:
        return _registered[name]
    for point in entry_points(group=GROUP, name=name):
        try:
            factory: Factory = point.load()
        except ImportError as error:
            raise AgentSpecError(
                f"agent spec {quoted(spec)} needs {point.value.split('.')[0]!r}, which does not "
                f"import here (for checkpoint:, az: and rllib: install the 'train' extra, "
                f"pip install 'satellites-env[train]'; rllib: also the 'rllib' extra): "
                f"{error}"
            ) from error
        _registered[name] = factory
        return factory
    return None


def loads_data_only(spec: str) -> bool:
    """Whether building `spec` reads data only (no unpickling): a baseline, or `checkpoint:`
    and `az:` served by the trainer's own factories. Reads the spec's text and the installed
    entry points' names; loads nothing."""
    name = spec.partition(":")[0] if isinstance(spec, str) else ""
    if name in ("random", "greedy", "mcts"):
        return True
    ours = _DATA_ONLY_FACTORIES.get(name)
    if ours is None:
        return False
    if name in _registered:
        factory = _registered[name]
        return f"{factory.__module__}:{factory.__qualname__}" == ours
    points = list(entry_points(group=GROUP, name=name))
    return bool(points) and all(point.value.replace(" ", "") == ours for point in points)


def check_spec_from_file(spec: str, source: str, allow_pickle: bool = False) -> None:
    """The gate for a spec read from a file (`source` names it and the key): an
    AgentSpecError unless the spec loads data only or the user gave `allow_pickle`. It
    builds nothing, so checking a file never runs code the file names. A spec that names no
    registered kind passes: it builds nothing either, and `make_agent` says it is unknown."""
    if allow_pickle or loads_data_only(spec):
        return
    name = spec.partition(":")[0] if isinstance(spec, str) else ""
    if name not in registered_names():
        return
    raise AgentSpecError(
        f"{source}: the agent spec {quoted(spec)} may unpickle files and so run code from "
        f"them; a spec read from a file builds only the kinds that load data "
        f"({', '.join(DATA_ONLY_KINDS)}); give --allow-pickle only if you trust this file "
        f"and the files it names"
    )


def canonical_spec(spec: str) -> str:
    """The one spelling of a spec, so that specs are compared and stored alike: `mcts`,
    `mcts:` and `mcts:0200` are `mcts:200`; `az:PATH` and `az:PATH:032` are `az:PATH:32`;
    `checkpoint:PATH:greedy` is `checkpoint:PATH` and `:sample=1` is `:sample`. Any other
    spec (and one that does not parse) is returned as it is; parsing refuses it later."""
    if not isinstance(spec, str):
        return spec
    name, _, argument = spec.partition(":")
    if name == "mcts":
        digits = argument.lstrip("0")
        if not argument:
            return "mcts:200"
        if argument.isascii() and argument.isdigit() and digits and len(digits) <= 18:
            return f"mcts:{int(digits)}"
        return spec
    head, sep, tail = argument.rpartition(":")
    if name == "az" and argument:
        if sep and head and tail.isascii() and tail.isdigit() and 0 < len(tail) <= 18:
            return f"az:{head}:{int(tail)}" if int(tail) else spec
        return spec if sep and tail.isdigit() else f"az:{argument}:32"
    if name == "checkpoint" and sep and head:
        if tail == "greedy":
            return f"checkpoint:{head}"
        if tail.startswith("sample="):
            try:
                value = float(tail[len("sample=") :])
            except ValueError:
                return spec
            if value == 1.0:
                return f"checkpoint:{head}:sample"
            return f"checkpoint:{head}:sample={value!r}" if value > 0 else spec
    return spec


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from its spec string, e.g. `make_agent("mcts:200", seed=0)`."""
    if not isinstance(spec, str):
        raise AgentSpecError(f"agent spec must be a string, got {type(spec).__name__}")
    name, _, argument = spec.partition(":")
    if name == "random" and not argument:
        return RandomAgent(seed)
    if name == "greedy" and not argument:
        return GreedyAgent(seed)
    if name == "mcts":
        simulations = parse_int_argument(
            spec, "the number of simulations", argument, 200, most=MAX_SIMULATIONS
        )
        return MCTSAgent(simulations, seed=seed)
    if name == "openspiel-mcts":
        count, _, evaluator = argument.partition(":")
        simulations = parse_int_argument(
            spec, "the number of simulations", count, 200, most=MAX_SIMULATIONS
        )
        if evaluator not in ("", "heuristic"):
            raise AgentSpecError(
                f"agent spec {quoted(spec)}: the evaluator must be 'heuristic' or left out "
                f"(random rollouts), got {quoted(evaluator, 30)}"
            )
        try:
            from ..openspiel.mcts import OpenSpielMCTSAgent
        except ImportError as error:
            raise AgentSpecError(
                f"agent spec {quoted(spec)} needs OpenSpiel, which does not import here "
                f"(install the 'openspiel' extra, pip install 'satellites-env[openspiel]'): "
                f"{error}"
            ) from error
        return OpenSpielMCTSAgent(simulations, seed=seed, evaluator=evaluator or "random")
    factory = _factory(name, spec) if name.isidentifier() else None
    if factory is None:
        known = ", ".join([*BUILT_IN] + [f"{n}:..." for n in registered_names()])
        raise AgentSpecError(f"unknown agent spec {quoted(spec)}; expected one of: {known}")
    return factory(argument, seed)


__all__ = [
    "BASELINES",
    "DATA_ONLY_KINDS",
    "Agent",
    "AgentSpecError",
    "GreedyAgent",
    "MCTSAgent",
    "RandomAgent",
    "canonical_spec",
    "check_spec_from_file",
    "loads_data_only",
    "make_agent",
    "register_agent",
    "registered_names",
]
