"""This package's agents as OpenSpiel bots, for OpenSpiel's evaluation loops.

>>> import numpy as np, pyspiel
>>> from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
>>> from satellites_env.openspiel.bots import AgentBot
>>> game = pyspiel.load_game("python_satellites")
>>> bots = [AgentBot("greedy", seed=0), AgentBot("random", seed=1)]
>>> returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))
"""

from __future__ import annotations

import pyspiel

from ..agents import Agent, make_agent
from .game import SatellitesState


class AgentBot(pyspiel.Bot):
    """A ``pyspiel.Bot`` that plays an [`Agent`][satellites_env.agents.Agent] (or an agent
    spec, built with `make_agent(spec, seed)`) on `python_satellites` states."""

    def __init__(self, agent: Agent | str, seed: int | None = None):
        pyspiel.Bot.__init__(self)
        self.agent = make_agent(agent, seed) if isinstance(agent, str) else agent
        self._seed = seed

    def step(self, state: SatellitesState) -> int:
        """The agent's action in `state` (a decision node of `python_satellites`)."""
        if not isinstance(state, SatellitesState):
            raise TypeError(f"AgentBot plays python_satellites states, got {type(state).__name__}")
        return int(self.agent.act(state.game))

    def restart_at(self, state: SatellitesState) -> None:
        """A new game: the agent starts afresh (reseeded with the bot's seed, if any)."""
        self.agent.reset(self._seed)

    def inform_action(self, state: SatellitesState, player_id: int, action: int) -> None:
        """Agents see the whole position at each step: nothing to track."""

    def provides_policy(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"<AgentBot {self.agent.spec}>"
