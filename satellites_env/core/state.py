"""The position as one small int32 array (cheap to copy, friendly to numba kernels).

Layout of a state array:

| index            | meaning                                                              |
| ---------------- | -------------------------------------------------------------------- |
| 0 .. 99          | board cells: 0 empty, +v red satellite of value v, -v blue one       |
| ``TO_MOVE``      | 0 red, 1 blue                                                        |
| ``GRACE``        | -1 when no player is done, else grace moves left 0..3 (R17, R18)    |
| ``PASSES``       | consecutive passes just made (R19)                                   |
| ``MOVES``        | completed moves (R20)                                                |
| ``PENDING_*``    | only between the two steps of a displacement (RULES.md section 8)    |

During a displacement the mover's satellite already stands on the target cell and the
displaced satellite waits off the board in ``PENDING_PIECE`` until the push action.
"""

from __future__ import annotations

import numpy as np

from .board import (
    BLUE,
    COPIES_PER_VALUE,
    MAX_VALUE,
    N_CELLS,
    RED,
    SIZE,
    cell_of,
)

TO_MOVE = N_CELLS
GRACE = N_CELLS + 1
PASSES = N_CELLS + 2
MOVES = N_CELLS + 3
PENDING_TARGET = N_CELLS + 4  # cell the displaced satellite is pushed from, -1 when none
PENDING_PIECE = N_CELLS + 5  # signed code of the displaced satellite
PENDING_PUSHES = N_CELLS + 6  # bit i set = push action PUSH_BASE + i is legal
PENDING_FROM = N_CELLS + 7  # cell the mover's satellite came from
STATE_LEN = N_CELLS + 8

NO_GRACE = -1
NO_PENDING = -1


def color_sign(player: int) -> int:
    """+1 for red, -1 for blue: the sign of that player's satellites on the board."""
    return 1 - 2 * player


def empty_state() -> np.ndarray:
    """A state array with an empty board, red to move, no grace, no passes, 0 moves."""
    state = np.zeros(STATE_LEN, dtype=np.int32)
    state[GRACE] = NO_GRACE
    state[PENDING_TARGET] = NO_PENDING
    state[PENDING_FROM] = NO_PENDING
    return state


def initial_state(rng: np.random.Generator) -> np.ndarray:
    """The R4 set-up: each player's 12 values shuffled onto their two edges, 1s and 2s shifted in."""
    state = empty_state()
    values = np.repeat(np.arange(1, MAX_VALUE + 1), COPIES_PER_VALUE)
    centre = range(2, 8)
    for player in (RED, BLUE):
        shuffled = rng.permutation(values)
        sign = color_sign(player)
        for i, value in enumerate(shuffled):
            first_edge = i < 6
            along = centre[i % 6]
            depth = 1 if value <= 2 else 0  # R4: values 1 and 2 sit one cell inward
            if player == RED:
                row = depth if first_edge else SIZE - 1 - depth
                cell = cell_of(row, along)
            else:
                col = depth if first_edge else SIZE - 1 - depth
                cell = cell_of(along, col)
            state[cell] = sign * int(value)
    return state


def board_of(state: np.ndarray) -> np.ndarray:
    """View of the 100 board cells."""
    return state[:N_CELLS]


def is_pending(state: np.ndarray) -> bool:
    """True between the move and the push of a displacement."""
    return bool(state[PENDING_TARGET] != NO_PENDING)
