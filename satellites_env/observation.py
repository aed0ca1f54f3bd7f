"""Position -> observation planes, from the acting player's point of view.

`PLANES` is the single source of truth for the layout: the README table is checked
against it by the tests. Planes are channels-last, (10, 10, N_PLANES) float32 in [0, 1],
like PettingZoo's classic board games.

`Observer` is what both envs (`satellites_v0` and the Gymnasium env) observe with: it owns its
buffers and its observation space. `fill_observation` is the numba kernel behind it (the
batched vector env calls it per game).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from numba import njit

from .core.board import (COLONY_MIN, DEFAULT_MAX_MOVES, GRACE_MOVES, MAX_GROUP, N_ACTIONS,
                         N_CELLS, SIZE)
from .core.engine import (BLUE_SUM, CONNECTED, GROUP_OF, GROUP_SIZE, RED_SUM, analyse_groups,
                          connections_allowed, new_work)
from .core.game import check_max_moves
from .core.state import (
    GRACE,
    MOVES,
    NO_GRACE,
    NO_PENDING,
    PASSES,
    PENDING_PIECE,
    PENDING_TARGET,
)

PLANES: tuple[tuple[str, str], ...] = (
    ("own_1", "own satellite of value 1"),
    ("own_2", "own satellite of value 2"),
    ("own_3", "own satellite of value 3"),
    ("own_4", "own satellite of value 4"),
    ("opp_1", "opponent satellite of value 1"),
    ("opp_2", "opponent satellite of value 2"),
    ("opp_3", "opponent satellite of value 3"),
    ("opp_4", "opponent satellite of value 4"),
    ("own_connected", "own satellite that is connected (locked, R8)"),
    ("opp_connected", "opponent satellite that is connected"),
    ("group_size", "size of the satellite's group / 6 (0 when unconnected, R10)"),
    ("colony", "satellite in a colony (group of 3 or more)"),
    ("own_controls", "satellite in a colony the observer controls (R21)"),
    ("opp_controls", "satellite in a colony the opponent controls"),
    ("crowned", "satellite in a crowned colony (6 satellites, R11)"),
    ("pushed", "value / 4 of the displaced satellite waiting to be pushed, on the cell it is "
               "pushed from (only between the two steps of a displacement, R15)"),
    ("connections_allowed", "all ones when a move may make a connection now (R9)"),
    ("grace", "all ones while grace moves run (the opponent is done, R17)"),
    ("grace_left", "grace moves left / 3 (R18)"),
    ("passed", "all ones when the previous move was a pass (R19)"),
    ("progress", "completed moves / max_moves (R20)"),
    ("is_red", "all ones when the observer is red (player_0)"),
)
N_PLANES = len(PLANES)
PLANE_INDEX = {name: i for i, (name, _) in enumerate(PLANES)}
OBSERVATION_SHAPE = (SIZE, SIZE, N_PLANES)

_OWN, _OPP = 0, 4
_OWN_CONN, _OPP_CONN, _GROUP, _COLONY, _OWN_CTRL, _OPP_CTRL, _CROWNED, _PUSHED = range(8, 16)
_ALLOWED, _GRACE, _GRACE_LEFT, _PASSED, _PROGRESS, _IS_RED = range(16, 22)


@njit(cache=True)
def fill_observation(state, player, max_moves, planes, work):
    """Write the planes of `state` seen by `player` (0 red, 1 blue) into planes[100, N_PLANES].

    `work` is an engine work buffer (`satellites_env.core.engine.new_work()`).
    """
    planes[:] = 0.0
    board = state[:N_CELLS]
    sign = 1 - 2 * player
    analyse_groups(board, work)
    connected = work[CONNECTED]
    group_of = work[GROUP_OF]
    group_size = work[GROUP_SIZE]
    for c in range(N_CELLS):
        piece = board[c] * sign
        if piece == 0:
            continue
        own = piece > 0
        value = piece if own else -piece
        planes[c, (_OWN if own else _OPP) + value - 1] = 1.0
        if connected[c] == 0:
            continue
        planes[c, _OWN_CONN if own else _OPP_CONN] = 1.0
        g = group_of[c]
        size = group_size[g]
        planes[c, _GROUP] = size / MAX_GROUP
        if size >= COLONY_MIN:
            planes[c, _COLONY] = 1.0
            balance = (work[RED_SUM, g] - work[BLUE_SUM, g]) * sign  # R21 from the observer
            if balance > 0:
                planes[c, _OWN_CTRL] = 1.0
            elif balance < 0:
                planes[c, _OPP_CTRL] = 1.0
            if size == MAX_GROUP:
                planes[c, _CROWNED] = 1.0
    target = state[PENDING_TARGET]
    if target != NO_PENDING:
        pushed = state[PENDING_PIECE]
        planes[target, _PUSHED] = (pushed if pushed > 0 else -pushed) / 4.0
    allowed = 1.0 if connections_allowed(board) else 0.0
    grace = state[GRACE]
    progress = min(state[MOVES] / max_moves, 1.0)
    for c in range(N_CELLS):
        planes[c, _ALLOWED] = allowed
        if grace != NO_GRACE:
            planes[c, _GRACE] = 1.0
            planes[c, _GRACE_LEFT] = grace / GRACE_MOVES
        if state[PASSES] > 0:
            planes[c, _PASSED] = 1.0
        planes[c, _PROGRESS] = progress
        if player == 0:
            planes[c, _IS_RED] = 1.0


def observation_space() -> spaces.Dict:
    """A new observation space: ``{"observation": Box(0, 1, (10, 10, 22), float32),
    "action_mask": Box(0, 1, (3217,), int8)}``."""
    return spaces.Dict({
        "observation": spaces.Box(0.0, 1.0, OBSERVATION_SHAPE, dtype=np.float32),
        "action_mask": spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8),
    })


class Observer:
    """The observations of the envs: planes for a player plus the legal-action mask.

    One Observer per env (or per thread of play): it owns its engine work buffer, its
    output buffers and its ``space`` (the Dict observation space above).

    >>> from satellites_env.core import Game
    >>> observer = Observer(max_moves=400)
    >>> obs = observer.observe(Game.new(seed=0), player=0, to_act=True)
    >>> obs["observation"].shape, obs["action_mask"].dtype, observer.space.contains(obs)
    ((10, 10, 22), dtype('int8'), True)

    ``observe(..., copy=True)`` (the default) returns fresh arrays the caller may keep;
    ``copy=False`` returns the Observer's own buffers (``planes``, ``mask``), overwritten by
    the next call. The mask is the Game's cached one (computed once per position) when the
    player is to act, all zeros otherwise.
    """

    def __init__(self, max_moves: int = DEFAULT_MAX_MOVES):
        self.max_moves = check_max_moves(max_moves)
        self.space = observation_space()
        self.work = new_work()
        self.planes = np.zeros(OBSERVATION_SHAPE, dtype=np.float32)
        self.mask = np.zeros(N_ACTIONS, dtype=np.int8)
        self._planes_flat = self.planes.reshape(N_CELLS, N_PLANES)  # a view: the kernel's shape
        self._buffers = {"observation": self.planes, "action_mask": self.mask}

    def observe(self, game, player: int, to_act: bool, copy: bool = True) -> dict[str, np.ndarray]:
        """The observation of `game` (a core Game) for `player` (0 red, 1 blue); the legal
        mask when `to_act` and the game is not over, zeros otherwise."""
        if game.max_moves != self.max_moves:
            raise ValueError(f"this Observer is for max_moves={self.max_moves}; the game has "
                             f"max_moves={game.max_moves}")
        if not copy:
            fill_observation(game.state, player, self.max_moves, self._planes_flat, self.work)
            if to_act and not game.is_over:
                self.mask[:] = game.legal_mask()
            else:
                self.mask[:] = 0
            return self._buffers
        planes = np.empty((N_CELLS, N_PLANES), dtype=np.float32)
        fill_observation(game.state, player, self.max_moves, planes, self.work)
        if to_act and not game.is_over:
            mask = game.legal_mask().copy()
        else:
            mask = np.zeros(N_ACTIONS, dtype=np.int8)
        return {"observation": planes.reshape(OBSERVATION_SHAPE), "action_mask": mask}


def observe(state: np.ndarray, player: int, max_moves: int, scratch: np.ndarray) -> np.ndarray:
    """A fresh (10, 10, N_PLANES) float32 observation of `state` for `player`."""
    planes = np.empty((N_CELLS, N_PLANES), dtype=np.float32)
    fill_observation(state, player, max_moves, planes, scratch)
    return planes.reshape(OBSERVATION_SHAPE)
