"""Legal moves, applying moves and the end of the game (RULES.md R6-R20), as numba kernels.

The kernels work on the state array of :mod:`satellites_env.core.state` and a reusable
scratch array (:func:`new_scratch`), so the hot path (mask generation + apply) allocates
nothing. :class:`satellites_env.core.game.Game` is the checked, friendly entry point.

Why the checks are local for ordinary moves: satellites that are connected never move and
an unconnected satellite has no orthogonal neighbour of the other colour, so moving one
changes connections only around its landing cell. A displacement moves two satellites, so
its result is checked by re-analysing the whole board (it is rare and the board is tiny).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .board import (
    COLONY_MIN,
    EDGE_CELLS,
    END_CONNECTED,
    GRACE_MOVES,
    KING,
    MAX_GROUP,
    MAX_PUSH,
    MAX_VALUE,
    N_CELLS,
    N_PUSH_ACTIONS,
    ORTHO,
    PASS_ACTION,
    PUSH_BASE,
    RAY,
    SATELLITES_PER_PLAYER,
)
from .state import (
    GRACE,
    MOVES,
    NO_GRACE,
    NO_PENDING,
    PASSES,
    PENDING_FROM,
    PENDING_PIECE,
    PENDING_PUSHES,
    PENDING_TARGET,
    TO_MOVE,
)

ONGOING, TERMINATED, TRUNCATED = 0, 1, 2


class IllegalActionError(ValueError):
    """An action that is out of range or not legal in the position."""


# Rows of the scratch array every kernel takes (one scratch array per thread of play).
# CONNECTED, GROUP_OF, GROUP_SIZE, RED_SUM and BLUE_SUM hold the analysis of the last board given
# to `analyse_groups` (satellites_env.core.scoring): they are the engine's output, read through
# satellites_env.core.engine; the other rows are private to this module.
(CONNECTED, GROUP_OF, GROUP_SIZE, NEAR_OWN, AFTER, AFTER_CONNECTED, AFTER_GROUP_OF,
 AFTER_GROUP_SIZE, COLONY_BEFORE, OWNER, STACK, RED_SUM, BLUE_SUM, N_SCRATCH_ROWS) = range(14)


def new_scratch() -> np.ndarray:
    """Scratch memory for the kernels, allocated once and reused for every position."""
    return np.zeros((N_SCRATCH_ROWS, N_CELLS), dtype=np.int32)


# --------------------------------------------------------------------------- analysis


@njit(cache=True)
def is_connected(board, cell):
    """True when the satellite on `cell` touches one of the other colour (R8)."""
    piece = board[cell]
    if piece == 0:
        return False
    for i in range(4):
        n = ORTHO[cell, i]
        if n >= 0 and board[n] * piece < 0:
            return True
    return False


@njit(cache=True)
def analyse(board, connected, group_of, group_size, stack):
    """Fill connection flags (R8) and groups (R10); return (n_connected, n_groups).

    group_of[c] is the group id of a connected satellite, -1 elsewhere.
    """
    n_connected = 0
    for c in range(N_CELLS):
        group_of[c] = -1
        connected[c] = is_connected(board, c)
        n_connected += connected[c]
    n_groups = 0
    for c in range(N_CELLS):
        if connected[c] == 0 or group_of[c] >= 0:
            continue
        g = n_groups
        n_groups += 1
        group_of[c] = g
        stack[0] = c
        top = 1
        size = 0
        while top > 0:
            top -= 1
            x = stack[top]
            size += 1
            px = board[x]
            for i in range(4):
                n = ORTHO[x, i]
                if n >= 0 and group_of[n] < 0 and board[n] * px < 0:
                    group_of[n] = g
                    stack[top] = n
                    top += 1
        group_size[g] = size
    return n_connected, n_groups


@njit(cache=True)
def count_connected(board):
    """(red connected, blue connected) satellites."""
    red = 0
    blue = 0
    for c in range(N_CELLS):
        if is_connected(board, c):
            if board[c] > 0:
                red += 1
            else:
                blue += 1
    return red, blue


@njit(cache=True)
def has_free_edge(board):
    """True when one of the four edges (R2) holds no satellite."""
    for e in range(4):
        free = True
        for i in range(EDGE_CELLS.shape[1]):
            if board[EDGE_CELLS[e, i]] != 0:
                free = False
                break
        if free:
            return True
    return False


@njit(cache=True)
def _touches_colour(board, cell, sign):
    """True when `cell` has an orthogonal neighbour whose sign is `sign`."""
    for i in range(4):
        n = ORTHO[cell, i]
        if n >= 0 and board[n] * sign > 0:
            return True
    return False


# --------------------------------------------------------------------------- move checks


@njit(cache=True)
def _connection_move_ok(board, source, target, sign, scratch):
    """R11-R13 for an ordinary move source -> target (empty) that connects the mover.

    R7 (exact distance) and R9 are checked by the caller.
    """
    connected = scratch[CONNECTED]
    group_of = scratch[GROUP_OF]
    group_size = scratch[GROUP_SIZE]
    size = 1
    colonies = 0
    seen0 = -1
    seen1 = -1
    seen2 = -1
    for i in range(4):
        n = ORTHO[target, i]
        if n < 0 or n == source:
            continue
        piece = board[n]
        if piece == 0:
            continue
        if piece * sign > 0:
            if connected[n]:  # R13: two touching connected satellites of one colour
                return False
        elif connected[n]:
            g = group_of[n]
            if g == seen0 or g == seen1 or g == seen2:
                continue
            if seen0 < 0:
                seen0 = g
            elif seen1 < 0:
                seen1 = g
            else:
                seen2 = g
            size += group_size[g]
            if group_size[g] >= COLONY_MIN:
                colonies += 1
        else:
            size += 1
            # The newly connected neighbour must not touch a connected satellite of its colour.
            for j in range(4):
                m = ORTHO[n, j]
                if m >= 0 and board[m] * piece > 0 and connected[m]:
                    return False
    if colonies > 1:  # R12
        return False
    return size <= MAX_GROUP  # R11


@njit(cache=True)
def _after_ok(scratch):
    """R11, R12 and R13 on the whole board in scratch[AFTER] (analysed into the AFTER_* rows)."""
    after = scratch[AFTER]
    connected = scratch[AFTER_CONNECTED]
    group_of = scratch[AFTER_GROUP_OF]
    group_size = scratch[AFTER_GROUP_SIZE]
    colony_before = scratch[COLONY_BEFORE]
    owner = scratch[OWNER]
    analyse(after, connected, group_of, group_size, scratch[STACK])
    for c in range(N_CELLS):
        if connected[c] == 0:
            continue
        if group_size[group_of[c]] > MAX_GROUP:  # R11
            return False
        piece = after[c]
        for i in range(4):
            n = ORTHO[c, i]
            if n >= 0 and connected[n] and after[n] * piece > 0:  # R13
                return False
    owner[:] = -1
    for c in range(N_CELLS):
        b = colony_before[c]
        if b < 0:
            continue
        g = group_of[c]
        if owner[g] == -1:
            owner[g] = b
        elif owner[g] != b:  # R12: two colonies in one group
            return False
    return True


@njit(cache=True)
def _displacement_pushes(board, source, target, scratch):
    """Bit mask of legal pushes for the displacement source -> target (R15.2-R15.5).

    scratch[CONNECTED/GROUP_OF/GROUP_SIZE] must hold the analysis of `board`.
    """
    group_of = scratch[GROUP_OF]
    group_size = scratch[GROUP_SIZE]
    colony_before = scratch[COLONY_BEFORE]
    for c in range(N_CELLS):
        g = group_of[c]
        colony_before[c] = g if g >= 0 and group_size[g] >= COLONY_MIN else -1
    after = scratch[AFTER]
    mover = board[source]
    displaced = board[target]
    pushes = 0
    for d in range(8):
        for j in range(MAX_PUSH):
            landing = RAY[target, d, j]
            if landing < 0:
                break
            if board[landing] != 0 and landing != source:
                continue
            after[:] = board
            after[source] = 0
            after[target] = mover
            after[landing] = displaced
            if not _after_ok(scratch):
                continue
            if scratch[AFTER_CONNECTED, target] == 0:  # R15.2: mover connected after the move
                continue
            if scratch[AFTER_GROUP_SIZE, scratch[AFTER_GROUP_OF, target]] < COLONY_MIN:  # R15.3
                continue
            pushes |= 1 << (d * MAX_PUSH + j)
    return pushes


@njit(cache=True)
def _mark_near_own_connected(board, sign, scratch):
    connected = scratch[CONNECTED]
    near = scratch[NEAR_OWN]
    near[:] = 0
    for c in range(N_CELLS):
        if connected[c] and board[c] * sign > 0:
            for i in range(8):
                n = KING[c, i]
                if n >= 0:
                    near[n] = 1


@njit(cache=True)
def fill_legal_mask(state, mask, scratch):
    """Write the exact action mask of a position into `mask`; return the number of legal actions.

    The caller makes sure the game is not over.
    """
    mask[:] = 0
    if state[PENDING_TARGET] != NO_PENDING:
        pushes = state[PENDING_PUSHES]
        count = 0
        for b in range(N_PUSH_ACTIONS):
            if (pushes >> b) & 1:
                mask[PUSH_BASE + b] = 1
                count += 1
        return count
    board = state[:N_CELLS]
    sign = 1 - 2 * state[TO_MOVE]
    connected = scratch[CONNECTED]
    n_connected, _ = analyse(board, connected, scratch[GROUP_OF], scratch[GROUP_SIZE],
                             scratch[STACK])
    connections_allowed = n_connected > 0 or has_free_edge(board)  # R9
    _mark_near_own_connected(board, sign, scratch)
    near = scratch[NEAR_OWN]
    count = 0
    for source in range(N_CELLS):
        piece = board[source]
        if piece * sign <= 0 or connected[source]:
            continue
        value = piece * sign
        for d in range(8):
            for k in range(1, value + 1):
                target = RAY[source, d, k - 1]
                if target < 0:
                    break
                occupant = board[target]
                legal = False
                if occupant == 0:
                    if not _touches_colour(board, target, -sign):
                        legal = True  # makes no connection: any distance (R6, R7)
                    elif k == value and connections_allowed:
                        legal = _connection_move_ok(board, source, target, sign, scratch)
                elif (k == value and occupant * sign < 0 and connected[target] == 0
                      and near[target]):
                    legal = _displacement_pushes(board, source, target, scratch) != 0
                if legal:
                    mask[(source * 8 + d) * MAX_VALUE + k - 1] = 1
                    count += 1
    if count == 0:  # R19: pass only when nothing else is legal
        mask[PASS_ACTION] = 1
        count = 1
    return count


@njit(cache=True)
def _finish_move(state, is_pass):
    """Counters, turn, grace and passes after a completed move (R16-R19, SPN rules)."""
    board = state[:N_CELLS]
    mover = state[TO_MOVE]
    state[MOVES] += 1
    state[PASSES] = state[PASSES] + 1 if is_pass else 0
    if state[GRACE] != NO_GRACE:  # grace moves run: the same player moves again
        state[GRACE] -= 1
        return
    red, blue = count_connected(board)
    other = 1 - mover
    if red + blue >= END_CONNECTED:  # R16 ends the game before any grace
        state[TO_MOVE] = other
    elif red == SATELLITES_PER_PLAYER or blue == SATELLITES_PER_PLAYER:  # R17
        done = 0 if red == SATELLITES_PER_PLAYER else 1
        state[GRACE] = GRACE_MOVES
        state[TO_MOVE] = 1 - done
    else:
        state[TO_MOVE] = other


@njit(cache=True)
def apply_unchecked(state, action, scratch):
    """Play a legal action in place (legality is the caller's promise)."""
    if action == PASS_ACTION:
        _finish_move(state, True)
        return
    if action >= PUSH_BASE:
        offset = action - PUSH_BASE
        landing = RAY[state[PENDING_TARGET], offset // MAX_PUSH, offset % MAX_PUSH]
        state[landing] = state[PENDING_PIECE]
        state[PENDING_TARGET] = NO_PENDING
        state[PENDING_FROM] = NO_PENDING
        state[PENDING_PIECE] = 0
        state[PENDING_PUSHES] = 0
        _finish_move(state, False)
        return
    source = action // (8 * MAX_VALUE)
    target = RAY[source, (action // MAX_VALUE) % 8, action % MAX_VALUE]
    board = state[:N_CELLS]
    if board[target] != 0:  # a displacement: the push comes as the next action
        analyse(board, scratch[CONNECTED], scratch[GROUP_OF], scratch[GROUP_SIZE],
                scratch[STACK])
        state[PENDING_PUSHES] = _displacement_pushes(board, source, target, scratch)
        state[PENDING_TARGET] = target
        state[PENDING_FROM] = source
        state[PENDING_PIECE] = board[target]
    board[target] = board[source]
    board[source] = 0
    if state[PENDING_TARGET] == NO_PENDING:
        _finish_move(state, False)


@njit(cache=True)
def game_status(state, max_moves):
    """ONGOING, TERMINATED (by R16, R18 or R19) or TRUNCATED (move cap R20 only)."""
    if state[PENDING_TARGET] != NO_PENDING:
        return ONGOING
    red, blue = count_connected(state[:N_CELLS])
    if red + blue >= END_CONNECTED or state[GRACE] == 0 or state[PASSES] >= 2:
        return TERMINATED
    if state[MOVES] >= max_moves:
        return TRUNCATED
    return ONGOING
