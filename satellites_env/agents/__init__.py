"""Torch-free baseline agents and `make_agent(spec)`.

Specs: `random`, `greedy`, `mcts:N` (N simulations per action, default 200),
`checkpoint:PATH` (a trained policy playing its most likely action; `:sample` or `:sample=T`
after PATH samples, at temperature T), `az:PATH[:SIMS]` (an
AlphaZero network with its Gumbel search, SIMS simulations, default 32; PATH `pretrained` is
the network shipped with the package, also as `checkpoint:pretrained`) and `rllib:PATH` (an
RLlib RLModule saved with `save_to_path`, e.g. by examples/rllib_ppo_selfplay.py). The last
three need the `train` extra (PyTorch; `rllib:` also the `rllib` extra) and load the trainer
lazily: this package never imports it otherwise.
"""

from __future__ import annotations

from .base import Agent, AgentSpecError, parse_int_argument
from .greedy import GreedyAgent
from .mcts import MCTSAgent
from .random_agent import RandomAgent

BASELINES = ("random", "greedy", "mcts:N")


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
        return MCTSAgent(parse_int_argument(spec, "the number of simulations", argument, 200),
                         seed=seed)
    if name == "checkpoint":
        if not argument:
            raise AgentSpecError(f"agent spec {spec!r}: expected 'checkpoint:PATH'")
        if argument.partition(":")[0] == "pretrained":  # the shipped AlphaZero network
            try:
                from training.alphazero.agent import PRETRAINED
            except ImportError as error:
                raise AgentSpecError(
                    f"agent spec {spec!r} needs the trainer: install the 'train' extra "
                    f"(pip install 'satellites[train]'); import failed: {error}") from error
            argument = str(PRETRAINED) + argument[len("pretrained"):]
        try:
            from training.common.checkpoint import CheckpointAgent
        except ImportError as error:
            raise AgentSpecError(
                f"agent spec {spec!r} needs the trainer: install the 'train' extra "
                f"(pip install 'satellites[train]'); import failed: {error}") from error
        return CheckpointAgent.from_spec(argument, seed=seed)
    if name == "az":
        path, _, sims = argument.rpartition(":") if argument.rpartition(":")[2].isdigit() \
            else (argument, "", "")
        if not path:
            raise AgentSpecError(f"agent spec {spec!r}: expected 'az:PATH[:SIMS]'")
        simulations = parse_int_argument(spec, "the number of simulations", sims, 32)
        try:
            from training.alphazero.agent import AZAgent
        except ImportError as error:
            raise AgentSpecError(
                f"agent spec {spec!r} needs the trainer: install the 'train' extra "
                f"(pip install 'satellites[train]'); import failed: {error}") from error
        return AZAgent(path, simulations=simulations, seed=seed)
    if name == "rllib":
        if not argument:
            raise AgentSpecError(f"agent spec {spec!r}: expected 'rllib:PATH'")
        try:
            from training.distributed.rllib_agent import RLlibAgent
        except ImportError as error:
            raise AgentSpecError(
                f"agent spec {spec!r} needs the trainer and RLlib: install the 'train' and "
                f"'rllib' extras; import failed: {error}") from error
        return RLlibAgent(argument, seed=seed)
    raise AgentSpecError(
        f"unknown agent spec {spec!r}; expected one of: random, greedy, mcts:N, checkpoint:PATH, "
        f"az:PATH[:SIMS], rllib:PATH")


__all__ = ["Agent", "AgentSpecError", "BASELINES", "GreedyAgent", "MCTSAgent", "RandomAgent",
           "make_agent"]
