"""The 8 symmetries of the square board (the dihedral group D4), on states, planes and actions.

The rules (R6-R24) only speak of straight lines in the 8 directions, orthogonal contact and
the four edges, so every rotation and reflection of a legal position is a legal position with
the same legal moves, transformed (the R4 set-up is not symmetric, but nothing after it
depends on where it put the satellites). Training uses this to see each position in 8 ways.

Symmetry ``t`` (0..7) = reflection ``t // 4`` (mirror west <-> east, done first) then ``t % 4``
quarter turns clockwise. Tables (built once at import, numpy, usable in numba):

* ``CELL_MAP[t, cell]``: where the cell goes;
* ``DIR_MAP[t, d]``: where direction d (0..7 = N, NE, ..., NW) goes;
* ``ACTION_MAP[t, action]``: the action id after the symmetry; moves map their from-cell and
  direction (the distance stays), pushes their direction (the distance stays), pass is fixed;
* ``INVERSE[t]``: the symmetry that undoes t; ``COMPOSE[a, b]``: the symmetry "b then a".

``transform_state`` maps the board cells, the displacement cells (``PENDING_TARGET``,
``PENDING_FROM``) and the bit mask of legal pushes (``PENDING_PUSHES``); the counters stay.
Observation planes are recomputed from the transformed state (they are equivariant: a test
checks ``observe(T(state)) == T(observe(state))``), or mapped with ``transform_planes``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from satellites_env.core.board import (
    DIRECTIONS,
    MAX_PUSH,
    MAX_VALUE,
    N_ACTIONS,
    N_CELLS,
    N_MOVE_ACTIONS,
    N_PUSH_ACTIONS,
    PASS_ACTION,
    PUSH_BASE,
    SIZE,
)
from satellites_env.core.state import NO_PENDING, PENDING_FROM, PENDING_PUSHES, PENDING_TARGET

N_SYMMETRIES = 8


def _map_point(t: int, row: int, col: int) -> tuple[int, int]:
    if t // 4:
        col = SIZE - 1 - col
    for _ in range(t % 4):
        row, col = col, SIZE - 1 - row
    return row, col


def _map_vector(t: int, dr: int, dc: int) -> tuple[int, int]:
    if t // 4:
        dc = -dc
    for _ in range(t % 4):
        dr, dc = dc, -dr
    return dr, dc


def _build_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    cells = np.zeros((N_SYMMETRIES, N_CELLS), dtype=np.int64)
    dirs = np.zeros((N_SYMMETRIES, 8), dtype=np.int64)
    actions = np.zeros((N_SYMMETRIES, N_ACTIONS), dtype=np.int64)
    for t in range(N_SYMMETRIES):
        for cell in range(N_CELLS):
            r, c = _map_point(t, *divmod(cell, SIZE))
            cells[t, cell] = r * SIZE + c
        for d, (dr, dc) in enumerate(DIRECTIONS):
            dirs[t, d] = DIRECTIONS.index(_map_vector(t, dr, dc))
        for a in range(N_MOVE_ACTIONS):
            k = a % MAX_VALUE
            d = (a // MAX_VALUE) % 8
            cell = a // (8 * MAX_VALUE)
            actions[t, a] = (cells[t, cell] * 8 + dirs[t, d]) * MAX_VALUE + k
        for i in range(N_PUSH_ACTIONS):
            d, j = divmod(i, MAX_PUSH)
            actions[t, PUSH_BASE + i] = PUSH_BASE + dirs[t, d] * MAX_PUSH + j
        actions[t, PASS_ACTION] = PASS_ACTION
    compose = np.zeros((N_SYMMETRIES, N_SYMMETRIES), dtype=np.int64)
    for a in range(N_SYMMETRIES):
        for b in range(N_SYMMETRIES):
            both = actions[a][actions[b]]
            matches = [t for t in range(N_SYMMETRIES) if np.array_equal(actions[t], both)]
            compose[a, b] = matches[0]
    inverse = np.array([int(np.flatnonzero(compose[t] == 0)[0]) for t in range(N_SYMMETRIES)])
    return cells, dirs, actions, compose, inverse


CELL_MAP, DIR_MAP, ACTION_MAP, COMPOSE, INVERSE = _build_tables()


@njit(cache=True)
def transform_state_into(state, t, out, cell_map, dir_map):
    """Write symmetry t of `state` into `out` (another state array)."""
    out[:] = state
    for c in range(N_CELLS):
        out[cell_map[t, c]] = state[c]
    if state[PENDING_TARGET] != NO_PENDING:
        out[PENDING_TARGET] = cell_map[t, state[PENDING_TARGET]]
    if state[PENDING_FROM] != NO_PENDING:
        out[PENDING_FROM] = cell_map[t, state[PENDING_FROM]]
    pushes = state[PENDING_PUSHES]
    mapped = 0
    for b in range(N_PUSH_ACTIONS):
        if (pushes >> b) & 1:
            d = b // MAX_PUSH
            j = b % MAX_PUSH
            mapped |= 1 << (dir_map[t, d] * MAX_PUSH + j)
    out[PENDING_PUSHES] = mapped


def transform_state(state: np.ndarray, t: int) -> np.ndarray:
    """Symmetry t of one state array (a new array)."""
    out = np.empty_like(state)
    transform_state_into(state, int(t), out, CELL_MAP, DIR_MAP)
    return out


def transform_planes(planes: np.ndarray, t: int) -> np.ndarray:
    """Symmetry t of observation planes, (10, 10, P) or (100, P) (a new array)."""
    flat = planes.reshape(N_CELLS, -1)
    out = np.empty_like(flat)
    out[CELL_MAP[t]] = flat
    return out.reshape(planes.shape)


def transform_mask(mask: np.ndarray, t: int) -> np.ndarray:
    """A (3217,) vector over actions (mask, policy) after symmetry t: out[T(a)] = mask[a]."""
    out = np.empty_like(mask)
    out[ACTION_MAP[t]] = mask
    return out
