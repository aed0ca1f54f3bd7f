"""`SatellitesGymEnv`: Satellites as a single-agent Gymnasium environment against a fixed opponent.

The learner plays one color; the opponent (any agent spec of
[`agents.make_agent`][satellites_env.agents.make_agent], an [`Agent`][satellites_env.agents.Agent],
or a callable ``(game) -> action``) plays the other, inside `SatellitesGymEnv.step` and
`SatellitesGymEnv.reset`: all its consecutive actions (the push of its displacements, its
grace moves) are played before the learner sees the next observation.

- Observation: exactly the one of ``satellites_v0`` for the learner,
  ``{"observation": (10, 10, 22) float32, "action_mask": (3217,) int8}``; the mask is all zeros
  once the episode is over.
- Actions: ``Discrete(3217)`` (RULES.md section 8). The learner's own displacement takes two
  ordinary steps (the move, then the push); `action_masks` gives the legal ones as a bool
  array, as sb3-contrib's ``MaskablePPO`` expects.
- Reward (R24): +1 win, -1 loss, 0 draw, from the learner's side, at the end only. An end by the
  rules is ``terminated``; reaching ``max_moves`` is ``truncated`` (still scored).
- Illegal action (an action of the space that is not legal here): by default
  (``illegal_action="terminate"``, like PettingZoo's classic envs and ``satellites_v0.env()``)
  it ends the episode: ``terminated=True``, reward -1, ``info["illegal_action"]`` says why. With
  ``illegal_action="raise"`` it raises
  [`IllegalActionError`][satellites_env.core.IllegalActionError] and nothing changes. Anything that
  is not an action of the space (a bool, a float, a string, None, an array other than one integer,
  an integer out of 0..3216) raises ``IllegalActionError`` in both modes and changes nothing.
  Gymnasium's ``check_env`` steps with unmasked random actions, which the default mode turns into
  lost episodes.
- ``step`` before ``reset`` or after the episode ended raises
  [`ResetNeededError`][satellites_env.env.ResetNeededError] (a ValueError and a
  ``gymnasium.error.ResetNeeded``); a position given to ``reset`` that is over before the
  learner can act raises [`GameOverError`][satellites_env.gym_env.GameOverError] (a ValueError), a
  malformed SPN ``NotationError`` (a ValueError).
- Bad arguments raise a ValueError naming the argument, by the same rule as ``satellites_v0``
  ([`satellites_env.env`][satellites_env.env]): the constructor's (``opponent``:
  ``AgentSpecError``), and ``reset``'s ``seed`` (None or an integer from 0 to 2**64 - 1) and
  ``options`` (a dict).

Registered as ``satellites/Satellites-v0`` when `satellites_env` is imported:

    import gymnasium, satellites_env
    env = gymnasium.make("satellites/Satellites-v0", opponent="random", agent_color="red")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .agents import Agent, AgentSpecError, make_agent
from .core.board import COLOR_NAMES, DEFAULT_MAX_MOVES, N_ACTIONS, check_max_moves
from .core.checks import check_seed, quoted
from .core.engine import IllegalActionError
from .core.game import Game
from .core.state import initial_state
from .env import ResetNeededError, as_action, check_render_mode, check_screen_size, spn_option
from .observation import Observer
from .render import RENDER_MODES, EnvRenderer

COLORS = COLOR_NAMES  # ("red", "blue"): player 0 (moves first), player 1
ILLEGAL_ACTION_MODES = ("terminate", "raise")


class GameOverError(ValueError):
    """`reset` was given a position that is over before the learner can act."""


Opponent = str | Agent | Callable[[Game], int]


class SatellitesGymEnv(gymnasium.Env):
    """Satellites for one learner against a fixed opponent (see the module docstring).

    `copy.deepcopy` and `pickle` keep the whole state, the opponent's included (its random
    generator too, so a copy's opponent answers as the original's would). A plain function
    given as the opponent is shared by `deepcopy` (Python copies functions by reference) and
    must be picklable for `pickle`. A `"human"` env's window is not copied: the copy opens
    its own on its first render.

    Args:
        opponent: an agent spec (``"random"``, ``"greedy"``, ``"mcts:N"``, ``"checkpoint:PATH"``),
            an [`Agent`][satellites_env.agents.Agent], or a callable ``(game) -> action`` given the
            live [`Game`][satellites_env.core.Game] (it must not change it). Agents are reseeded
            on every reset from the env's generator; a plain callable is not.
        agent_color: ``"red"`` (moves first), ``"blue"`` or ``"random"`` (drawn at each reset).
        max_moves: the move cap (R20; `DEFAULT_MAX_MOVES` is 400); reaching it truncates the
            episode.
        render_mode: ``None``, ``"ansi"``, ``"rgb_array"``, ``"svg"`` or ``"human"``.
        illegal_action: ``"terminate"`` (default: an illegal action ends the episode with
            -1) or ``"raise"`` (it raises IllegalActionError). ``"lose"`` is an old name of
            ``"terminate"``.
        screen_size: frame size in pixels for ``"rgb_array"`` and ``"human"``.
    """

    # gymnasium.Env declares `metadata` a plain class attribute, so it is one here too
    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 2}  # noqa: RUF012

    def __init__(
        self,
        opponent: Opponent = "random",
        agent_color: str = "red",
        max_moves: int = DEFAULT_MAX_MOVES,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        screen_size: int = 640,
    ):
        super().__init__()
        render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        if not isinstance(agent_color, str) or agent_color not in (*COLORS, "random"):
            raise ValueError(
                f"agent_color must be 'red', 'blue' or 'random', got {quoted(agent_color)}"
            )
        self.max_moves = check_max_moves(max_moves)
        if isinstance(illegal_action, str) and illegal_action == "lose":  # before "terminate"
            illegal_action = "terminate"
        if not isinstance(illegal_action, str) or illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(
                f"illegal_action must be 'terminate' or 'raise', got {quoted(illegal_action)}"
            )
        screen_size = check_screen_size(screen_size)
        self.render_mode = render_mode
        self.agent_color = agent_color
        self.illegal_action = illegal_action
        self.screen_size = screen_size
        self.opponent_spec = opponent
        self._opponent_agent, self._opponent_act = _build_opponent(opponent)

        self.observer = Observer(self.max_moves)
        self.observation_space = self.observer.space
        self.action_space = spaces.Discrete(N_ACTIONS)

        self._renderer = EnvRenderer(render_mode, screen_size, self.metadata["render_fps"])
        self.game: Game | None = None
        self.player = 0  # the learner: 0 red, 1 blue
        self._done = False

    # ------------------------------------------------------------------ properties

    @property
    def opponent(self) -> Agent | Callable[[Game], int]:
        """The opponent object (the agent built from the spec, or the callable given)."""
        return self._opponent_agent if self._opponent_agent is not None else self._opponent_act

    @property
    def learner_color(self) -> str:
        """The learner's color in the current episode (``"red"`` or ``"blue"``)."""
        return COLORS[self.player]

    # ------------------------------------------------------------------ episode

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode from the R4 set-up drawn from `seed`, or from
        ``options={"spn": SPN}``; the opponent plays first if it moves first. Returns
        ``(observation, info)``."""
        seed = check_seed(seed)  # ValueError naming it, before anything changes
        spn = spn_option(options)  # ValueError for options that are not a mapping
        start = None if spn is None else Game.from_spn(spn, self.max_moves)  # likewise
        if start is not None and start.is_over:  # refused before the generator is reseeded
            raise GameOverError(
                f"reset: the position is already over ({start.score().reason}); "
                f"there is nothing for the learner to play"
            )
        super().reset(seed=seed)
        # Draw in a fixed order so that a seed gives the same set-up as satellites_v0's reset
        # (set-up first), whatever agent_color is.
        state = initial_state(self.np_random)
        drawn_color = int(self.np_random.integers(2))
        opponent_seed = int(self.np_random.integers(2**63 - 1))
        self.game = Game(state, self.max_moves) if start is None else start
        if self.agent_color == "random":
            self.player = drawn_color
        else:
            self.player = COLORS.index(self.agent_color)
        if self._opponent_agent is not None:
            self._opponent_agent.reset(seed=opponent_seed)
        self._done = False
        opponent_actions = self._play_opponent()
        if self.game.is_over:
            self._done = True
            raise GameOverError(
                f"reset: the opponent ended the game ({self.game.score().reason}) before the "
                f"learner ({self.learner_color}) could move; start from another position"
            )
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info(opponent_actions)

    def step(self, action):
        """Play the learner's `action`, then every opponent action up to the learner's next
        turn. Returns ``(observation, reward, terminated, truncated, info)``."""
        if self.game is None:
            raise ResetNeededError("call reset() before step()")
        if self._done:
            raise ResetNeededError("the episode is over: call reset() before step()")
        action = as_action(action)  # IllegalActionError for anything but one integer
        try:
            self.game.play(action)
        except IllegalActionError as error:
            if not 0 <= action < N_ACTIONS:
                raise  # not an action of the space: nothing changed, in both modes
            n_legal = int(self.game.legal_mask().sum())
            message = (
                f"{error}; the learner ({self.learner_color}) has {n_legal} legal "
                f"action{'s' if n_legal != 1 else ''} here (env.action_masks() lists them)"
            )
            if self.illegal_action == "raise":
                raise IllegalActionError(message) from None
            self._done = True
            info = self._info([])
            info.update(
                winner=COLORS[1 - self.player],
                illegal_action=message,
                reason=f"illegal action by the learner ({self.learner_color}): it loses",
            )
            return self._observation(), -1.0, True, False, info
        opponent_actions = self._play_opponent()
        reward, terminated, truncated = 0.0, False, False
        if self.game.is_over:
            self._done = True
            reward = float(self.game.score().reward(self.player))
            terminated, truncated = self.game.terminated, self.game.truncated
        info = self._info(opponent_actions)
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a (3217,) bool array (all False once the episode ends)."""
        if self.game is None or self._done:
            return np.zeros(N_ACTIONS, dtype=bool)
        return self.game.legal_mask().astype(bool)

    # ------------------------------------------------------------------ internals

    def _play_opponent(self) -> list[int]:
        """Play the opponent's actions until the learner is to move or the game ends."""
        actions = []
        game = self.game
        assert game is not None  # called after reset
        while not game.is_over and game.to_move != self.player:
            try:
                action = as_action(self._opponent_act(game))
                game.play(action)
            except IllegalActionError as error:
                raise IllegalActionError(
                    f"the opponent {quoted(self.opponent)} played an illegal action: {error}"
                ) from None
            actions.append(action)
        return actions

    def _observation(self) -> dict[str, np.ndarray]:
        assert self.game is not None  # called after reset
        return self.observer.observe(self.game, self.player, not self._done)

    def _info(self, opponent_actions: list[int]) -> dict[str, Any]:
        info: dict[str, Any] = {
            "learner_color": self.learner_color,
            "opponent_actions": list(opponent_actions),
        }
        assert self.game is not None  # called after reset
        if self.game.is_over:
            result = self.game.score()
            info.update(winner=result.winner_name, reason=result.reason)
        return info

    # ------------------------------------------------------------------ rendering

    def render(self):
        """The current position: text for "ansi", an RGB frame for "rgb_array", SVG text for
        "svg", None (window shown) for "human"."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render without specifying a render_mode.")
            return None
        if self.game is None:
            raise ResetNeededError("call reset() before render()")
        return self._renderer.render(self.game)

    def close(self) -> None:
        """Close the window of ``render_mode="human"``, if one is open."""
        self._renderer.close()


def _build_opponent(opponent: Opponent) -> tuple[Agent | None, Callable[[Game], int]]:
    if isinstance(opponent, str):
        try:
            agent = make_agent(opponent)
        except AgentSpecError as error:
            raise AgentSpecError(f"bad opponent for SatellitesGymEnv: {error}") from None
        return agent, agent.act
    if isinstance(opponent, Agent):
        return opponent, opponent.act
    if callable(opponent):
        return None, opponent
    raise AgentSpecError(
        f"opponent must be an agent spec string (random, greedy, mcts:N, checkpoint:PATH), an "
        f"Agent or a callable (game) -> action; got {type(opponent).__name__}"
    )


__all__ = ["COLORS", "ILLEGAL_ACTION_MODES", "GameOverError", "SatellitesGymEnv"]
