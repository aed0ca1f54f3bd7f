"""`openspiel-mcts:N`: OpenSpiel's own MCTS bot as an agent of this package.

OpenSpiel's ``MCTSBot`` (UCT, ``uct_c`` 2 as in OpenSpiel's examples, MCTS-Solver backups) with
its ``RandomRolloutEvaluator`` (one uniformly random rollout to the end of the game per
simulation), searching the `python_satellites` state of the position it is asked about. It is
written by people who never saw this package's search, which makes it an independent check of
`mcts:N`; it runs in Python, one engine call per rollout step, so it is slow (see the OpenSpiel
page of the docs for the measured cost).
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python.algorithms.mcts import MCTSBot, RandomRolloutEvaluator

from ..agents.base import Agent
from ..core.game import Game
from .game import GAME_NAME, state_from_game

#: OpenSpiel's examples/mcts.py default exploration constant
UCT_C = 2.0


class OpenSpielMCTSAgent(Agent):
    """OpenSpiel's MCTSBot with random rollouts; deterministic for a seed."""

    def __init__(self, simulations: int = 200, seed: int | None = None, uct_c: float = UCT_C):
        super().__init__(seed)
        self.simulations = simulations
        self.uct_c = uct_c
        self.spec = f"openspiel-mcts:{simulations}"
        self._games: dict[int, pyspiel.Game] = {}

    def act(self, game: Game) -> int:
        legal = game.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        spiel_game = self._games.get(game.max_moves)
        if spiel_game is None:
            spiel_game = pyspiel.load_game(GAME_NAME, {"max_moves": game.max_moves})
            self._games[game.max_moves] = spiel_game
        # one RandomState per search, drawn from the agent's generator: a seed fixes the game
        search_rng = np.random.RandomState(int(self.rng.integers(2**31)))
        bot = MCTSBot(
            spiel_game,
            uct_c=self.uct_c,
            max_simulations=self.simulations,
            evaluator=RandomRolloutEvaluator(n_rollouts=1, random_state=search_rng),
            random_state=search_rng,
        )
        return int(bot.step(state_from_game(spiel_game, game)))
