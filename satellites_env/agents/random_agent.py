"""`random`: uniform over the legal actions."""

from __future__ import annotations

import numpy as np

from ..core.game import Game
from .base import Agent


class RandomAgent(Agent):
    """Picks uniformly among the legal actions (a push is one more uniform choice)."""

    spec = "random"

    def act(self, game: Game) -> int:
        legal = np.flatnonzero(game.legal_mask())
        return int(legal[self.rng.integers(len(legal))])
