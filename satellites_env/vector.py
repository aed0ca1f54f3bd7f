"""`SatellitesVectorEnv`: N self-play games stepped together on the batched engine.

One env holds N independent games ([`BatchedEngine`][satellites_env.core.batch.BatchedEngine]); each
``step`` takes one action per game, for whichever player is to move in that game, and
returns the observation of the player to move next. It follows Gymnasium's ``VectorEnv``
conventions where they fit a two-player game:

* ``observations`` = ``{"observation": (N, 10, 10, 22) float32, "action_mask": (N, 3217)
  int8}``, the same planes and mask as ``satellites_v0`` for the player to move;
* ``rewards`` is (N, 2) float32, (red, blue): +1/-1/0 on the step that ends a game (R24),
  0 otherwise; ``terminations`` / ``truncations`` are (N,) bool (truncation = the move cap
  R20 only);
* ``infos["current_player"]`` (N,) int64: 0 red, 1 blue, who acts next in each game.

Auto-reset (``metadata["autoreset_mode"]`` is ``AutoresetMode.SAME_STEP``): the step that
ends game i reports its reward and flag and, in the same call, starts game i's next episode;
the observation returned for game i is the new game's first. The finished game's last
observation is in the infos, for the finished games only: ``infos["_final_obs"]`` (N,) bool
marks them, ``infos["final_obs_index"]`` lists their indices in order, and
``infos["final_obs"]`` holds their planes (k, 10, 10, 22) (for the player who would move
there) and all-zero masks (k, 3217); ``infos["final_spn"]`` their positions in SPN.

Seeding: ``reset(seed=s)`` makes every game reproducible: game i's e-th episode is a pure
function of (s, i, e) (see `satellites_env.core.batch`).

An illegal action raises [`IllegalActionError`][satellites_env.core.engine.IllegalActionError]
naming the game; every action is checked before any game moves, so no game changes. ``step`` before
``reset`` raises [`ResetNeededError`][satellites_env.env.ResetNeededError]. Bad arguments raise a
ValueError naming the argument, by the same rule as the other envs: ``num_envs`` (1 ..
``MAX_NUM_GAMES``, 131072), ``max_moves`` (1 .. ``MAX_MOVES_LIMIT``), ``num_chunks``,
``copy`` (a bool), ``reset``'s ``seed`` (None or 0 .. 2**64 - 1) and ``options`` (None or a
dict; the vector env takes no ``"spn"``: load positions with ``env.engine.load``).

>>> env = SatellitesVectorEnv(4)
>>> obs, infos = env.reset(seed=0)
>>> obs["observation"].shape, obs["action_mask"].shape, infos["current_player"].tolist()
((4, 10, 10, 22), (4, 3217), [0, 0, 0, 0])
>>> actions = obs["action_mask"].argmax(axis=1)
>>> obs, rewards, terminations, truncations, infos = env.step(actions)
>>> rewards.shape, infos["current_player"].tolist()
((4, 2), [1, 1, 1, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .core.batch import MAX_NUM_GAMES, BatchedEngine
from .core.board import DEFAULT_MAX_MOVES, N_ACTIONS, check_max_moves
from .core.checks import check_int, check_seed, quoted
from .core.engine import IllegalActionError
from .core.notation import to_spn
from .core.planes import OBSERVATION_SHAPE, observe_states
from .core.state import TO_MOVE
from .env import ResetNeededError, spn_option
from .observation import observation_space

__all__ = ["IllegalActionError", "SatellitesVectorEnv", "observe_states"]


class SatellitesVectorEnv(VectorEnv):
    """N Satellites games for self-play, stepped in parallel (module docstring).

    `copy.deepcopy` and `pickle` keep the whole state (every game, the batch's seed and
    episode counters, so the copies' next episodes are the same), with buffers of their own.

    Args:
        num_envs: the number of games N, 1 .. `MAX_NUM_GAMES` (131072).
        max_moves: the move cap of every game (R20; `DEFAULT_MAX_MOVES` is 400).
        copy: return fresh arrays each step (the default); with False the env returns its own
            buffers, overwritten by the next step (faster for loops that consume them at once).
        num_chunks: how many slices of the N games the parallel kernels share among numba's
            threads (default: 4 per thread).
    """

    # gymnasium's VectorEnv declares `metadata` a plain class attribute, so it is one here too
    metadata: dict[str, Any] = {  # noqa: RUF012
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int,
        max_moves: int = DEFAULT_MAX_MOVES,
        copy: bool = True,
        num_chunks: int | None = None,
    ):
        self.num_envs = check_int("num_envs", num_envs, 1, MAX_NUM_GAMES)
        self.max_moves = check_max_moves(max_moves)
        if not isinstance(copy, (bool, np.bool_)):
            raise ValueError(f"copy must be True or False, got {quoted(copy)}")
        self.copy = bool(copy)
        self.render_mode = None
        try:
            self.engine = BatchedEngine(
                self.num_envs, self.max_moves, seed=0, num_chunks=num_chunks
            )
            self._planes = np.zeros((self.num_envs, *OBSERVATION_SHAPE), dtype=np.float32)
        except MemoryError:
            raise ValueError(f"num_envs={self.num_envs}: not enough memory for the batch") from None
        except ValueError as error:  # the engine's names its num_games: here num_envs
            raise ValueError(str(error).replace("num_games", "num_envs")) from None
        self.single_observation_space = observation_space()  # the envs' one definition
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._started = False

    # ------------------------------------------------------------------ Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start every game afresh (from `seed`, one for the batch: reproducible; None: a fresh
        random seed). `options` may be None or a dict; none is used (unknown keys warn, as in
        the other envs), and "spn" is refused: every game starts from the R4 set-up."""
        seed = check_seed(seed)
        if spn_option(options) is not None:
            raise ValueError(
                "options: SatellitesVectorEnv.reset takes no 'spn' (every game "
                "starts from the R4 set-up); load a position into game i with "
                "env.engine.load(i, parse_spn(spn))"
            )
        super().reset(seed=seed)
        self.engine.reset(seed)
        self._started = True
        return self._observations(), {"current_player": self._current_player()}

    def step(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per game (for its player to move); finished games restart at once."""
        if not self._started:
            raise ResetNeededError("call reset() before step()")
        engine = self.engine
        rewards, terminated, truncated = engine.step(actions)  # checks every action first
        infos: dict[str, Any] = {"current_player": self._current_player()}
        done = terminated | truncated
        if done.any():
            index = np.flatnonzero(done)
            final = engine.final_states[index]
            infos["_final_obs"] = done.copy()
            infos["final_obs_index"] = index
            infos["final_obs"] = {
                "observation": engine.observe(states=final),
                "action_mask": np.zeros((len(index), N_ACTIONS), dtype=np.int8),
            }
            infos["final_spn"] = [to_spn(row) for row in final]
        if self.copy:
            rewards, terminated, truncated = rewards.copy(), terminated.copy(), truncated.copy()
        return self._observations(), rewards, terminated, truncated, infos

    def close(self, **kwargs: Any) -> None:
        """Nothing to release (no processes, no windows); marks the env closed."""
        self.closed = True

    # ------------------------------------------------------------------ helpers

    def to_spn(self, i: int) -> str:
        """Game i's current position in SPN (RULES.md section 7)."""
        return to_spn(self.engine.states[check_int("i", i, 0, self.num_envs - 1)])

    @property
    def states(self) -> np.ndarray:
        """The (N, STATE_LEN) int32 state array (the engine's, live: do not write to it)."""
        return self.engine.states

    def _current_player(self) -> np.ndarray:
        return self.engine.states[:, TO_MOVE].astype(np.int64)

    def _observations(self) -> dict[str, np.ndarray]:
        self.engine.observe(self._planes)
        if self.copy:
            return {"observation": self._planes.copy(), "action_mask": self.engine.masks.copy()}
        return {"observation": self._planes, "action_mask": self.engine.masks}

    def __repr__(self) -> str:
        return f"SatellitesVectorEnv(num_envs={self.num_envs}, max_moves={self.max_moves})"
