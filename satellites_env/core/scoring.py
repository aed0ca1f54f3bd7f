"""Groups, colonies, control and the winner (RULES.md R10, R21-R23).

The numba kernels here are the one source of these facts: `analyse_groups` (groups and each
group's red and blue value sums, R10, R21), `tally` (colonies controlled and the lowest
controlled total per player, R22, R23) and `winner_code` (the verdict). `score` wraps them in
readable objects with the reason in words. Callers reach them through
[`satellites_env.core.engine`][satellites_env.core.engine].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .board import BLUE, COLONY_MIN, COLOR_NAMES, MAX_GROUP, N_CELLS, RED
from .rules import BLUE_SUM, CONNECTED, GROUP_OF, GROUP_SIZE, RED_SUM, STACK, analyse, new_scratch
from .state import board_array

DRAW = -1  # winner code of a drawn result
NO_COLONY = 1 << 20  # "lowest controlled total" of a player who controls no colony


@njit(cache=True)
def analyse_groups(board, work):
    """Connections (R8), groups (R10) and each group's value sums, into the analysis rows of
    `work` (CONNECTED, GROUP_OF, GROUP_SIZE, RED_SUM, BLUE_SUM); return (n_connected, n_groups).

    GROUP_SIZE, RED_SUM and BLUE_SUM are indexed by group id (0 .. n_groups - 1).
    """
    n_connected, n_groups = analyse(
        board, work[CONNECTED], work[GROUP_OF], work[GROUP_SIZE], work[STACK]
    )
    group_sums(board, _ALL_CELLS, N_CELLS, work)
    return n_connected, n_groups


_ALL_CELLS = np.arange(N_CELLS)


@njit(cache=True)
def group_sums(board, cells, n, work):
    """Each group's red and blue value sums (R21) into work[RED_SUM] and work[BLUE_SUM], from
    the satellites on cells[:n] (every cell of every group among them), once GROUP_OF holds the
    groups."""
    group_of = work[GROUP_OF]
    red_sum = work[RED_SUM]
    blue_sum = work[BLUE_SUM]
    for j in range(n):
        g = group_of[cells[j]]
        if g >= 0:
            red_sum[g] = 0
            blue_sum[g] = 0
    for j in range(n):
        c = cells[j]
        g = group_of[c]
        if g >= 0:
            v = board[c]
            if v > 0:
                red_sum[g] += v
            else:
                blue_sum[g] -= v


@njit(cache=True)
def group_controller(work, g):
    """RED, BLUE or DRAW (equal sums): who controls group `g` (R21), after `analyse_groups`."""
    red = work[RED_SUM, g]
    blue = work[BLUE_SUM, g]
    if red == blue:
        return DRAW
    return RED if red > blue else BLUE


@njit(cache=True)
def tally(work, n_groups):
    """(red colonies, blue colonies, red lowest total, blue lowest total) controlled (R21-R23),
    after `analyse_groups`; a lowest total is NO_COLONY for a player who controls none."""
    red = 0
    blue = 0
    red_low = NO_COLONY
    blue_low = NO_COLONY
    for g in range(n_groups):
        if work[GROUP_SIZE, g] < COLONY_MIN:
            continue
        owner = group_controller(work, g)
        total = work[RED_SUM, g] + work[BLUE_SUM, g]
        if owner == RED:
            red += 1
            red_low = min(red_low, total)
        elif owner == BLUE:
            blue += 1
            blue_low = min(blue_low, total)
    return red, blue, red_low, blue_low


@njit(cache=True)
def verdict(red, blue, red_low, blue_low):
    """Winner code (RED, BLUE or DRAW) from a tally: more colonies (R22), else the lower
    lowest-controlled-colony total (R23), else a draw."""
    if red != blue:
        return RED if red > blue else BLUE
    if red == 0 or red_low == blue_low:
        return DRAW
    return RED if red_low < blue_low else BLUE


@njit(cache=True)
def winner_code(board, work):
    """RED, BLUE or DRAW by R21-R23 on `board` (the result if the game ended here)."""
    _, n_groups = analyse_groups(board, work)
    red, blue, red_low, blue_low = tally(work, n_groups)
    return verdict(red, blue, red_low, blue_low)


@dataclass(frozen=True)
class Group:
    """A connected component of the connection graph with at least 2 satellites (R10)."""

    cells: tuple[int, ...]
    red_sum: int
    blue_sum: int

    @property
    def size(self) -> int:
        return len(self.cells)

    @property
    def is_colony(self) -> bool:
        return self.size >= COLONY_MIN

    @property
    def crowned(self) -> bool:
        return self.size == MAX_GROUP

    @property
    def total(self) -> int:
        """Sum of all values in the group, both colors (R23)."""
        return self.red_sum + self.blue_sum

    @property
    def controller(self) -> int | None:
        """RED, BLUE or None: the color with the strictly higher sum (R21)."""
        if self.red_sum == self.blue_sum:
            return None
        return RED if self.red_sum > self.blue_sum else BLUE


@dataclass(frozen=True)
class Score:
    """Everything R21-R23 look at, and the verdict."""

    groups: tuple[Group, ...]
    controlled: tuple[int, int]  # colonies controlled by (red, blue)
    lowest_total: tuple[int | None, int | None]  # lowest controlled colony total per player
    winner: int | None  # RED, BLUE or None for a draw
    reason: str

    @property
    def winner_name(self) -> str | None:
        """ "red", "blue" or None for a draw: the vocabulary of records and env infos."""
        return None if self.winner is None else COLOR_NAMES[self.winner]

    @property
    def colonies(self) -> tuple[Group, ...]:
        return tuple(g for g in self.groups if g.is_colony)

    def reward(self, player: int) -> int:
        """+1 win, -1 loss, 0 draw for `player` (R24)."""
        if self.winner is None:
            return 0
        return 1 if self.winner == player else -1


def groups_of(board: np.ndarray, work: np.ndarray | None = None) -> tuple[Group, ...]:
    """All groups (pairs and colonies) on a board, ordered by their first cell."""
    work = new_scratch() if work is None else work
    _, n_groups = analyse_groups(board, work)
    members: list[list[int]] = [[] for _ in range(n_groups)]
    for cell in np.flatnonzero(work[GROUP_OF, :N_CELLS] >= 0):
        members[work[GROUP_OF, cell]].append(int(cell))
    return tuple(
        Group(tuple(cells), int(work[RED_SUM, g]), int(work[BLUE_SUM, g]))
        for g, cells in enumerate(members)
    )


def score(board: np.ndarray) -> Score:
    """Score a board: colonies controlled (R21), winner (R22), tie-break (R23)."""
    board = board_array(board)
    work = new_scratch()
    groups = groups_of(board, work)
    red, blue, red_low, blue_low = (int(x) for x in tally(work, len(groups)))
    code = int(verdict(red, blue, red_low, blue_low))
    winner = None if code == DRAW else code
    lowest = (
        None if red_low == NO_COLONY else red_low,
        None if blue_low == NO_COLONY else blue_low,
    )
    if red != blue:
        reason = f"red controls {red} {'colony' if red == 1 else 'colonies'}, blue {blue} (R22)"
    elif red == 0:
        reason = "nobody controls a colony: draw (R23)"
    elif winner is None:
        reason = (
            f"both control {red}; lowest controlled colony totals are equal ({red_low}): draw (R23)"
        )
    else:
        reason = (
            f"both control {red}; lowest controlled colony total red {red_low}, "
            f"blue {blue_low}: the lower wins (R23)"
        )
    return Score(groups, (red, blue), lowest, winner, reason)
