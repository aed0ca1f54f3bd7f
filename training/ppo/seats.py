"""Who plays each colour of PPO's self-play games: a seat per colour, which moves all the
games where it is to move at once.

- `LEARNER` (a [`LearnerSeat`][training.ppo.seats.LearnerSeat]): the learner's network,
  its policy sampled; its decisions are the training data;
- [`SnapshotSeat(i)`][training.ppo.seats.SnapshotSeat]: the pool's snapshot i, its policy
  sampled (the index is read at each move, so a game goes on against whatever snapshot the
  pool holds there after `set_weights`);
- [`AgentSeat`][training.ppo.seats.AgentSeat]: the baseline agent, one `act` per move, through
  the [`PlainSeat`][training.common.seats.PlainSeat] that AlphaZero's self-play and batched
  evaluation games move a fixed agent by.

`SelfPlayGenerator` draws a new game's seats from its random stream, groups the running games
by the seat to move, and asks each seat's network for one forward pass over its games (or the
agent for its moves, in game order); it never tests which kind of player a seat is.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from satellites_env.agents.base import Agent
from satellites_env.core.game import Game

from ..common.network import PolicyValueNet
from ..common.seats import PlainSeat


class Seat(ABC):
    """A player of PPO's self-play games; equal seats move their games together.

    Attributes:
        learner: Its decisions are the learner's: recorded as trajectories and counted.
        observes: Its moves need the position's planes and legal mask (and the lookahead
            features of a prior network), which the generator fills for its games.
    """

    learner: ClassVar[bool] = False
    observes: ClassVar[bool] = True

    @abstractmethod
    def network(self, learner: PolicyValueNet, pool: list[PolicyValueNet]) -> PolicyValueNet | None:
        """The network whose policy this seat samples, given the learner's and the pool's;
        None for a seat that moves by itself (`act`)."""

    def act(self, b: int, game: Game) -> int:
        """The move of a seat without a network in game b (not played)."""
        raise TypeError(f"{type(self).__name__} moves by its network's policy")


@dataclass(frozen=True)
class LearnerSeat(Seat):
    """The learner: its network's policy, sampled; its decisions are the training data."""

    learner: ClassVar[bool] = True

    def network(self, learner: PolicyValueNet, pool: list[PolicyValueNet]) -> PolicyValueNet:
        return learner


#: the learner's seat (one: all the learner's games move together)
LEARNER = LearnerSeat()


@dataclass(frozen=True)
class SnapshotSeat(Seat):
    """Pool snapshot `index` (oldest first): its policy, sampled."""

    index: int

    def network(self, learner: PolicyValueNet, pool: list[PolicyValueNet]) -> PolicyValueNet:
        return pool[self.index]


class AgentSeat(PlainSeat, Seat):
    """The baseline agent in every game of a generator (`agent.act`, one move a step)."""

    observes: ClassVar[bool] = False

    def __init__(self, agent: Agent, games: int):
        super().__init__([agent] * games)

    def network(self, learner: PolicyValueNet, pool: list[PolicyValueNet]) -> None:
        return None
