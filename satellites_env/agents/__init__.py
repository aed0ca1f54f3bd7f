"""Agents and `make_agent(spec)`: the one grammar of agent specs.

Specs: `random`, `greedy`, `mcts:N` (N simulations per action, default 200) and
`openspiel-mcts:N` (OpenSpiel's MCTS bot with random rollouts, default 200; the `openspiel`
extra, imported only when a spec names it), built here, and
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
BUILT_IN = (*BASELINES, "openspiel-mcts:N")
#: the entry-point group of agent factories
GROUP = "satellites.agents"
#: the most simulations an `mcts:N` spec may ask for, checked when the spec is parsed: the
#: tree then holds at most this many nodes (a few hundred MB), and a move takes tens of
#: seconds, not hours
MAX_SIMULATIONS = 100_000

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
        simulations = parse_int_argument(
            spec, "the number of simulations", argument, 200, most=MAX_SIMULATIONS
        )
        try:
            from ..openspiel.mcts import OpenSpielMCTSAgent
        except ImportError as error:
            raise AgentSpecError(
                f"agent spec {quoted(spec)} needs OpenSpiel, which does not import here "
                f"(install the 'openspiel' extra, pip install 'satellites-env[openspiel]'): "
                f"{error}"
            ) from error
        return OpenSpielMCTSAgent(simulations, seed=seed)
    factory = _factory(name, spec) if name.isidentifier() else None
    if factory is None:
        known = ", ".join([*BUILT_IN] + [f"{n}:..." for n in registered_names()])
        raise AgentSpecError(f"unknown agent spec {quoted(spec)}; expected one of: {known}")
    return factory(argument, seed)


__all__ = [
    "BASELINES",
    "Agent",
    "AgentSpecError",
    "GreedyAgent",
    "MCTSAgent",
    "RandomAgent",
    "make_agent",
    "register_agent",
    "registered_names",
]
