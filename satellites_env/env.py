"""The PettingZoo AEC environment `satellites_v0` (a thin adapter over the core `Game`)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .core.board import DEFAULT_MAX_MOVES, N_ACTIONS, N_CELLS
from .core.game import Game
from .core.rules import IllegalActionError, new_scratch
from .core.state import initial_state
from .render import EnvRenderer
from .observation import N_PLANES, OBSERVATION_SHAPE, observation_dict

AGENTS = ("player_0", "player_1")  # red, blue


def env(**kwargs) -> AECEnv:
    """`raw_env` wrapped like PettingZoo's classic games: an illegal action ends the game with
    -1 for the offender, out-of-range actions assert, and the call order is enforced."""
    wrapped = raw_env(**kwargs)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


class raw_env(AECEnv, EzPickle):
    """Satellites for two agents: `player_0` (red, moves first) and `player_1` (blue).

    A displacement takes two consecutive steps of the same agent (move, then push).
    `reset(seed=..., options={"spn": ...})` starts from the R4 set-up or from any SPN.
    An illegal or out-of-range action raises `IllegalActionError` on the unwrapped env.
    """

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "satellites_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, render_mode: str | None = None, max_moves: int = DEFAULT_MAX_MOVES,
                 screen_size: int = 640):
        EzPickle.__init__(self, render_mode, max_moves, screen_size)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not one of "
                             f"{self.metadata['render_modes']} or None")
        if not isinstance(max_moves, (int, np.integer)) or max_moves < 1:
            raise ValueError(f"max_moves must be a positive integer, got {max_moves!r}")
        self.render_mode = render_mode
        self.max_moves = int(max_moves)
        self.screen_size = screen_size
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, OBSERVATION_SHAPE, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {agent: obs_space for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(N_ACTIONS) for agent in AGENTS}
        self._rng = np.random.default_rng()
        self._scratch = new_scratch()
        self._planes = np.empty((N_CELLS, N_PLANES), dtype=np.float32)
        self._renderer = EnvRenderer(render_mode, screen_size, self.metadata["render_fps"])
        self.game: Game | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        options = dict(options or {})
        spn = options.pop("spn", None)
        if options:  # tolerated like other PettingZoo envs (api_test passes arbitrary ones)
            gymnasium.logger.warn(f"ignoring unknown reset option(s) {sorted(options)}; "
                                  f"the only option is 'spn'")
        if spn is None:
            self.game = Game(initial_state(self._rng), self.max_moves)
        else:
            self.game = Game.from_spn(spn, self.max_moves)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {agent: {} for agent in AGENTS}
        self.agent_selection = AGENTS[self.game.to_move]
        if self.game.is_over:  # a finished position was given: report it at once
            self._end_episode()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return observation_dict(self.game, AGENTS.index(agent), agent == self.agent_selection,
                                self._planes, self._scratch)

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self.game.play(action)  # raises IllegalActionError with the reason
        self._cumulative_rewards[agent] = 0
        self.rewards = dict.fromkeys(AGENTS, 0)
        if self.game.is_over:
            self._end_episode()
        else:
            self.agent_selection = AGENTS[self.game.to_move]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_episode(self) -> None:
        result = self.game.score()
        self.rewards = {agent: result.reward(i) for i, agent in enumerate(AGENTS)}
        done = dict.fromkeys(AGENTS, True)
        if self.game.truncated:
            self.truncations = done
        else:
            self.terminations = done
        for agent in AGENTS:
            self.infos[agent] = {"winner": result.winner, "reason": result.reason}

    # ------------------------------------------------------------------ public helpers

    def to_spn(self) -> str:
        """SPN of the current position (between moves only)."""
        return self.game.to_spn()

    @property
    def history(self) -> list[str]:
        """Completed moves in notation (`c10-c7`, `c10-f7>f9`, `pass`)."""
        return list(self.game.history)

    def action_to_notation(self, action: int) -> str:
        """Notation of one action in the current position (`>f9` for a push)."""
        return self.game.describe(action)

    def notation_to_actions(self, text: str) -> list[int]:
        """Action ids of a move in notation (two ids for a displacement), checked for legality
        of the shape against the current position."""
        return self.game.actions_of(text)

    # ------------------------------------------------------------------ rendering

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render without specifying a render_mode.")
            return None
        return self._renderer.render(self.game)

    def close(self) -> None:
        self._renderer.close()


__all__ = ["env", "raw_env", "IllegalActionError", "AGENTS"]
