"""`greedy`: one-move lookahead with the heuristic of `satellites_env.agents.heuristic`."""

from __future__ import annotations

import numpy as np

from ..core.game import Game
from .base import Agent
from .lookahead import Lookahead

TIE = 1e-9


class GreedyAgent(Agent):
    """Plays the action whose result scores best for the mover, random among equals.

    A finished result counts as +10 (win), -10 (loss) or 0 (draw); an unfinished one by the
    heuristic (in (-1, 1)). A displacement is valued by its best push.
    """

    spec = "greedy"

    def __init__(self, seed: int | None = None):
        super().__init__(seed)
        self._lookahead = Lookahead()

    def act(self, game: Game) -> int:
        legal = game.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        values = np.empty(len(legal))
        self._lookahead.values(game, legal, values)
        best = np.flatnonzero(values >= values.max() - TIE)
        return int(legal[best[self.rng.integers(len(best))]])
