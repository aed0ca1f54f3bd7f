"""A fixed opponent's seat in many games at once, the interface both learners move a fixed
agent through: AlphaZero's self-play and batched evaluation games
(`training.alphazero.seats`, which adds a network agent's batched search) and PPO's
self-play (`training.ppo.seats`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from satellites_env.agents.base import Agent
from satellites_env.core.game import Game

#: a network's (logits, values) for a batch of observation planes and the rows whose policy
#: is needed (a search's evaluator)
PolicyModel = Callable[[np.ndarray, np.ndarray | None], tuple[np.ndarray, np.ndarray]]


class OpponentSeat(ABC):
    """The fixed opponent's seat in many games at once, whatever the agent.

    `take_turn(b, game)` hands it game b where it is to move: a plain agent
    ([`PlainSeat`][training.common.seats.PlainSeat]) plays there and then, until the other
    colour's turn or the end; a batched one (`training.alphazero.seats.BatchedSeat`) starts
    its search of the game, which then waits for `step()` calls until `step()` returns b:
    `state[b]`, `action[b]`, `done[b]` and `winner[b]` are then the position after its move,
    the move, and whether and how it ended the game.

    Attributes:
        victim: The opponent's policy as a search models it under victim-play (None: the
            searching network models the opponent's moves by its own policy).
    """

    state: np.ndarray
    action: np.ndarray
    done: np.ndarray
    winner: np.ndarray
    victim: PolicyModel | None = None

    @abstractmethod
    def take_turn(self, b: int, game: Game) -> bool:
        """Move in game b, where this seat is to move: True when the game now waits for
        `step()`, False when the moves were made in `game` (until the other colour's turn or
        the end)."""

    @property
    @abstractmethod
    def busy(self) -> bool:
        """Whether a game waits for a `step()`."""

    @abstractmethod
    def step(self) -> np.ndarray:
        """One step of the waiting games; the games whose move it made."""

    @abstractmethod
    def stop(self) -> None:
        """Drop every waiting game."""


class PlainSeat(OpponentSeat):
    """An agent that moves synchronously in the game (`Agent.act`): `agents[b]` in game b."""

    def __init__(self, agents: list[Agent], victim: PolicyModel | None = None):
        self.agents = agents
        self.victim = victim
        self.state = self.action = self.done = self.winner = np.zeros(0)  # no game waits

    def act(self, b: int, game: Game) -> int:
        """The agent's one move in game b (not played)."""
        return self.agents[b].act(game)

    def take_turn(self, b: int, game: Game) -> bool:
        colour = game.to_move
        while not game.is_over and game.to_move == colour:
            game.play(self.act(b, game))  # checked: a wrong agent is an error
        return False

    @property
    def busy(self) -> bool:
        return False

    def step(self) -> np.ndarray:
        return np.zeros(0, np.intp)

    def stop(self) -> None:
        pass
