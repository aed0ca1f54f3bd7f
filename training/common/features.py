"""One-ply lookahead values per action: the optional logit prior of the network.

For each legal action, the value for the mover of the position it leads to, exactly as the
`greedy` baseline scores it (:func:`satellites_env.agents.lookahead.action_values`: +-10 for a
won or lost game, 0 for a draw, the heuristic in (-1, 1) otherwise; a displacement is worth
its best push). A network built with `lookahead > 0` adds a learned multiple of these to its
logits, so it starts from greedy-like play and learns what one ply of lookahead misses.
"""

from __future__ import annotations

import numpy as np

from satellites_env.agents.lookahead import action_values, new_child_buffer
from satellites_env.core.board import N_ACTIONS
from satellites_env.core.game import Game
from satellites_env.core.rules import new_scratch


class LookaheadFeatures:
    """Reusable buffers for `fill`; one instance per thread of play."""

    def __init__(self):
        self._scratch = new_scratch()
        self._child = new_child_buffer()
        self._values = np.empty(N_ACTIONS, dtype=np.float64)

    def fill(self, game: Game, mask: np.ndarray, out: np.ndarray) -> None:
        """out[a] = lookahead value of legal action a (mask[a] != 0), 0 for illegal ones."""
        out[:] = 0.0
        legal = np.flatnonzero(mask)
        values = self._values[:len(legal)]
        action_values(game.state, legal, 1 - 2 * game.to_move, game.max_moves, self._scratch,
                      self._child, values)
        out[legal] = values

    def of(self, game: Game, mask: np.ndarray) -> np.ndarray:
        """A fresh (3217,) float32 vector of lookahead values."""
        out = np.empty(N_ACTIONS, dtype=np.float32)
        self.fill(game, mask, out)
        return out
