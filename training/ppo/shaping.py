"""The training potential phi(s) for potential-based reward shaping (see `ppo.py`).

phi = heuristic (the greedy agent's, `satellites_env.agents.heuristic`)
      + OPENING_WEIGHT * opening progress.

Opening progress is 1 once connections are allowed (R9: a free edge or a connection exists),
else 1 - (satellites on the emptiest edge) / 10. Before the first connection the heuristic is 0
everywhere, so without this term the long opening (random play takes ~260 moves) would teach
nothing until a connection happens by chance; with it, emptying an edge is rewarded and the
first connections come early. After the opening the term is constant and drops out.
"""

from __future__ import annotations

from numba import njit

from satellites_env.agents.heuristic import heuristic_value
from satellites_env.core.board import EDGE_CELLS, SIZE
from satellites_env.core.engine import connections_allowed

OPENING_WEIGHT = 0.5


@njit(cache=True)
def opening_progress(board):
    if connections_allowed(board):  # R9: the opening is over
        return 1.0
    emptiest = SIZE
    for e in range(4):
        count = 0
        for i in range(SIZE):
            if board[EDGE_CELLS[e, i]] != 0:
                count += 1
        emptiest = min(emptiest, count)
    return 1.0 - emptiest / SIZE


@njit(cache=True)
def potential(board, sign, scratch):
    """phi(s) for the player of `sign`."""
    return heuristic_value(board, sign, scratch) + OPENING_WEIGHT * opening_progress(board)
