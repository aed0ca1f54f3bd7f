"""`greedy`: one-move lookahead with the heuristic of `satellites_env.agents.heuristic`."""

from __future__ import annotations

import numpy as np

from ..core.engine import new_work
from ..core.game import Game
from .base import Agent
from .lookahead import action_values, new_child_buffer

TIE = 1e-9


class GreedyAgent(Agent):
    """Plays the action whose result scores best for the mover, random among equals.

    A finished result counts as +10 (win), -10 (loss) or 0 (draw); an unfinished one by the
    heuristic (in (-1, 1)). A displacement is valued by its best push.
    """

    spec = "greedy"

    def __init__(self, seed: int | None = None):
        super().__init__(seed)
        self._scratch = new_work()
        self._child = new_child_buffer()

    def act(self, game: Game) -> int:
        legal = game.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        values = np.empty(len(legal))
        action_values(
            game.state,
            legal,
            1 - 2 * game.to_move,
            game.max_moves,
            self._scratch,
            self._child,
            values,
        )
        best = np.flatnonzero(values >= values.max() - TIE)
        return int(legal[best[self.rng.integers(len(best))]])
