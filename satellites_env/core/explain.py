"""Why an action is illegal, in words, naming the rule (RULES.md R6-R19).

The legal mask (`satellites_env.core.rules`) is the only judge of legality; this module is asked
only after the mask said no, and finds the first rule the action breaks, for people reading an
error.
"""

from __future__ import annotations

import numpy as np

from .board import (
    COLONY_MIN,
    COLOR_NAMES,
    KING,
    MAX_GROUP,
    N_CELLS,
    N_MOVE_ACTIONS,
    ORTHO,
    PASS_ACTION,
    PUSH_BASE,
    RAY,
    decode_move_action,
    decode_push_action,
)
from .engine import CONNECTED, GROUP_OF, GROUP_SIZE, analyse_groups, connections_allowed, new_work
from .notation import square_name
from .state import PENDING_FROM, PENDING_PIECE, PENDING_TARGET, TO_MOVE


def _piece(code: int) -> str:
    return f"{COLOR_NAMES[0 if code > 0 else 1]} {abs(int(code))}"


def _result_breaks(before: np.ndarray, after: np.ndarray) -> str | None:
    """The first of R11, R12, R13 that the board `after` breaks (None if it breaks none)."""
    work_after = new_work()
    _, n_after = analyse_groups(after, work_after)
    for g in range(n_after):
        if work_after[GROUP_SIZE, g] > MAX_GROUP:
            return (
                f"it would make a group of {work_after[GROUP_SIZE, g]} satellites; a group "
                f"holds at most {MAX_GROUP} (R11)"
            )
    work_before = new_work()
    _, _ = analyse_groups(before, work_before)
    colony_of_group: dict[int, int] = {}
    for c in range(N_CELLS):
        g_before = work_before[GROUP_OF, c]
        if g_before < 0 or work_before[GROUP_SIZE, g_before] < COLONY_MIN:
            continue
        g_after = work_after[GROUP_OF, c]
        if colony_of_group.setdefault(g_after, g_before) != g_before:
            return "it would join two colonies into one group (R12)"
    for c in range(N_CELLS):
        if not work_after[CONNECTED, c]:
            continue
        for n in ORTHO[c]:
            if n >= 0 and work_after[CONNECTED, n] and after[n] * after[c] > 0:
                return (
                    f"two connected {COLOR_NAMES[0 if after[c] > 0 else 1]} satellites "
                    f"would touch on {square_name(c)} and {square_name(int(n))} (R13)"
                )
    return None


def _explain_move(state: np.ndarray, action: int) -> str:
    board = state[:N_CELLS]
    mover = int(state[TO_MOVE])
    sign = 1 - 2 * mover
    source, direction, k = decode_move_action(action)
    target = int(RAY[source, direction, k - 1])
    piece = int(board[source])
    work = new_work()
    analyse_groups(board, work)
    if piece == 0:
        return f"there is no satellite on {square_name(source)}"
    if piece * sign < 0:
        return (
            f"{square_name(source)} holds a {_piece(piece)}; {COLOR_NAMES[mover]} moves only "
            f"its own satellites (R6)"
        )
    if work[CONNECTED, source]:
        return f"the {_piece(piece)} on {square_name(source)} is connected, so it is locked (R8)"
    value = abs(piece)
    if k > value:
        cells = "1 cell" if value == 1 else f"1 to {value} cells"
        return f"a satellite of value {value} moves {cells}, not {k} (R6)"
    if target < 0:
        return "it would leave the board (R6)"
    occupant = int(board[target])
    if occupant * sign > 0:
        return (
            f"{square_name(target)} holds a {_piece(occupant)}: a move lands on an empty cell (R6)"
        )
    if occupant != 0:  # a displacement
        if work[CONNECTED, target]:
            return (
                f"the {_piece(occupant)} on {square_name(target)} is connected and can never "
                f"be displaced (R8, R15)"
            )
        if k != value:
            return (
                f"a displacement moves exactly the satellite's value, {value} cells, not {k} "
                f"(R15.2)"
            )
        near = any(n >= 0 and work[CONNECTED, n] and board[n] * sign > 0 for n in KING[target])
        if not near:
            return (
                f"{square_name(target)} is not next to one of {COLOR_NAMES[mover]}'s connected "
                f"satellites, so it can't be displaced (R15.1)"
            )
        return (
            f"no push of the {_piece(occupant)} completes the displacement: after every push "
            f"the mover would not be connected in a group of 3 or more, or the result breaks "
            f"R9, R11, R12 or R13 (R15)"
        )
    after = board.copy()
    after[target] = piece
    after[source] = 0
    makes_connection = any(n >= 0 and after[n] * piece < 0 for n in ORTHO[target])
    if makes_connection:
        if k != value:
            return (
                f"a move that connects must go exactly the satellite's value, {value} cells, "
                f"not {k} (R7)"
            )
        if not connections_allowed(board):
            return (
                "no connection may be made yet: none exists on the board and every edge "
                "holds a satellite (R9)"
            )
    broken = _result_breaks(board, after)
    return broken or "the position after it breaks the rules (R14)"


def _explain_push(state: np.ndarray, action: int) -> str:
    target = int(state[PENDING_TARGET])
    if target < 0:
        return "no displacement is waiting for its push (push actions come only after one)"
    direction, distance = decode_push_action(action)
    landing = int(RAY[target, direction, distance - 1])
    if landing < 0:
        return "the push would leave the board (R15.4)"
    board = state[:N_CELLS]
    if board[landing] != 0 and landing != int(state[PENDING_FROM]):
        return (
            f"{square_name(landing)} is not empty: the pushed satellite lands on an empty "
            f"cell (R15.4)"
        )
    after = board.copy()
    after[landing] = state[PENDING_PIECE]
    before = board.copy()
    before[int(state[PENDING_FROM])] = board[target]
    before[target] = state[PENDING_PIECE]
    work = new_work()
    analyse_groups(after, work)
    if not work[CONNECTED, target]:
        return f"the mover on {square_name(target)} would not be connected after the push (R15.2)"
    if work[GROUP_SIZE, work[GROUP_OF, target]] < COLONY_MIN:
        return (
            f"the mover's group would have {work[GROUP_SIZE, work[GROUP_OF, target]]} "
            f"satellites; a displacement must form or extend a colony of 3 or more (R15.3)"
        )
    return _result_breaks(before, after) or "the position after it breaks the rules (R15.5)"


def explain_illegal(state: np.ndarray, action: int) -> str:
    """Why `action` (in range, game not over) is not legal in `state`, naming the rule."""
    if state[PENDING_TARGET] >= 0 and action != PASS_ACTION and action < PUSH_BASE:
        return (
            f"a displacement is waiting for its push from "
            f"{square_name(int(state[PENDING_TARGET]))}: only a push is legal now (R15.4)"
        )
    if action == PASS_ACTION:
        return "a pass is legal only when no other move is (R19)"
    if action >= PUSH_BASE:
        return _explain_push(state, action)
    assert action < N_MOVE_ACTIONS
    return _explain_move(state, action)
