"""Observation planes of a position, from a player's point of view (the layout and its kernels).

`PLANES` is the single source of truth for the layout: the README table is checked against it
by the tests. Planes are channels-last, (10, 10, N_PLANES) float32 in [0, 1], like
PettingZoo's classic board games. `fill_observation` fills one position's planes;
`fill_observations` / `observe_states` fill a batch in parallel (the batched engine's
``observe`` and the vector env). [`satellites_env.observation`][satellites_env.observation]
re-exports these names beside its `Observer` (the envs' buffers and observation space).

Speed notes: every cell's 22 floats are one contiguous row of the (100, 22) output, so one
sweep writes each row once (16 zeros and the 6 position-wide planes, whose values are worked
out before the sweep); the piece planes are then written on the occupied cells only, found by
the legal-mask kernel's own sweep over the satellites (rules._prepare), which also gives the
connections and groups.
"""

from __future__ import annotations

from numba import njit, prange

from .board import COLONY_MIN, GRACE_MOVES, MAX_GROUP, N_CELLS, SIZE
from .rules import (
    BLUE_SUM,
    CONNECTED,
    GROUP_OF,
    GROUP_SIZE,
    PIECES,
    RED_SUM,
    _prepare,
    has_free_edge,
)
from .scoring import group_sums
from .state import (
    GRACE,
    MOVES,
    NO_GRACE,
    NO_PENDING,
    PASSES,
    PENDING_PIECE,
    PENDING_TARGET,
    TO_MOVE,
)

__all__ = [
    "N_PLANES",
    "OBSERVATION_SHAPE",
    "PLANES",
    "PLANE_INDEX",
    "fill_observation",
    "fill_observations",
    "observe_states",
]

PLANES: tuple[tuple[str, str], ...] = (
    ("own_1", "own satellite of value 1"),
    ("own_2", "own satellite of value 2"),
    ("own_3", "own satellite of value 3"),
    ("own_4", "own satellite of value 4"),
    ("opp_1", "opponent satellite of value 1"),
    ("opp_2", "opponent satellite of value 2"),
    ("opp_3", "opponent satellite of value 3"),
    ("opp_4", "opponent satellite of value 4"),
    ("own_connected", "own satellite that is connected (locked, R8)"),
    ("opp_connected", "opponent satellite that is connected"),
    ("group_size", "size of the satellite's group / 6 (0 when unconnected, R10)"),
    ("colony", "satellite in a colony (group of 3 or more)"),
    ("own_controls", "satellite in a colony the observer controls (R21)"),
    ("opp_controls", "satellite in a colony the opponent controls"),
    ("crowned", "satellite in a crowned colony (6 satellites, R11)"),
    (
        "pushed",
        "value / 4 of the displaced satellite waiting to be pushed, on the cell it is "
        "pushed from (only between the two steps of a displacement, R15)",
    ),
    ("connections_allowed", "all ones when a move may make a connection now (R9)"),
    ("grace", "all ones while grace moves run (the opponent is done, R17)"),
    ("grace_left", "grace moves left / 3 (R18)"),
    ("passed", "all ones when the previous move was a pass (R19)"),
    ("progress", "completed moves / max_moves (R20)"),
    ("is_red", "all ones when the observer is red (player_0)"),
)
N_PLANES = len(PLANES)
PLANE_INDEX = {name: i for i, (name, _) in enumerate(PLANES)}
OBSERVATION_SHAPE = (SIZE, SIZE, N_PLANES)

_OWN, _OPP = 0, 4
_OWN_CONN, _OPP_CONN, _GROUP, _COLONY, _OWN_CTRL, _OPP_CTRL, _CROWNED, _PUSHED = range(8, 16)
_ALLOWED, _GRACE, _GRACE_LEFT, _PASSED, _PROGRESS, _IS_RED = range(16, 22)


@njit(cache=True)
def fill_observation(state, player, max_moves, planes, work):
    """Write the planes of `state` seen by `player` (0 red, 1 blue) into planes[100, N_PLANES].

    `work` is an engine work buffer (`satellites_env.core.engine.new_work()`).
    """
    board = state[:N_CELLS]
    sign = 1 - 2 * player
    # The mask's one sweep over the satellites: connections (R8) and groups (R10) with the
    # same rows and group ids as scoring.analyse_groups, and the list of occupied cells.
    n_connected, n_pieces = _prepare(board, sign, work)
    connected = work[CONNECTED]
    group_of = work[GROUP_OF]
    group_size = work[GROUP_SIZE]
    pieces = work[PIECES]
    group_sums(board, pieces, n_pieces, work)  # each group's value sums (R21)
    allowed = 1.0 if (n_connected > 0 or has_free_edge(board)) else 0.0  # R9
    grace = state[GRACE]
    in_grace = 1.0 if grace != NO_GRACE else 0.0
    grace_left = grace / GRACE_MOVES if grace != NO_GRACE else 0.0
    passed = 1.0 if state[PASSES] > 0 else 0.0
    progress = min(state[MOVES] / max_moves, 1.0)
    is_red = 1.0 if player == 0 else 0.0
    for c in range(N_CELLS):  # every row once: zeros, then the position-wide planes
        row = planes[c]
        for p in range(_ALLOWED):
            row[p] = 0.0
        row[_ALLOWED] = allowed
        row[_GRACE] = in_grace
        row[_GRACE_LEFT] = grace_left
        row[_PASSED] = passed
        row[_PROGRESS] = progress
        row[_IS_RED] = is_red
    for j in range(n_pieces):
        c = pieces[j]
        piece = board[c] * sign
        own = piece > 0
        value = piece if own else -piece
        row = planes[c]
        row[(_OWN if own else _OPP) + value - 1] = 1.0
        if connected[c] == 0:
            continue
        row[_OWN_CONN if own else _OPP_CONN] = 1.0
        g = group_of[c]
        size = group_size[g]
        row[_GROUP] = size / MAX_GROUP
        if size >= COLONY_MIN:
            row[_COLONY] = 1.0
            balance = (work[RED_SUM, g] - work[BLUE_SUM, g]) * sign  # R21 from the observer
            if balance > 0:
                row[_OWN_CTRL] = 1.0
            elif balance < 0:
                row[_OPP_CTRL] = 1.0
            if size == MAX_GROUP:
                row[_CROWNED] = 1.0
    target = state[PENDING_TARGET]
    if target != NO_PENDING:
        pushed = state[PENDING_PIECE]
        planes[target, _PUSHED] = (pushed if pushed > 0 else -pushed) / 4.0


@njit(cache=True, parallel=True)
def fill_observations(states, players, max_moves, out, work):
    """out[i] (100, N_PLANES) = the planes of states[i] seen by players[i], in parallel; games
    are split in work.shape[0] chunks, chunk c working in work[c] (see
    satellites_env.core.batch.new_batch_scratch)."""
    n = states.shape[0]
    n_chunks = work.shape[0]
    for c in prange(n_chunks):
        lo = c * n // n_chunks
        hi = (c + 1) * n // n_chunks
        rows = work[c]
        for i in range(lo, hi):
            fill_observation(states[i], players[i], max_moves, out[i], rows)


def observe_states(states, max_moves, out, scratch):
    """Observation planes of every game for its player to move: out[i] (100, N_PLANES) float32
    from states[i], in parallel (`fill_observations` with players = states[:, TO_MOVE])."""
    fill_observations(states, states[:, TO_MOVE], max_moves, out, scratch)
