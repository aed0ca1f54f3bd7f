"""The PettingZoo AEC environment `satellites_v0` (a thin adapter over the core `Game`).

`raw_env` is the env itself; `env()` wraps it like PettingZoo's classic games (an illegal
action ends the game with -1 for the offender, the call order is enforced) in one layer,
`ClassicWrapper`, instead of PettingZoo's three (same behaviour, without three levels of
attribute forwarding on every `last()` and `step()`).

Errors (all ValueErrors; one rule for this env, the Gymnasium env and the vector env):

* `IllegalActionError` (a ValueError): an action that is not an integer in 0..3216 (bools,
  floats, strings, None for an agent that is not done, arrays other than one integer), an
  illegal action on the raw env, or a non-None action for an agent that is done. Nothing
  changes when it is raised.
* `ResetNeededError` (a ValueError and a `gymnasium.error.ResetNeeded`): `step`, `observe`,
  `last` or `render` before `reset()`; on the raw env also `step` once both agents have
  stepped out of a finished game (the wrapped env warns and ignores it, as PettingZoo's
  wrapper does).
* `NotationError` (a ValueError): `reset(options={"spn": ...})` with a malformed or
  unreachable SPN.
* ValueError naming the argument: a bad constructor argument (`render_mode`, `max_moves`
  outside 1..MAX_MOVES_LIMIT, `screen_size` outside 64..4096, wrong types included), a `seed`
  that is not None or an integer from 0 to 2**64 - 1, `options` that are not a dict.
  Nothing changes when it is raised. Messages quote at most about 80 characters of the input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .core.board import COLOR_NAMES, DEFAULT_MAX_MOVES, N_ACTIONS, check_max_moves
from .core.checks import check_int, check_seed, quoted
from .core.engine import IllegalActionError
from .core.game import Game
from .core.state import initial_state
from .observation import Observer
from .render import RENDER_MODES, EnvRenderer
from .render.raster import MAX_FRAME_SIZE, MIN_FRAME_SIZE

AGENTS = ("player_0", "player_1")  # red, blue
# What `last()` returns: (observation or None, cumulative reward, terminated, truncated, info)
Last = tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]
_AGENT_INDEX = {agent: i for i, agent in enumerate(AGENTS)}
MIN_SCREEN_SIZE, MAX_SCREEN_SIZE = MIN_FRAME_SIZE, MAX_FRAME_SIZE  # pixels, as render_rgb's


class ResetNeededError(gymnasium.error.ResetNeeded, ValueError):
    """The env was used before `reset()`, or after its episode ended (call `reset()`). A
    ValueError, like every error the envs raise, and Gymnasium's ResetNeeded."""


def check_render_mode(render_mode: object, modes: Iterable[str]) -> str | None:
    """`render_mode` if it is None or one of `modes`; ValueError naming it otherwise."""
    if render_mode is None or (isinstance(render_mode, str) and render_mode in modes):
        return render_mode
    raise ValueError(f"render_mode must be one of {list(modes)} or None, got {quoted(render_mode)}")


def check_screen_size(screen_size: object) -> int:
    """`screen_size` as an int from 64 to 4096 pixels; ValueError naming it otherwise."""
    return check_int("screen_size", screen_size, MIN_SCREEN_SIZE, MAX_SCREEN_SIZE)


def as_action(action: object) -> int:
    """`action` as a Python int, or IllegalActionError: an int or numpy integer (not a bool),
    or a numpy array holding one integer (vector envs and policies pass those). The range and
    the legality are the Game's to check."""
    if type(action) is int:  # the common case, first
        return action
    if (
        isinstance(action, np.ndarray)
        and action.size == 1
        and action.ndim <= 1
        and np.issubdtype(action.dtype, np.integer)
    ):
        return int(action.reshape(()))
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise IllegalActionError(
            f"action must be an integer in 0..{N_ACTIONS - 1}, got {_describe(action)}"
        )
    return int(action)


def spn_option(options: object) -> str | None:
    """The "spn" entry of `reset`'s options (None without one); other keys are ignored with a
    warning, like other PettingZoo envs do (api_test passes arbitrary ones)."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise ValueError(
            f"reset options must be a dict such as {{'spn': '<SPN>'}} or None, got "
            f"{_describe(options)}"
        )
    unknown = [key for key in options if key != "spn"]
    if unknown:
        gymnasium.logger.warn(
            f"ignoring unknown reset option(s) {quoted(unknown)}; the only option is 'spn'"
        )
    return options.get("spn")


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return quoted(value)
    return f"{quoted(value)} ({type(value).__name__})"


def env(
    render_mode: str | None = None, max_moves: int = DEFAULT_MAX_MOVES, screen_size: int = 640
) -> ClassicWrapper:
    """The `satellites_v0` env as PettingZoo's classic games are made: `raw_env` wrapped in
    `ClassicWrapper`, so an illegal action ends the game with -1 for the offender and the call
    order is enforced.

    Args:
        render_mode: None, `"ansi"` (text), `"rgb_array"` (an RGB frame), `"svg"` (an SVG
            document) or `"human"` (a pygame window, shown on every reset and step).
        max_moves: the move cap (R20), from 1 to `MAX_MOVES_LIMIT`: after this many completed
            moves the game stops and is scored as a truncation.
        screen_size: the frame size in pixels for `"rgb_array"` and `"human"`, from 64 to 4096.

    Returns:
        The wrapped env; `env.unwrapped` is its `raw_env`.

    Raises:
        ValueError: an argument out of its range or of the wrong type, named in the message.
    """
    return ClassicWrapper(
        raw_env(render_mode=render_mode, max_moves=max_moves, screen_size=screen_size)
    )


class raw_env(AECEnv):
    """Satellites for two agents: `player_0` (red, moves first) and `player_1` (blue).

    A displacement takes two consecutive steps of the same agent (move, then push).
    `reset(seed=..., options={"spn": ...})` starts from the R4 set-up or from any SPN.
    An illegal or malformed action raises `IllegalActionError` on the unwrapped env.
    At the end, `infos[agent]` holds `winner` ("red", "blue" or None for a draw) and `reason`.

    `copy.deepcopy` and `pickle` keep the whole state (the position, the history, the
    rewards and flags, the random generator), at any point of a game: the copy and the
    original go on alike and apart. A `"human"` env's window is not copied: the copy opens
    its own on its first render.

    It takes the arguments of [`env`][satellites_env.env.env] (`render_mode`, `max_moves`,
    `screen_size`), with the same checks.
    """

    metadata: ClassVar[dict] = {
        "render_modes": list(RENDER_MODES),
        "name": "satellites_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        max_moves: int = DEFAULT_MAX_MOVES,
        screen_size: int = 640,
    ):
        super().__init__()
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.max_moves = check_max_moves(max_moves)
        self.screen_size = screen_size = check_screen_size(screen_size)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.observer = Observer(self.max_moves)
        obs_space = self.observer.space
        self.observation_spaces = {agent: obs_space for agent in AGENTS}
        self.action_spaces: dict[str, spaces.Space] = {
            agent: spaces.Discrete(N_ACTIONS) for agent in AGENTS
        }
        self._rng = np.random.default_rng()
        self._renderer = EnvRenderer(render_mode, screen_size, self.metadata["render_fps"])
        self.game: Game | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = check_seed(seed)
        spn = spn_option(options)
        if spn is not None:
            game = Game.from_spn(spn, self.max_moves)  # NotationError before anything changes
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if spn is None:
            game = Game(initial_state(self._rng), self.max_moves)
        self.game = game
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self._skip_agent_selection = None
        self.agent_selection = AGENTS[game.to_move]
        if game.is_over:  # a finished position was given: report it at once
            self._end_episode()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Fresh planes for `agent`, with the legal mask if it is the one to act."""
        game = self.game
        if game is None:
            raise ResetNeededError("call reset() before observe()")
        player = _AGENT_INDEX.get(agent) if isinstance(agent, str) else None
        if player is None:
            raise ValueError(f"agent must be one of {list(AGENTS)}, got {quoted(agent)}")
        return self.observer.observe(game, player, agent == self.agent_selection)

    def last(self, observe: bool = True) -> Last:
        if self.game is None:
            raise ResetNeededError("call reset() before last()")
        last: Last = super().last(observe)
        return last

    def step(self, action: int | None) -> None:
        self._step(action, terminate_illegal=False)

    def _step(self, action: object, terminate_illegal: bool) -> None:
        """One step. An illegal action of the action space raises IllegalActionError, or with
        `terminate_illegal` ends the game with -1 for the offender (PettingZoo's classic
        TerminateIllegalWrapper). Anything outside the action space raises."""
        game = self.game
        if game is None:
            raise ResetNeededError("call reset() before step()")
        if not self.agents:
            raise ResetNeededError(
                "the game is over and both agents have stepped out of it "
                "(with step(None)): call reset() to play again"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise IllegalActionError(
                    f"{agent} is done (the game is over): the only valid action is None, got "
                    f"{_describe(action)}"
                )
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(
                f"action must be an integer in 0..{N_ACTIONS - 1}, got None ({agent} is not done)"
            )
        action = as_action(action)
        try:
            game.play(action)  # raises IllegalActionError with the reason; nothing changes then
        except IllegalActionError as error:
            if not terminate_illegal or not 0 <= action < N_ACTIONS:
                raise
            self._end_by_illegal_action(agent, str(error))
            return
        self._cumulative_rewards[agent] = 0
        if game.is_over:
            self._end_episode()
            self._accumulate_rewards()
        else:
            self.agent_selection = AGENTS[game.to_move]
        if self.render_mode == "human":
            self.render()

    def _end_episode(self) -> None:
        game = self._game()
        result = game.score()
        self.rewards = {agent: result.reward(i) for i, agent in enumerate(AGENTS)}
        done = dict.fromkeys(AGENTS, True)
        if game.truncated:
            self.truncations = done
        else:
            self.terminations = done
        for agent in AGENTS:
            self.infos[agent] = {"winner": result.winner_name, "reason": result.reason}

    def _end_by_illegal_action(self, agent: str, why: str) -> None:
        EnvLogger.warn_on_illegal_move()
        offender = _AGENT_INDEX[agent]
        self.rewards = dict.fromkeys(AGENTS, 0)
        self.rewards[agent] = -1
        self._cumulative_rewards[agent] = 0
        self._accumulate_rewards()
        self.terminations = dict.fromkeys(AGENTS, True)
        info = {
            "winner": COLOR_NAMES[1 - offender],
            "reason": f"illegal action by {COLOR_NAMES[offender]} ({agent}): it loses",
            "illegal_action": why,
        }
        for other in AGENTS:
            self.infos[other] = dict(info)

    # ------------------------------------------------------------------ public helpers

    def to_spn(self) -> str:
        """SPN of the current position (between moves only)."""
        return self._game().to_spn()

    @property
    def history(self) -> list[str]:
        """Completed moves in notation (`c10-c7`, `c10-f7>f9`, `pass`)."""
        return list(self._game().history)

    def action_to_notation(self, action: int) -> str:
        """Notation of one action in the current position (`>f9` for a push)."""
        return self._game().describe(as_action(action))

    def notation_to_actions(self, text: str) -> list[int]:
        """Action ids of a move in notation (two ids for a displacement), checked for legality
        of the shape against the current position."""
        return self._game().actions_of(text)

    def _game(self) -> Game:
        if self.game is None:
            raise ResetNeededError("call reset() first: there is no game yet")
        return self.game

    # ------------------------------------------------------------------ rendering

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render without specifying a render_mode.")
            return None
        return self._renderer.render(self._game())

    def close(self) -> None:
        self._renderer.close()


def _forwarded(name: str) -> property:
    """A property of ClassicWrapper reading the raw env's attribute `name` (AttributeError
    before reset)."""
    return property(lambda self: getattr(self._raw(name), name))


class ClassicWrapper(OrderEnforcingWrapper):
    """PettingZoo's classic wrapper stack over `raw_env` in one layer: what
    `TerminateIllegalWrapper(illegal_reward=-1)`, `AssertOutOfBoundsWrapper` and
    `OrderEnforcingWrapper` do together, with the project's error types.

    * An action of the action space that is illegal in the position ends the game: -1 for the
      offender, 0 for the other, both terminated; `infos[agent]["illegal_action"]` says why.
    * Anything else that is not an action of the space (bools, floats, strings, arrays, out of
      range, None while the agent is not done) raises `IllegalActionError`; nothing changes.
    * `step`, `observe`, `last` and `render` before `reset()` raise `ResetNeededError`; the
      env's attributes (`agents`, `rewards`, ...) raise AttributeError before `reset()`; a
      `step` after every agent has stepped out warns and does nothing.

    The attributes read on every step are forwarded by properties (one level), not by
    `__getattr__`.
    """

    env: raw_env

    def __init__(self, env: raw_env):
        if not isinstance(env, raw_env):
            raise ValueError(
                f"env must be a satellites raw_env (ClassicWrapper wraps one), got "
                f"{type(env).__name__}"
            )
        super().__init__(env)

    def _raw(self, name: str) -> raw_env:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return self.env

    def _reset_needed(self, method: str) -> None:
        if not self._has_reset:
            raise ResetNeededError(f"call reset() before {method}()")

    agent_selection = _forwarded("agent_selection")
    agents = _forwarded("agents")
    rewards = _forwarded("rewards")
    terminations = _forwarded("terminations")
    truncations = _forwarded("truncations")
    infos = _forwarded("infos")
    _cumulative_rewards = _forwarded("_cumulative_rewards")

    @property
    def possible_agents(self) -> list[str]:
        return self.env.possible_agents

    @property
    def metadata(self) -> dict:
        return self.env.metadata

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._has_reset = True
        self._has_updated = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._reset_needed("observe")
        return self.env.observe(agent)

    def last(self, observe: bool = True) -> Last:
        self._reset_needed("last")
        env = self.env
        agent = env.agent_selection
        return (
            env.observe(agent) if observe else None,
            env._cumulative_rewards[agent],
            env.terminations[agent],
            env.truncations[agent],
            env.infos[agent],
        )

    def step(self, action: object) -> None:
        self._reset_needed("step")
        if not self.env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self.env._step(action, terminate_illegal=True)
        self._has_updated = True

    def render(self) -> str | np.ndarray | None:
        self._reset_needed("render")
        return self.env.render()

    def state(self) -> np.ndarray:
        self._reset_needed("state")
        state: np.ndarray = self.env.state()
        return state


__all__ = [
    "AGENTS",
    "MAX_SCREEN_SIZE",
    "MIN_SCREEN_SIZE",
    "ClassicWrapper",
    "IllegalActionError",
    "ResetNeededError",
    "as_action",
    "check_render_mode",
    "check_screen_size",
    "env",
    "raw_env",
    "spn_option",
]
