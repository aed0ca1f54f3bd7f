"""Position -> observation planes, from the acting player's point of view.

The plane layout (`PLANES`, `N_PLANES`, `PLANE_INDEX`, `OBSERVATION_SHAPE`) and its numba
kernels (`fill_observation`, the batched `fill_observations` / `observe_states`) live in
`satellites_env.core.planes` and are re-exported here. `PLANES` is the single source of
truth for the layout: the README table is checked against it by the tests. Planes are
channels-last, (10, 10, N_PLANES) float32 in [0, 1], like PettingZoo's classic board games.

`Observer` is what both envs (`satellites_v0` and the Gymnasium env) observe with: it owns its
buffers and its observation space; `fill_observation` is the kernel behind it.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .core.board import DEFAULT_MAX_MOVES, N_ACTIONS, N_CELLS, check_max_moves
from .core.engine import new_work
from .core.game import Game

# The layout and its kernels live in core (the batched engine observes with them); they are
# re-exported here, where the envs and the training code import them.
from .core.planes import (  # noqa: F401
    N_PLANES,
    OBSERVATION_SHAPE,
    PLANE_INDEX,
    PLANES,
    fill_observation,
    fill_observations,
    observe_states,
)


def observation_space() -> spaces.Dict:
    """A new observation space: ``{"observation": Box(0, 1, (10, 10, 22), float32),
    "action_mask": Box(0, 1, (3217,), int8)}``."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, OBSERVATION_SHAPE, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8),
        }
    )


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
        self._buffers: dict[str, np.ndarray] = {
            "observation": self.planes,
            "action_mask": self.mask,
        }

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_planes_flat"], state["_buffers"]  # views and aliases, rebuilt on load
        return state

    def __setstate__(self, state: dict) -> None:
        # A copy must write its observations into its own `planes`: a copied view would be
        # an array of its own, apart from the copied planes.
        self.__dict__.update(state)
        self._planes_flat = self.planes.reshape(N_CELLS, N_PLANES)
        self._buffers = {"observation": self.planes, "action_mask": self.mask}

    def observe(
        self, game: Game, player: int, to_act: bool, copy: bool = True
    ) -> dict[str, np.ndarray]:
        """The observation of `game` (a core Game) for `player` (0 red, 1 blue); the legal
        mask when `to_act` and the game is not over, zeros otherwise."""
        if game.max_moves != self.max_moves:
            raise ValueError(
                f"this Observer is for max_moves={self.max_moves}; the game has "
                f"max_moves={game.max_moves}"
            )
        if not copy:
            fill_observation(game.state, player, self.max_moves, self._planes_flat, self.work)
            if to_act and not game.is_over:
                self.mask[:] = game.legal_mask()
            else:
                self.mask[:] = 0
            return self._buffers
        if to_act and not game.is_over:
            mask = game.legal_mask().copy()
        else:
            mask = np.zeros(N_ACTIONS, dtype=np.int8)
        return {
            "observation": observe(game.state, player, self.max_moves, self.work),
            "action_mask": mask,
        }


def observe(state: np.ndarray, player: int, max_moves: int, scratch: np.ndarray) -> np.ndarray:
    """A fresh (10, 10, N_PLANES) float32 observation of `state` for `player`."""
    planes = np.empty((N_CELLS, N_PLANES), dtype=np.float32)
    fill_observation(state, player, max_moves, planes, scratch)
    return planes.reshape(OBSERVATION_SHAPE)
