"""Legal moves, applying moves and the end of the game (RULES.md R6-R20), as numba kernels.

The kernels work on the state array of `satellites_env.core.state` and a reusable
scratch array ([`new_scratch`][satellites_env.core.rules.new_scratch]), so the hot path (mask
generation + apply) allocates nothing. [`Game`][satellites_env.core.game.Game] is the checked,
friendly entry point.

Why the checks are local: satellites that are connected never move and an unconnected
satellite has no orthogonal neighbour of the other colour, so moving one changes connections
only around its landing cell; every connection that exists before a move still exists after
it. A displacement moves two unconnected satellites (the mover and the displaced one), so
every new connection touches one of their two landing cells: the check looks at those cells,
their neighbours and the (at most two) groups that contain them, instead of re-analysing the
whole board for every landing cell.

Speed notes (why the code looks the way it does): before the move loop one sweep over the
satellites (not the 100 cells) finds connections and groups and gives every cell a landing
class (free, connects, displacement candidate, blocked), so each landing cell costs one load
and the common case no branch; the displacement check builds the board after the move once
per candidate and only swaps the landing cell; nothing allocates.
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

# ORTHO with each off-board neighbour replaced by the cell itself: a satellite never has the
# other colour on its own cell, so "touches the other colour" needs no bounds branch.
_ORTHO_SELF = np.where(ORTHO >= 0, ORTHO, np.arange(N_CELLS)[:, None])


class IllegalActionError(ValueError):
    """An action that is out of range or not legal in the position."""


# Rows of the scratch array every kernel takes (one scratch array per thread of play).
# CONNECTED, GROUP_OF, GROUP_SIZE, RED_SUM and BLUE_SUM hold the analysis of the last board given
# to `analyse_groups` (satellites_env.core.scoring): they are the engine's output, read through
# satellites_env.core.engine; the other rows are private to this module.
# NEAR_OWN / CELL_CLASS / PIECES: the mask's per-cell flags, landing classes and the list of
# occupied cells; AFTER: the board after a displacement; VISITED: BFS marks of the
# displacement check, all zero between calls.
# The shared rows keep their numbers: numba's cache freezes these constants into the compiled
# kernels of other modules (scoring, observation), which would go stale if they moved.
CONNECTED, GROUP_OF, GROUP_SIZE = 0, 1, 2
NEAR_OWN, CELL_CLASS, AFTER, VISITED, PIECES = 3, 4, 5, 6, 7  # rows 8-9 are free
STACK, RED_SUM, BLUE_SUM = 10, 11, 12
N_SCRATCH_ROWS = 13

# CELL_CLASS values: what a move of the player to move landing on the cell would be.
_FREE = 0  # empty, no opponent next to it: a move there connects nothing (any k, R6-R7)
_CONNECTS = 1  # empty, next to an opponent: a connection move (k = value, R7, R9, R11-R13)
_DISPLACE = 2  # unconnected opponent next to an own connected satellite: a displacement (R15)
_BLOCKED = 3  # any other satellite


def new_scratch() -> np.ndarray:
    """Scratch memory for the kernels, allocated once and reused for every position."""
    return np.zeros((N_SCRATCH_ROWS, N_CELLS), dtype=np.int32)


# --------------------------------------------------------------------------- analysis


@njit(cache=True)
def is_connected(board, cell):
    """True when the satellite on `cell` touches one of the other colour (R8)."""
    p = board[cell]
    # Branch-free (see _ORTHO_SELF): an empty cell (p = 0) gives False.
    return (
        (board[_ORTHO_SELF[cell, 0]] * p < 0)
        | (board[_ORTHO_SELF[cell, 1]] * p < 0)
        | (board[_ORTHO_SELF[cell, 2]] * p < 0)
        | (board[_ORTHO_SELF[cell, 3]] * p < 0)
    )


@njit(cache=True)
def _label_groups(board, cells, n, connected, group_of, group_size, stack):
    """Connection flags (R8) and groups (R10) of the satellites on cells[:n], in cell order;
    `connected` and `group_of` must hold 0 and -1 on every cell first. Return
    (n_connected, n_groups). The one flood fill behind `analyse` and the legal mask's sweep."""
    n_connected = 0
    for j in range(n):
        c = cells[j]
        conn = is_connected(board, c)
        connected[c] = conn
        n_connected += conn
    n_groups = 0
    for j in range(n):
        c = cells[j]
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
                m = ORTHO[x, i]
                if m >= 0 and group_of[m] < 0 and board[m] * px < 0:
                    group_of[m] = g
                    stack[top] = m
                    top += 1
        group_size[g] = size
    return n_connected, n_groups


_ALL_CELLS = np.arange(N_CELLS)


@njit(cache=True)
def analyse(board, connected, group_of, group_size, stack):
    """Fill connection flags (R8) and groups (R10); return (n_connected, n_groups).

    group_of[c] is the group id of a connected satellite, -1 elsewhere.
    """
    for c in range(N_CELLS):
        group_of[c] = -1
        connected[c] = 0
    return _label_groups(board, _ALL_CELLS, N_CELLS, connected, group_of, group_size, stack)


@njit(cache=True)
def count_connected(board):
    """(red connected, blue connected) satellites."""
    red = 0
    blue = 0
    for c in range(N_CELLS):  # branch-free: it runs after every move
        conn = is_connected(board, c)
        red += conn & (board[c] > 0)
        blue += conn & (board[c] < 0)
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
def _newly_connected_clash(after, connected, cell):
    """R13 around `cell` on the board `after`: True when the satellite there became connected
    by the move and touches a connected satellite of its own colour.

    Only cells whose neighbourhood changed are asked, and connections are never lost, so a
    satellite connected before the move (connected[cell]) had no clash then and has none now
    unless a neighbour became connected, which that neighbour's own check finds.
    """
    piece = after[cell]
    if piece == 0 or connected[cell] or not is_connected(after, cell):
        return False
    for i in range(4):
        n = ORTHO[cell, i]
        if n >= 0 and after[n] * piece > 0 and is_connected(after, n):
            return True
    return False


@njit(cache=True)
def _grow_component(after, start, tail, group_of, group_size, visited, queue):
    """Breadth-first search of the connection graph of `after` from `start`, appending its
    cells to queue[tail:] and marking them in `visited`; return (new tail, ok), where ok is
    False as soon as the component breaks R11 (more than six satellites) or R12 (it holds
    cells of two colonies that existed before the move). The caller clears the marks.
    """
    first = tail
    visited[start] = 1
    queue[tail] = start
    tail += 1
    head = first
    colony = -1
    while head < tail:
        x = queue[head]
        head += 1
        g = group_of[x]  # the group of this satellite before the move (-1: none)
        if g >= 0 and group_size[g] >= COLONY_MIN:
            if colony < 0:
                colony = g
            elif colony != g:  # R12: two colonies in one group
                return tail, False
        px = after[x]
        for i in range(4):
            n = ORTHO[x, i]
            if n >= 0 and visited[n] == 0 and after[n] * px < 0:
                visited[n] = 1
                queue[tail] = n
                tail += 1
                if tail - first > MAX_GROUP:  # R11: a group of 7 or more
                    return tail, False
    return tail, True


@njit(cache=True)
def _push_ok(after, target, landing, scratch):
    """R11-R13 and R15.2-R15.3 for the board `after` of a displacement whose mover stands on
    `target` and whose displaced satellite stands on `landing`.

    scratch[CONNECTED/GROUP_OF/GROUP_SIZE] hold the analysis of the board before the move.
    Every new connection touches `target` or `landing` (module docstring), so only those two
    cells, their neighbours and the groups of the two moved satellites need checking.
    """
    connected = scratch[CONNECTED]
    if not is_connected(after, target):  # R15.2: the mover is connected after the move
        return False
    # R13 for every satellite that may have become connected (the two moved ones and their
    # orthogonal neighbours; the others' neighbourhoods did not change).
    if _newly_connected_clash(after, connected, target):
        return False
    if _newly_connected_clash(after, connected, landing):
        return False
    for i in range(4):
        n = ORTHO[target, i]
        if n >= 0 and _newly_connected_clash(after, connected, n):
            return False
        n = ORTHO[landing, i]
        if n >= 0 and _newly_connected_clash(after, connected, n):
            return False
    # R11, R12 and R15.3 on the groups of the mover and of the displaced satellite (every
    # other group is unchanged by the move).
    group_of = scratch[GROUP_OF]
    group_size = scratch[GROUP_SIZE]
    visited = scratch[VISITED]
    queue = scratch[STACK]
    tail, ok = _grow_component(after, target, 0, group_of, group_size, visited, queue)
    ok = ok and tail >= COLONY_MIN  # R15.3: the move forms or extends a colony
    if ok and visited[landing] == 0 and is_connected(after, landing):
        tail, ok = _grow_component(after, landing, tail, group_of, group_size, visited, queue)
    for i in range(tail):  # leave VISITED all zero for the next landing cell
        visited[queue[i]] = 0
    return ok


@njit(cache=True)
def _displacement_pushes(board, source, target, scratch):
    """Bit mask of legal pushes for the displacement source -> target (R15.2-R15.5).

    scratch[CONNECTED/GROUP_OF/GROUP_SIZE] must hold the analysis of `board`.
    """
    after = scratch[AFTER]
    visited = scratch[VISITED]
    for c in range(N_CELLS):  # the board after the move, before the push; no BFS marks
        after[c] = board[c]
        visited[c] = 0
    displaced = board[target]
    after[target] = board[source]
    after[source] = 0
    pushes = 0
    for d in range(8):
        for j in range(MAX_PUSH):
            landing = RAY[target, d, j]
            if landing < 0:
                break
            if after[landing] != 0:  # the cell the mover left counts as empty (R15.4)
                continue
            after[landing] = displaced
            if _push_ok(after, target, landing, scratch):
                pushes |= 1 << (d * MAX_PUSH + j)
            after[landing] = 0
    return pushes


@njit(cache=True)
def _prepare(board, sign, scratch):
    """`analyse` of `board` (same rows, same group ids) plus, for the player of `sign`, the
    landing class of every cell (CELL_CLASS) and the occupied cells (PIECES), in one sweep
    that visits only the satellites; return (n_connected, n_pieces)."""
    connected = scratch[CONNECTED]
    group_of = scratch[GROUP_OF]
    group_size = scratch[GROUP_SIZE]
    near = scratch[NEAR_OWN]
    cls = scratch[CELL_CLASS]
    pieces = scratch[PIECES]
    stack = scratch[STACK]
    for c in range(N_CELLS):  # branch-free, so it vectorises
        connected[c] = 0
        group_of[c] = -1
        near[c] = 0
        cls[c] = _BLOCKED * (board[c] != 0)
    n = 0
    for c in range(N_CELLS):  # branch-free list of the occupied cells
        pieces[n] = c
        n += board[c] != 0
    n_connected, _ = _label_groups(board, pieces, n, connected, group_of, group_size, stack)
    for j in range(n):  # R15.1: cells next to an own connected satellite
        c = pieces[j]
        if connected[c] and board[c] * sign > 0:
            for i in range(8):
                m = KING[c, i]
                if m >= 0:
                    near[m] = 1
    for j in range(n):
        c = pieces[j]
        if board[c] * sign < 0:
            # Branch-free: an unconnected opponent next to an own connected satellite is a
            # displacement candidate; its empty neighbours (blocked 3 or free 0 so far) become
            # connection cells (0 | 1 = 1; a satellite's class, never 0 or 1, stays).
            cls[c] = _BLOCKED - ((connected[c] == 0) & (near[c] != 0))
            for i in range(4):
                m = _ORTHO_SELF[c, i]
                cls[m] |= board[m] == 0
    return n_connected, n


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
    n_connected, n_pieces = _prepare(board, sign, scratch)
    connections_allowed = n_connected > 0 or has_free_edge(board)  # R9
    connected = scratch[CONNECTED]
    cls = scratch[CELL_CLASS]
    pieces = scratch[PIECES]
    count = 0
    for j in range(n_pieces):
        source = pieces[j]
        value = board[source] * sign
        if value <= 0 or connected[source]:
            continue
        base = source * 8 * MAX_VALUE
        for d in range(8):
            for k in range(1, value + 1):
                target = RAY[source, d, k - 1]
                if target < 0:
                    break
                kind = cls[target]
                # The common case without a branch on the (unpredictable) class: a move that
                # connects nothing is legal at any distance (R6, R7).
                free = kind == _FREE
                mask[base + d * MAX_VALUE + k - 1] = free
                count += free
                if k == value and (kind == _CONNECTS or kind == _DISPLACE):
                    if kind == _CONNECTS:
                        legal = connections_allowed and _connection_move_ok(
                            board, source, target, sign, scratch
                        )
                    else:
                        legal = _displacement_pushes(board, source, target, scratch) != 0
                    if legal:
                        mask[base + d * MAX_VALUE + k - 1] = 1
                        count += 1
    if count == 0:  # R19: pass only when nothing else is legal
        mask[PASS_ACTION] = 1
        count = 1
    return count


@njit(cache=True)
def _finish_move(state, is_pass):
    """Counters, turn, grace and passes after a completed move (R16-R19, SPN rules); return
    the number of connected satellites (red + blue) when it was counted, -1 when not."""
    board = state[:N_CELLS]
    mover = state[TO_MOVE]
    state[MOVES] += 1
    state[PASSES] = state[PASSES] + 1 if is_pass else 0
    if state[GRACE] != NO_GRACE:  # grace moves run: the same player moves again
        state[GRACE] -= 1
        return -1
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
    return red + blue


@njit(cache=True)
def _apply(state, action, scratch):
    """`apply_unchecked`; return the number of connected satellites after the move when it
    was counted (a completed move outside grace), -1 otherwise."""
    if action == PASS_ACTION:
        return _finish_move(state, True)
    if action >= PUSH_BASE:
        offset = action - PUSH_BASE
        landing = RAY[state[PENDING_TARGET], offset // MAX_PUSH, offset % MAX_PUSH]
        state[landing] = state[PENDING_PIECE]
        state[PENDING_TARGET] = NO_PENDING
        state[PENDING_FROM] = NO_PENDING
        state[PENDING_PIECE] = 0
        state[PENDING_PUSHES] = 0
        return _finish_move(state, False)
    source = action // (8 * MAX_VALUE)
    target = RAY[source, (action // MAX_VALUE) % 8, action % MAX_VALUE]
    board = state[:N_CELLS]
    if board[target] != 0:  # a displacement: the push comes as the next action
        analyse(board, scratch[CONNECTED], scratch[GROUP_OF], scratch[GROUP_SIZE], scratch[STACK])
        state[PENDING_PUSHES] = _displacement_pushes(board, source, target, scratch)
        state[PENDING_TARGET] = target
        state[PENDING_FROM] = source
        state[PENDING_PIECE] = board[target]
    board[target] = board[source]
    board[source] = 0
    if state[PENDING_TARGET] == NO_PENDING:
        return _finish_move(state, False)
    return -1


@njit(cache=True)
def apply_unchecked(state, action, scratch):
    """Play a legal action in place (legality is the caller's promise)."""
    _apply(state, action, scratch)


@njit(cache=True)
def _status(state, max_moves, n_connected):
    """`game_status`, given the number of connected satellites (-1: count them here)."""
    if state[PENDING_TARGET] != NO_PENDING:
        return ONGOING
    if n_connected < 0:
        red, blue = count_connected(state[:N_CELLS])
        n_connected = red + blue
    if n_connected >= END_CONNECTED or state[GRACE] == 0 or state[PASSES] >= 2:
        return TERMINATED
    if state[MOVES] >= max_moves:
        return TRUNCATED
    return ONGOING


@njit(cache=True)
def apply_status(state, action, scratch, max_moves):
    """`apply_unchecked` then `game_status`, counting the connected satellites once."""
    return _status(state, max_moves, _apply(state, action, scratch))


@njit(cache=True)
def game_status(state, max_moves):
    """ONGOING, TERMINATED (by R16, R18 or R19) or TRUNCATED (move cap R20 only)."""
    return _status(state, max_moves, -1)
