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

from ..core.board import COLONY_MIN, MAX_GROUP, N_CELLS
from ..core.rules import CONNECTED, GROUP_OF, GROUP_SIZE, OWNER, STACK, analyse

COLONY_WEIGHT = 1.0
CROWN_BONUS = 0.25
MARGIN_WEIGHT = 0.05
MARGIN_CAP = 6
PAIR_WEIGHT = 0.15
TIE_BREAK_WEIGHT = 0.5


@njit(cache=True)
def _tally(board, sign, scratch):
    """Walk the groups once from the side of `sign`.

    Returns (mine, theirs, my_lowest, their_lowest, shaped): colonies controlled by each side,
    the lowest total value among each side's controlled colonies (R23; 2**20 when none), and
    the heuristic sum h before squashing.
    """
    _, n_groups = analyse(board, scratch[CONNECTED], scratch[GROUP_OF], scratch[GROUP_SIZE],
                          scratch[STACK])
    group_of = scratch[GROUP_OF]
    sizes = scratch[GROUP_SIZE]
    balance = scratch[OWNER]
    totals = scratch[STACK]
    balance[:n_groups] = 0
    totals[:n_groups] = 0
    for c in range(N_CELLS):
        g = group_of[c]
        if g >= 0:
            balance[g] += board[c] * sign
            totals[g] += abs(board[c])
    h = 0.0
    mine = 0
    theirs = 0
    my_low = 1 << 20
    their_low = 1 << 20
    for g in range(n_groups):
        margin = balance[g]
        if sizes[g] < COLONY_MIN:
            if margin > 0:
                h += PAIR_WEIGHT
            elif margin < 0:
                h -= PAIR_WEIGHT
            continue
        h += MARGIN_WEIGHT * max(-MARGIN_CAP, min(MARGIN_CAP, margin))
        if margin == 0:
            continue
        weight = COLONY_WEIGHT + (CROWN_BONUS if sizes[g] == MAX_GROUP else 0.0)
        if margin > 0:
            h += weight
            mine += 1
            my_low = min(my_low, totals[g])
        else:
            h -= weight
            theirs += 1
            their_low = min(their_low, totals[g])
    return mine, theirs, my_low, their_low, h


@njit(cache=True)
def final_result(board, sign, scratch):
    """+1 / -1 / 0 for the player of `sign` by R21-R23 on `board`."""
    mine, theirs, my_low, their_low, _ = _tally(board, sign, scratch)
    if mine != theirs:
        return 1.0 if mine > theirs else -1.0
    if mine == 0 or my_low == their_low:
        return 0.0
    return 1.0 if my_low < their_low else -1.0


@njit(cache=True)
def heuristic_value(board, sign, scratch):
    """The documented heuristic for the player of `sign`, in (-1, 1)."""
    mine, theirs, my_low, their_low, h = _tally(board, sign, scratch)
    if mine == theirs and mine > 0 and my_low != their_low:
        h += TIE_BREAK_WEIGHT if my_low < their_low else -TIE_BREAK_WEIGHT
    return np.tanh(h / 2.0)
