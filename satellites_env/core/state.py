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

from typing import TypeGuard

import numpy as np

from .board import (
    BLUE,
    COPIES_PER_VALUE,
    MAX_MOVES_LIMIT,
    MAX_PUSH,
    MAX_VALUE,
    N_CELLS,
    N_PUSH_ACTIONS,
    RAY,
    RED,
    SIZE,
    cell_of,
)
from .checks import quoted

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
    """The R4 set-up: each player's 12 values shuffled onto their two edges, 1s and 2s shifted
    in."""
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


def is_pending(state: np.ndarray) -> bool:
    """True between the move and the push of a displacement."""
    return bool(state[PENDING_TARGET] != NO_PENDING)


def check_state_rows(states: object) -> None:
    """Raise ValueError (naming the first bad row and field) unless `states` is an integer
    (n, STATE_LEN) array of positions the kernels can read safely.

    Checked: cell codes in -4..4; three satellites of each value per colour (a pushed one
    waiting off the board counted); to_move 0 or 1; grace -1..3; passes 0..2; moves from 0 to
    MAX_MOVES_LIMIT; and,
    between the two steps of a displacement, the mover's satellite on the target cell, the
    cell it came from empty, the waiting satellite the opponent's, and every push bit landing
    on an empty cell of the board. The kernels do not check bounds, so stored positions read
    from outside (a replay buffer in a checkpoint) come through here first.
    """
    if not (
        isinstance(states, np.ndarray)
        and states.ndim == 2
        and states.shape[1] == STATE_LEN
        and np.issubdtype(states.dtype, np.integer)
    ):
        raise ValueError(
            f"states must be an integer array of shape (n, {STATE_LEN}), got "
            f"{getattr(states, 'dtype', type(states).__name__)} "
            f"{getattr(states, 'shape', '')}"
        )
    for start in range(0, len(states), _CHECK_CHUNK):  # bounded temporaries
        problem = _first_problem(states[start : start + _CHECK_CHUNK].astype(np.int64))
        if problem is not None:
            row, what = problem
            raise ValueError(f"state row {start + row}: {what}")


def _int_array(value: object, length: int) -> TypeGuard[np.ndarray]:
    """Whether `value` is an integer numpy array of shape (length,)."""
    return (
        isinstance(value, np.ndarray)
        and value.shape == (length,)
        and np.issubdtype(value.dtype, np.integer)
    )


def state_array(state: object) -> np.ndarray:
    """`state` itself when it is an integer array of shape (STATE_LEN,), else ValueError
    naming it. The cheap check of the engine's Python functions: a non-array, a wrong shape
    or a float array never reaches a kernel (the values are checked by `check_state`)."""
    if _int_array(state, STATE_LEN):
        return state
    raise ValueError(
        f"state must be an integer array of shape ({STATE_LEN},) (from "
        f"engine.init, parse_spn or engine.step), got {quoted(state)}"
    )


def board_array(board: object) -> np.ndarray:
    """`board` itself when it is an integer array of shape (N_CELLS,), else ValueError naming
    it (the board functions' cheap check, as `state_array`)."""
    if _int_array(board, N_CELLS):
        return board
    raise ValueError(
        f"board must be an integer array of shape ({N_CELLS},) (a state's first "
        f"{N_CELLS} cells), got {quoted(board)}"
    )


def check_rng(rng: object) -> np.random.Generator:
    """`rng` when it is a numpy Generator (np.random.default_rng), else ValueError naming it."""
    if isinstance(rng, np.random.Generator):
        return rng
    raise ValueError(
        f"rng must be a numpy Generator (np.random.default_rng(seed)), got {quoted(rng)}"
    )


def check_state(state: object) -> np.ndarray:
    """`state` as an int32 (STATE_LEN,) array the kernels can read safely (the checks of
    `check_state_rows`; the same array when it is int32 already); ValueError naming
    the state and its first problem otherwise."""
    array = state_array(state)
    problem = _first_problem(array[None].astype(np.int64))
    if problem is not None:
        raise ValueError(f"state: {problem[1]}")
    return array if array.dtype == np.int32 else array.astype(np.int32)


_CHECK_CHUNK = 32_768


def _first_problem(s: np.ndarray) -> tuple[int, str] | None:
    """(row, what) of the first row of `s` (int64 states) that breaks a check, or None."""
    board = s[:, :N_CELLS]
    target, piece, pushes, source = (
        s[:, PENDING_TARGET],
        s[:, PENDING_PIECE],
        s[:, PENDING_PUSHES],
        s[:, PENDING_FROM],
    )
    pending = target != NO_PENDING
    rows = np.arange(len(s))
    on_board = (0 <= target) & (target < N_CELLS) & (0 <= source) & (source < N_CELLS)
    mover_sign = 1 - 2 * s[:, TO_MOVE]
    t, f = np.clip(target, 0, N_CELLS - 1), np.clip(source, 0, N_CELLS - 1)
    problems = [
        ("cell codes outside -4..4", (np.abs(board) > MAX_VALUE).any(axis=1)),
        ("to_move not 0 or 1", (s[:, TO_MOVE] != RED) & (s[:, TO_MOVE] != BLUE)),
        ("grace outside -1..3", (s[:, GRACE] < NO_GRACE) | (s[:, GRACE] > 3)),
        ("passes outside 0..2", (s[:, PASSES] < 0) | (s[:, PASSES] > 2)),
        ("moves < 0", s[:, MOVES] < 0),
        (f"moves > {MAX_MOVES_LIMIT} (MAX_MOVES_LIMIT)", s[:, MOVES] > MAX_MOVES_LIMIT),
        ("a pending displacement off the board", pending & ~on_board),
        (
            "pending fields set with no displacement pending",
            ~pending & ((piece != 0) | (pushes != 0) | (source != NO_PENDING)),
        ),
        (
            "a pending displacement whose target does not hold the mover's satellite",
            pending & (board[rows, t] * mover_sign <= 0),
        ),
        ("a pending displacement whose source cell is not empty", pending & (board[rows, f] != 0)),
        (
            "a pending satellite that is not the opponent's",
            pending & ((piece * mover_sign >= 0) | (np.abs(piece) > MAX_VALUE)),
        ),
        ("push bits outside the push actions", (pushes < 0) | (pushes >= 1 << N_PUSH_ACTIONS)),
    ]
    # push bit b: direction b // MAX_PUSH, distance b % MAX_PUSH + 1 (as the engine reads it)
    landing = RAY[t][:, :, :MAX_PUSH].reshape(len(s), N_PUSH_ACTIONS)
    bits = (pushes[:, None] >> np.arange(N_PUSH_ACTIONS)) & 1 == 1
    blocked = (landing < 0) | (board[rows[:, None], np.clip(landing, 0, N_CELLS - 1)] != 0)
    problems.append(
        (
            "a push bit landing off the board or on a satellite",
            pending & (bits & blocked).any(axis=1),
        )
    )
    for sign, colour in ((1, "red"), (-1, "blue")):
        for value in range(1, MAX_VALUE + 1):
            count = (board == sign * value).sum(axis=1) + (pending & (piece == sign * value))
            problems.append(
                (
                    f"not {COPIES_PER_VALUE} {colour} satellites of value {value}",
                    count != COPIES_PER_VALUE,
                )
            )
    for what, bad in problems:
        if bad.any():
            return int(np.flatnonzero(bad)[0]), what
    return None
