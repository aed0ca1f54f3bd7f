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
from .common.checkpoint import PRETRAINED, CheckpointError, load_network, resolve
from .common.policy_agent import PolicyAgent, check_temperature
from .ppo.prior import network_from_shape, policy_agent

#: the most simulations an `az:` spec may ask for (its tree is allocated up front)
MAX_SIMULATIONS = 4096


def split_spec_argument(argument: str) -> tuple[str, bool, float]:
    """`PATH` or `PATH:greedy` -> (PATH, False, 1.0): the most likely action; `PATH:sample` ->
    (PATH, True, 1.0) and `PATH:sample=T` -> (PATH, True, T): a sample at temperature T > 0."""
    head, sep, tail = argument.rpartition(":")
    if sep and tail == "greedy":
        return head, False, 1.0
    if sep and tail == "sample":
        return head, True, 1.0
    if sep and tail.startswith("sample="):
        text = tail[len("sample=") :]
        try:
            return head, True, check_temperature(float(text))
        except ValueError:
            raise CheckpointError(
                f"checkpoint spec ':{tail[:40]}': the temperature must be a "
                f"finite number above 0, e.g. ':sample=0.5'"
            ) from None
    return argument, False, 1.0


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


def spec_file(spec: str) -> Path | None:
    """The network file a `checkpoint:` or `az:` spec names (`pretrained`: the shipped one),
    read from the spec's text as its factory reads it; None for any other spec."""
    name, _, argument = spec.partition(":")
    try:
        if name == "checkpoint":
            path = split_spec_argument(argument)[0]
        elif name == "az":
            head, sep, tail = argument.rpartition(":")
            path = head if sep and tail.isdigit() else argument
        else:
            return None
    except ValueError:
        return None
    return resolve(path) if path else None


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
