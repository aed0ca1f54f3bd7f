"""The position heuristic shared by `greedy` and the `mcts` rollout cut-off.

From one player's side, summed over the groups on the board (R10, R21-R23):

* +1 for each colony that player controls, -1 for each the opponent controls (R22 counts
  exactly this), +0.25 more when that colony is crowned (its control can no longer change);
* +0.05 per point of value margin in each colony, capped at 6 points (a safer lead is worth
  more: a colony that is not crowned can still be flipped by a joining satellite);
* +0.15 for each pair the player leads on value (a pair is one satellite away from a colony);
* the tie-break (R23): when both control the same non-zero number of colonies, +0.5 if the
  player's lowest-total controlled colony is lower than the opponent's, -0.5 if higher.

The sum is squashed by tanh(h / 2) into (-1, 1), so it can stand in for a game result.
A finished game is scored exactly instead: +1 win, -1 loss, 0 draw.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.board import COLONY_MIN, MAX_GROUP
from ..core.engine import BLUE_SUM, DRAW, GROUP_SIZE, RED, RED_SUM, analyse_groups, tally, verdict

COLONY_WEIGHT = 1.0
CROWN_BONUS = 0.25
MARGIN_WEIGHT = 0.05
MARGIN_CAP = 6
PAIR_WEIGHT = 0.15
TIE_BREAK_WEIGHT = 0.5


@njit(cache=True)
def final_result(board, sign, work):
    """+1 / -1 / 0 for the player of `sign` by R21-R23 on `board` (the engine's verdict)."""
    _, n_groups = analyse_groups(board, work)
    code = verdict(*tally(work, n_groups))
    if code == DRAW:
        return 0.0
    return 1.0 if (code == RED) == (sign > 0) else -1.0


@njit(cache=True)
def heuristic_value(board, sign, work):
    """The documented heuristic for the player of `sign`, in (-1, 1)."""
    _, n_groups = analyse_groups(board, work)
    h = 0.0
    for g in range(n_groups):
        margin = (work[RED_SUM, g] - work[BLUE_SUM, g]) * sign
        if work[GROUP_SIZE, g] < COLONY_MIN:
            if margin > 0:
                h += PAIR_WEIGHT
            elif margin < 0:
                h -= PAIR_WEIGHT
            continue
        h += MARGIN_WEIGHT * max(-MARGIN_CAP, min(MARGIN_CAP, margin))
        weight = COLONY_WEIGHT + (CROWN_BONUS if work[GROUP_SIZE, g] == MAX_GROUP else 0.0)
        if margin > 0:
            h += weight
        elif margin < 0:
            h -= weight
    red, blue, red_low, blue_low = tally(work, n_groups)
    if red == blue and red > 0 and red_low != blue_low:  # R23 decides: lean towards it
        mine_lower = (red_low < blue_low) == (sign > 0)
        h += TIE_BREAK_WEIGHT if mine_lower else -TIE_BREAK_WEIGHT
    return np.tanh(h / 2.0)
