"""Satellites as an OpenSpiel game, `python_satellites`, thin over the engine's `Game`.

Importing this module registers the game with ``pyspiel.register_game``; then
``pyspiel.load_game("python_satellites")`` (or ``"python_satellites(max_moves=200)"``) builds it.

* Perfect information, sequential, zero-sum, terminal returns (+1/-1/0, R22-R24), two players:
  0 is red (moves first), 1 is blue.
* **The R4 set-up is 24 chance nodes, one per satellite.** Each draws the value of the next
  slot (red's 12 slots, then blue's, in the order `initial_state` fills them) from the values
  that player has left, with probability (copies left) / (slots left): a uniform shuffle of
  each player's 1,1,1,2,...,4,4,4, exactly R4. Why not one chance outcome per set-up: there
  are 369,600 orders per player, about 1.4e11 set-ups, more than OpenSpiel's int-sized
  ``max_chance_outcomes`` and far too many to list at one node; a fixed sample of seeds would
  leave most set-ups out. Here a chance node has at most 4 outcomes (outcome = value - 1),
  every set-up is reachable with its true probability, and a seed's set-up is 24 outcomes
  ([`setup_outcomes`][satellites_env.openspiel.game.setup_outcomes]).
* Actions are the engine's 3,217 ids (RULES.md section 8); the legal actions are the engine's
  exact mask, the two steps of a displacement included.
* The observation tensor is the envs' planes for the given player, channels-last
  (10, 10, 22) float32 (``satellites_env.observation``); all zeros during the set-up.
* ``str(state)`` is the position in SPN; during a displacement it is the SPN before the move
  and the move (``<spn> c10-f7``); during the set-up, ``set-up`` and the values drawn so far.
  ``game.new_initial_state(spn)`` starts from an SPN position (like chess's FEN).
* ``state.serialize()`` / ``game.deserialize_state(text)`` are OpenSpiel's own mechanism for
  Python games: the action history and a pickled copy of the state's attributes (here the
  engine's `Game`), so a copy is exact. Unpickling runs code named in the text: deserialize
  only strings you wrote. For a record from elsewhere, replay its action history on
  ``game.new_initial_state()`` (every action is checked against the legal mask).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from ..core import N_ACTIONS, Game
from ..core.board import (
    COPIES_PER_VALUE,
    DEFAULT_MAX_MOVES,
    MAX_VALUE,
    SATELLITES_PER_PLAYER,
    check_max_moves,
)
from ..core.checks import check_seed
from ..core.engine import new_work
from ..core.notation import LETTER_OF_PIECE, move_text, to_spn
from ..core.planes import N_PLANES, OBSERVATION_SHAPE, fill_observation
from ..core.state import (
    NO_PENDING,
    PENDING_FROM,
    PENDING_PIECE,
    PENDING_PUSHES,
    PENDING_TARGET,
    initial_state,
)

GAME_NAME = "python_satellites"
SETUP_SLOTS = 2 * SATELLITES_PER_PLAYER  # one chance node per satellite
_VALUES = np.repeat(np.arange(1, MAX_VALUE + 1), COPIES_PER_VALUE)
_COLORS = ("red", "blue")

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Satellites",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"max_moves": DEFAULT_MAX_MOVES},
)


class _Shuffles:
    """Stands in for the generator `initial_state` draws from: hands out given orders (so the
    engine's own set-up code places the chance outcomes), recording what a real generator
    drew when it wraps one."""

    def __init__(self, orders: Sequence[np.ndarray] = (), rng: np.random.Generator | None = None):
        self.orders = list(orders)
        self.rng = rng

    def permutation(self, values: np.ndarray) -> np.ndarray:
        if self.rng is not None:
            order = self.rng.permutation(values)
            self.orders.append(order)
            return order
        return self.orders.pop(0)


def setup_outcomes(seed: int | None) -> list[int]:
    """The 24 chance outcomes (value - 1 per slot) that give the set-up of
    ``Game.new(seed=seed)`` (and of the envs' ``reset(seed=seed)``)."""
    recorder = _Shuffles(rng=np.random.default_rng(check_seed(seed)))
    initial_state(recorder)  # type: ignore[arg-type]
    return [int(value) - 1 for order in recorder.orders for value in order]


def _state_from_values(values: Sequence[int]) -> np.ndarray:
    red, blue = np.asarray(values[:12]), np.asarray(values[12:])
    return initial_state(_Shuffles([red, blue]))  # type: ignore[arg-type]


class SatellitesGame(pyspiel.Game):
    """The OpenSpiel game; parameter ``max_moves`` (R20, default 400)."""

    def __init__(self, params: dict | None = None):
        params = dict(params or {})
        unknown = set(params) - {"max_moves"}
        if unknown:
            raise ValueError(f"python_satellites has one parameter, max_moves; got {unknown}")
        self.max_moves = check_max_moves(params.get("max_moves", DEFAULT_MAX_MOVES))
        info = pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS,
            max_chance_outcomes=MAX_VALUE,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            # a displacement is two actions; every other move one
            max_game_length=2 * self.max_moves,
        )
        super().__init__(GAME_TYPE, info, {"max_moves": self.max_moves})

    def new_initial_state(self, spn: str | None = None) -> SatellitesState:
        """The set-up's first chance node, or the SPN position `spn` (NotationError if bad)."""
        state = SatellitesState(self)
        if spn is not None:
            state._game = Game.from_spn(spn, self.max_moves)
        return state

    def max_chance_nodes_in_history(self) -> int:
        return SETUP_SLOTS

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The planes observer, or the history observer for perfect-recall types."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return PlanesObserver(self.max_moves, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class SatellitesState(pyspiel.State):
    """A position: the set-up being drawn (`_setup`), then the engine's `Game` (`_game`)."""

    def __init__(self, game: SatellitesGame):
        super().__init__(game)
        self._max_moves = game.max_moves
        self._setup: list[int] = []  # values drawn so far, red's 12 then blue's (R4)
        self._game: Game | None = None

    @property
    def game(self) -> Game:
        """The engine's `Game` of this state (ValueError during the set-up)."""
        if self._game is None:
            raise ValueError("the set-up is still being drawn (chance nodes)")
        return self._game

    # ------------------------------------------------------------------ OpenSpiel API

    def current_player(self) -> int:
        if self._game is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self._game.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        return self._game.to_move

    def _legal_actions(self, player: int) -> list[int]:
        return [int(action) for action in self.game.legal_actions()]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = self._values_left()
        total = sum(left.values())
        return [(value - 1, count / total) for value, count in sorted(left.items()) if count]

    def _values_left(self) -> dict[int, int]:
        start = 0 if len(self._setup) < SATELLITES_PER_PLAYER else SATELLITES_PER_PLAYER
        drawn = self._setup[start:]
        return {v: COPIES_PER_VALUE - drawn.count(v) for v in range(1, MAX_VALUE + 1)}

    def _apply_action(self, action: int) -> None:
        if self._game is None:
            value = int(action) + 1
            if not 1 <= value <= MAX_VALUE or self._values_left()[value] == 0:
                raise ValueError(f"chance outcome {action} is not possible here")
            self._setup.append(value)
            if len(self._setup) == SETUP_SLOTS:
                self._game = Game(_state_from_values(self._setup), self._max_moves)
            return
        self._game.play(int(action))  # checked: IllegalActionError for an illegal action

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            slot = len(self._setup)
            color = _COLORS[slot // SATELLITES_PER_PLAYER]
            return f"{color} satellite {slot % SATELLITES_PER_PLAYER + 1}: {int(action) + 1}"
        return self.game.describe(int(action))

    def is_terminal(self) -> bool:
        return self._game is not None and self._game.is_over

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        red = float(self.game.score().reward(0))
        return [red, -red]

    def __str__(self) -> str:
        if self._game is None:
            return "set-up " + "".join(
                LETTER_OF_PIECE[v if i < SATELLITES_PER_PLAYER else -v]
                for i, v in enumerate(self._setup)
            )
        return position_text(self._game)


def position_text(game: Game) -> str:
    """SPN of `game`; during a displacement, the SPN before the move and the move."""
    if game.pending_push is None:
        return game.to_spn()
    state = game.state.copy()
    source, target = int(state[PENDING_FROM]), int(state[PENDING_TARGET])
    state[source], state[target] = state[target], state[PENDING_PIECE]
    state[PENDING_FROM] = state[PENDING_TARGET] = NO_PENDING
    state[PENDING_PIECE] = state[PENDING_PUSHES] = 0
    return f"{to_spn(state)} {move_text(source, target)}"


def state_from_game(spiel_game: SatellitesGame, game: Game) -> SatellitesState:
    """An OpenSpiel state at `game`'s position (a copy; its OpenSpiel history starts here)."""
    if game.max_moves != spiel_game.max_moves:
        raise ValueError(
            f"the game has max_moves={game.max_moves}, the OpenSpiel game "
            f"max_moves={spiel_game.max_moves}"
        )
    state = spiel_game.new_initial_state()
    state._game = game.clone()
    return state


class PlanesObserver:
    """OpenSpiel's observer interface over the envs' planes (channels-last (10, 10, 22))."""

    def __init__(self, max_moves: int, params: Any = None):
        if params:
            raise ValueError(f"the planes observer takes no parameters, got {params}")
        self.max_moves = max_moves
        self.tensor = np.zeros(int(np.prod(OBSERVATION_SHAPE)), np.float32)
        self.dict = {"observation": self.tensor.reshape(OBSERVATION_SHAPE)}
        self._flat = self.tensor.reshape(-1, N_PLANES)
        self._work = new_work()

    def set_from(self, state: SatellitesState, player: int) -> None:
        if state._game is None:
            self.tensor[:] = 0.0
            return
        fill_observation(state._game.state, player, self.max_moves, self._flat, self._work)

    def string_from(self, state: SatellitesState, player: int) -> str:
        return str(state)


pyspiel.register_game(GAME_TYPE, SatellitesGame)
