"""The engine API: the one stateless interface to the rules, over the int32 state array.

In the spirit of pgx's `Game` (`init`, `step`, `legal_action_mask`, `is_terminal`,
`rewards`): every function takes a state array (`satellites_env.core.state`) and keeps no
state of its own, so search and self-play can hold thousands of positions as plain arrays.
Each fact has one kernel: legal moves and stepping (`satellites_env.core.rules`), groups, control
and the result (`satellites_env.core.scoring`); everything else (scoring objects, the heuristic,
observation planes, rendering, reward shaping) calls them through this module. `Game`
(`satellites_env.core.game`) is the checked, friendly object over one state.

Two levels:

* Python functions (`init`, `step`, `legal_action_mask`, `status`, `is_terminal`, `rewards`,
  `winner`, `groups`) that allocate what they return, for tools and tests. They check their
  arguments' types and shapes (a state is an integer array of shape (STATE_LEN,), a board of
  shape (N_CELLS,): ValueError naming it), not a state's values: a state from `init`, `step`
  or `parse_spn` is valid, one from elsewhere goes through `Game(state)` or
  `state.check_state_rows` first;
* the batched forms (`satellites_env.core.batch`): `BatchedEngine` and its parallel kernels
  (`reset_states`, `legal_masks`, `apply_actions`, `statuses`, `final_rewards`,
  `step_autoreset`) over N games in one `(N, STATE_LEN)` array;
* numba kernels for hot loops (`fill_legal_mask`, `apply_unchecked`, `game_status`,
  `analyse_groups`, `group_controller`, `tally`, `verdict`, `winner_code`,
  `connections_allowed`), which write into buffers the caller owns: `new_work()` gives the
  work buffer every kernel takes, one per thread of play. After `analyse_groups(board, work)`
  the rows `CONNECTED`, `GROUP_OF` (cell -> group id, -1 for none), `GROUP_SIZE`, `RED_SUM` and
  `BLUE_SUM` (group id -> value) hold its result; the other rows are private to the rules.

>>> from satellites_env.core import engine
>>> state = engine.init(seed=0)
>>> mask = engine.legal_action_mask(state)
>>> state = engine.step(state, int(mask.argmax()))  # the first legal action
>>> engine.status(state), engine.rewards(state).tolist()
(0, [0.0, 0.0])
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .batch import (
    BatchedEngine,
    apply_actions,
    final_rewards,
    legal_masks,
    new_batch_scratch,
    reset_states,
    statuses,
    step_autoreset,
)
from .board import (
    BLUE,
    DEFAULT_MAX_MOVES,
    MAX_MOVES_LIMIT,
    N_ACTIONS,
    N_CELLS,
    ORTHO,
    RED,
    check_max_moves,
)
from .checks import check_seed, quoted
from .rules import (
    BLUE_SUM,
    CONNECTED,
    GROUP_OF,
    GROUP_SIZE,
    ONGOING,
    RED_SUM,
    TERMINATED,
    TRUNCATED,
    IllegalActionError,
    apply_unchecked,
    count_connected,
    fill_legal_mask,
    game_status,
    has_free_edge,
    is_connected,
)
from .rules import new_scratch as new_work
from .scoring import (
    DRAW,
    NO_COLONY,
    Group,
    Score,
    analyse_groups,
    group_controller,
    groups_of,
    tally,
    verdict,
    winner_code,
)
from .state import (
    STATE_LEN,
    TO_MOVE,
    board_array,
    check_rng,
    empty_state,
    initial_state,
    state_array,
)


@njit(cache=True)
def connections_allowed(board):
    """R9: a move may make a connection once one exists or an edge is free of satellites."""
    for c in range(N_CELLS):
        if is_connected(board, c):
            return True
    return has_free_edge(board)


# --------------------------------------------------------------------------- Python level


def init(seed: int | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """A new state from the R4 random set-up (from `rng`, or a generator seeded with `seed`:
    None or an integer from 0 to 2**64 - 1)."""
    return initial_state(
        check_rng(rng) if rng is not None else np.random.default_rng(check_seed(seed))
    )


def legal_action_mask(state: np.ndarray, work: np.ndarray | None = None) -> np.ndarray:
    """The exact (3217,) int8 mask of legal actions; all zeros when the game is over by the
    rules or has played MAX_MOVES_LIMIT moves (the highest cap: the counter stops there)."""
    state = state_array(state)
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    if game_status(state, MAX_MOVES_LIMIT) == ONGOING:
        fill_legal_mask(state, mask, new_work() if work is None else work)
    return mask


def step(state: np.ndarray, action: int, work: np.ndarray | None = None) -> np.ndarray:
    """The state after `action` (a new array; `state` is unchanged). Raises IllegalActionError
    for an action that is not legal; hot loops use `apply_unchecked` in place instead."""
    state = state_array(state)
    work = new_work() if work is None else work
    if (
        isinstance(action, (bool, np.bool_))
        or not isinstance(action, (int, np.integer))
        or not 0 <= action < N_ACTIONS
        or not legal_action_mask(state, work)[action]
    ):
        raise IllegalActionError(f"action {quoted(action)} is not legal in this state")
    action = int(action)
    child = state.copy()
    apply_unchecked(child, action, work)
    return child


def current_player(state: np.ndarray) -> int:
    """0 (red) or 1 (blue): who acts next."""
    return int(state_array(state)[TO_MOVE])


def status(state: np.ndarray, max_moves: int = DEFAULT_MAX_MOVES) -> int:
    """ONGOING, TERMINATED (by R16, R18 or R19) or TRUNCATED (the move cap R20 only);
    `max_moves` is 1 .. MAX_MOVES_LIMIT (ValueError naming it otherwise)."""
    return int(game_status(state_array(state), check_max_moves(max_moves)))


def is_terminal(state: np.ndarray, max_moves: int = DEFAULT_MAX_MOVES) -> bool:
    """True once the game is over, by the rules or by the move cap."""
    return status(state, max_moves) != ONGOING


def winner(board: np.ndarray) -> int | None:
    """RED, BLUE or None (draw) by R21-R23 on `board`."""
    code = int(winner_code(board_array(board), new_work()))
    return None if code == DRAW else code


def rewards(state: np.ndarray, max_moves: int = DEFAULT_MAX_MOVES) -> np.ndarray:
    """(red, blue) float32 rewards (R24): the result once the game is over, zeros before."""
    out = np.zeros(2, dtype=np.float32)
    if is_terminal(state, max_moves):
        code = winner(state[:N_CELLS])
        if code is not None:
            out[code] = 1.0
            out[1 - code] = -1.0
    return out


def links(board: np.ndarray) -> list[tuple[int, int]]:
    """Every connection (R8) as a pair of cells (west/north cell first), in cell order."""
    board = board_array(board)
    pairs = []
    for cell in range(N_CELLS):
        piece = board[cell]
        for n in (ORTHO[cell, 1], ORTHO[cell, 2]):  # east and south: each link once
            if piece != 0 and n >= 0 and board[n] * piece < 0:
                pairs.append((cell, int(n)))
    return pairs


def groups(board: np.ndarray) -> tuple[Group, ...]:
    """All groups (pairs and colonies) with their cells and value sums (R10, R21)."""
    return groups_of(board_array(board))


__all__ = [
    "BLUE",
    "BLUE_SUM",
    "CONNECTED",
    "DRAW",
    "GROUP_OF",
    "GROUP_SIZE",
    "MAX_MOVES_LIMIT",
    "NO_COLONY",
    "ONGOING",
    "RED",
    "RED_SUM",
    "STATE_LEN",
    "TERMINATED",
    "TRUNCATED",
    "BatchedEngine",
    "Group",
    "IllegalActionError",
    "Score",
    "analyse_groups",
    "apply_actions",
    "apply_unchecked",
    "connections_allowed",
    "count_connected",
    "current_player",
    "empty_state",
    "fill_legal_mask",
    "final_rewards",
    "game_status",
    "group_controller",
    "groups",
    "init",
    "is_connected",
    "is_terminal",
    "legal_action_mask",
    "legal_masks",
    "links",
    "new_batch_scratch",
    "new_work",
    "reset_states",
    "rewards",
    "status",
    "statuses",
    "step",
    "step_autoreset",
    "tally",
    "verdict",
    "winner",
    "winner_code",
]
