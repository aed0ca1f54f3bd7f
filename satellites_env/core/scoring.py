"""Groups, colonies, control and the winner (RULES.md R10, R21-R23), with details."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .board import BLUE, COLONY_MIN, MAX_GROUP, N_CELLS, RED
from .rules import CONNECTED, GROUP_OF, GROUP_SIZE, STACK, analyse, new_scratch


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
        """Sum of all values in the group, both colours (R23)."""
        return self.red_sum + self.blue_sum

    @property
    def controller(self) -> int | None:
        """RED, BLUE or None: the colour with the strictly higher sum (R21)."""
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
    def colonies(self) -> tuple[Group, ...]:
        return tuple(g for g in self.groups if g.is_colony)

    def reward(self, player: int) -> int:
        """+1 win, -1 loss, 0 draw for `player` (R24)."""
        if self.winner is None:
            return 0
        return 1 if self.winner == player else -1


def groups_of(board: np.ndarray) -> tuple[Group, ...]:
    """All groups (pairs and colonies) on a board, ordered by their first cell."""
    scratch = new_scratch()
    _, n_groups = analyse(board, scratch[CONNECTED], scratch[GROUP_OF], scratch[GROUP_SIZE],
                          scratch[STACK])
    members: list[list[int]] = [[] for _ in range(n_groups)]
    for cell in range(N_CELLS):
        g = scratch[GROUP_OF, cell]
        if g >= 0:
            members[g].append(cell)
    groups = []
    for cells in members:
        values = board[cells]
        groups.append(Group(tuple(cells), int(values[values > 0].sum()),
                            int(-values[values < 0].sum())))
    return tuple(groups)


def score(board: np.ndarray) -> Score:
    """Score a board: colonies controlled (R21), winner (R22), tie-break (R23)."""
    groups = groups_of(board)
    controlled = [0, 0]
    lowest: list[int | None] = [None, None]
    for colony in (g for g in groups if g.is_colony):
        owner = colony.controller
        if owner is None:
            continue
        controlled[owner] += 1
        if lowest[owner] is None or colony.total < lowest[owner]:
            lowest[owner] = colony.total
    red, blue = controlled
    if red != blue:
        winner = RED if red > blue else BLUE
        reason = f"red controls {red} colonies, blue {blue} (R22)"
    elif red == 0:
        winner, reason = None, "nobody controls a colony: draw (R23)"
    elif lowest[RED] == lowest[BLUE]:
        winner = None
        reason = (f"both control {red}; lowest controlled colony totals are equal "
                  f"({lowest[RED]}): draw (R23)")
    else:
        winner = RED if lowest[RED] < lowest[BLUE] else BLUE
        reason = (f"both control {red}; lowest controlled colony total red {lowest[RED]}, "
                  f"blue {lowest[BLUE]}: the lower wins (R23)")
    return Score(groups, (red, blue), (lowest[RED], lowest[BLUE]), winner, reason)
