"""Board geometry and the action encoding (RULES.md R1, R2, section 8).

Everything here is a constant or a lookup table built once at import time, so that the
rules kernels never compute geometry on the hot path.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from .checks import check_int, quoted

SIZE = 10
N_CELLS = SIZE * SIZE
MAX_VALUE = 4
SATELLITES_PER_PLAYER = 12
COPIES_PER_VALUE = 3
MAX_GROUP = 6  # R11
COLONY_MIN = 3  # R10
END_CONNECTED = 23  # R16
GRACE_MOVES = 3  # R18
DEFAULT_MAX_MOVES = 400  # R20
# The highest move cap (R20) anything accepts: Game, the envs, the engine, the batched engine,
# SPN's <moves> field and the CLI. The state keeps its move counter in an int32, and a game
# stops at its cap, so no counter can pass this value (or wrap around at 2**31).
MAX_MOVES_LIMIT = 1_000_000


def check_max_moves(max_moves: object) -> int:
    """`max_moves` (the move cap, R20) as an int from 1 to MAX_MOVES_LIMIT; ValueError naming
    it and the range otherwise (bools, floats and strings are refused)."""
    return check_int("max_moves", max_moves, 1, MAX_MOVES_LIMIT)


RED, BLUE = 0, 1  # plain ints for the kernels; `Player` is the friendly type
COLOR_NAMES = ("red", "blue")


class Player(IntEnum):
    """A player (a color): RED moves first (`player_0`), BLUE second (`player_1`)."""

    RED = 0
    BLUE = 1

    @property
    def sign(self) -> int:
        """+1 for red, -1 for blue: the sign of this player's satellites on the board."""
        return 1 - 2 * int(self)

    @property
    def other(self) -> Player:
        return Player(1 - int(self))

    @property
    def color(self) -> str:
        """ "red" or "blue"."""
        return COLOR_NAMES[self]

    @property
    def agent(self) -> str:
        """The PettingZoo agent name: "player_0" or "player_1"."""
        return f"player_{int(self)}"

    @classmethod
    def parse(cls, value: object) -> Player:
        """A Player from 0/1, "red"/"blue" or a Player; ValueError otherwise."""
        if isinstance(value, str) and value.lower() in COLOR_NAMES:
            return cls(COLOR_NAMES.index(value.lower()))
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value in (0, 1):
            return cls(int(value))
        raise ValueError(f"a player is 0/1 or 'red'/'blue', got {quoted(value)}")

    def __str__(self) -> str:
        return self.color


# Directions 0-7 = N, NE, E, SE, S, SW, W, NW as (d_row, d_col); N is row - 1.
DIRECTIONS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
DIRECTION_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
MAX_PUSH = 2  # R15.4

# Action encoding (section 8).
N_MOVE_ACTIONS = N_CELLS * 8 * MAX_VALUE  # 3200
PUSH_BASE = N_MOVE_ACTIONS  # 3200 .. 3215
N_PUSH_ACTIONS = 8 * MAX_PUSH
PASS_ACTION = PUSH_BASE + N_PUSH_ACTIONS  # 3216
N_ACTIONS = PASS_ACTION + 1  # 3217


def cell_of(row: int, col: int) -> int:
    """Cell index of (row, col) (R1)."""
    return row * SIZE + col


def row_col(cell: int) -> tuple[int, int]:
    """(row, col) of a cell index."""
    return divmod(cell, SIZE)


def on_board(row: int, col: int) -> bool:
    return 0 <= row < SIZE and 0 <= col < SIZE


def _build_ray() -> np.ndarray:
    """RAY[cell, direction, k - 1] = cell reached after k steps, or -1 off the board."""
    ray = np.full((N_CELLS, 8, MAX_VALUE), -1, dtype=np.int64)
    for cell in range(N_CELLS):
        row, col = row_col(cell)
        for d, (dr, dc) in enumerate(DIRECTIONS):
            for k in range(1, MAX_VALUE + 1):
                r, c = row + dr * k, col + dc * k
                if on_board(r, c):
                    ray[cell, d, k - 1] = cell_of(r, c)
    return ray


def _build_neighbours(directions: tuple[int, ...]) -> np.ndarray:
    """NEIGHBOURS[cell, i] for the given directions, -1 where off the board."""
    table = np.full((N_CELLS, len(directions)), -1, dtype=np.int64)
    for i, d in enumerate(directions):
        table[:, i] = RAY[:, d, 0]
    return table


def _build_edge_cells() -> np.ndarray:
    """EDGE_CELLS[e] = the 10 cells of edge e: north (row 0), south (row 9), west, east."""
    north = [cell_of(0, c) for c in range(SIZE)]
    south = [cell_of(SIZE - 1, c) for c in range(SIZE)]
    west = [cell_of(r, 0) for r in range(SIZE)]
    east = [cell_of(r, SIZE - 1) for r in range(SIZE)]
    return np.array([north, south, west, east], dtype=np.int64)


RAY = _build_ray()
ORTHO = _build_neighbours((0, 2, 4, 6))  # the four orthogonal neighbours (R8)
KING = _build_neighbours(tuple(range(8)))  # the eight neighbours (R15.1)
EDGE_CELLS = _build_edge_cells()


def move_action(from_cell: int, direction: int, k: int) -> int:
    """Action id of moving the satellite on `from_cell` by `k` cells in `direction`."""
    return (from_cell * 8 + direction) * MAX_VALUE + (k - 1)


def push_action(direction: int, distance: int) -> int:
    """Action id of pushing the displaced satellite `distance` (1-2) cells in `direction`."""
    return PUSH_BASE + direction * MAX_PUSH + (distance - 1)


def decode_move_action(action: int) -> tuple[int, int, int]:
    """(from_cell, direction, k) of a move action id in 0..3199."""
    k = action % MAX_VALUE + 1
    direction = (action // MAX_VALUE) % 8
    from_cell = action // (8 * MAX_VALUE)
    return from_cell, direction, k


def decode_push_action(action: int) -> tuple[int, int]:
    """(direction, distance) of a push action id in 3200..3215."""
    offset = action - PUSH_BASE
    return offset // MAX_PUSH, offset % MAX_PUSH + 1


def direction_between(from_cell: int, to_cell: int) -> tuple[int, int] | None:
    """(direction, distance) of a straight 8-direction line from one cell to another, else None."""
    (r0, c0), (r1, c1) = row_col(from_cell), row_col(to_cell)
    dr, dc = r1 - r0, c1 - c0
    distance = max(abs(dr), abs(dc))
    if distance == 0 or (dr != 0 and dc != 0 and abs(dr) != abs(dc)):
        return None
    step = (dr // distance, dc // distance)
    return DIRECTIONS.index(step), distance
