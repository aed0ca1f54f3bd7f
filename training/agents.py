"""The agent specs the trainer adds to `satellites_env.agents.make_agent`, registered in the
`satellites.agents` entry-point group (pyproject.toml):

* `checkpoint:PATH[:sample|:sample=T|:greedy]`: a checkpoint's raw policy (either learner's;
  `pretrained` is the shipped network);
* `az:PATH[:SIMS]`: a network with its Gumbel search, SIMS simulations (default 32);
* `rllib:PATH`: an RLlib RLModule (training/rllib_agent.py).

Each factory takes the spec's argument (after `NAME:`) and a seed.
"""

from __future__ import annotations

from pathlib import Path

from satellites_env.agents.base import Agent, AgentSpecError, parse_int_argument
from satellites_env.core.checks import quoted

from .alphazero.agent import AZAgent
from .common.checkpoint import PRETRAINED, load_network, resolve
from .common.policy_agent import PolicyAgent
from .common.specs import spec_file, split_spec_argument
from .ppo.prior import network_from_shape, policy_agent

#: the most simulations an `az:` spec may ask for (its tree is allocated up front)
MAX_SIMULATIONS = 4096


def checkpoint_agent(
    argument: str, seed: int | None = None, threads: int | None = None
) -> PolicyAgent:
    """`checkpoint:PATH` (most likely action), `checkpoint:PATH:sample` (sampled) or
    `checkpoint:PATH:sample=T` (sampled at temperature T)."""
    path, sample, temperature = split_spec_argument(argument)
    if not path:
        raise AgentSpecError(
            f"agent spec {quoted('checkpoint:' + argument)}: expected "
            f"'checkpoint:PATH[:sample|:sample=T]'"
        )
    where = resolve(path)
    agent = policy_agent(
        load_network(where, build=network_from_shape),
        sample=sample,
        seed=seed,
        spec=f"checkpoint:{argument}",
        threads=threads,
        temperature=temperature,
    )
    agent.source = where
    return agent


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; False for a name the system refuses (too long, a NUL)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def az_agent(argument: str, seed: int | None = None) -> AZAgent:
    """`az:PATH[:SIMS]`: the network's Gumbel search with SIMS simulations (default 32)."""
    head, sep, tail = argument.rpartition(":")
    path, sims = (head, tail) if tail.isdigit() else (argument, "")
    spec = f"az:{argument}"
    if sep and not tail.isdigit() and _is_file(resolve(head)) and not _is_file(Path(argument)):
        # `az:PATH:10**12`, `az:PATH:-5`: a bad SIMS, not a missing file named PATH:SIMS
        parse_int_argument(spec, "the number of simulations", tail, 32, most=MAX_SIMULATIONS)
    if not path:
        raise AgentSpecError(f"agent spec {quoted(spec)}: expected 'az:PATH[:SIMS]'")
    simulations = parse_int_argument(
        spec, "the number of simulations", sims, 32, most=MAX_SIMULATIONS
    )
    return AZAgent(path, simulations=simulations, seed=seed)


def rllib_agent(argument: str, seed: int | None = None) -> Agent:
    """`rllib:PATH`: an RLlib RLModule saved with `save_to_path` (the `rllib` extra)."""
    if not argument:
        raise AgentSpecError("agent spec 'rllib:': expected 'rllib:PATH'")
    from .rllib_agent import RLlibAgent

    return RLlibAgent(argument, seed=seed)


__all__ = [
    "PRETRAINED",
    "az_agent",
    "checkpoint_agent",
    "rllib_agent",
    "spec_file",
    "split_spec_argument",
]
