"""Who plays each colour of a self-play game: the seat policy that `SelfPlay` asks at the
start of each game.

A seat is one of:

- `SEARCH`: the network's Gumbel search plays the colour; its positions are stored;
- `RAW`: the network's raw policy plays it (DAgger): the most likely action of the root's
  prior instead of the search's choice, while its positions are searched and stored as ever;
- `AGENT`: the fixed opponent (an agent spec) plays it, outside the network's search,
  nothing stored.

[`SeatPolicy`][training.alphazero.seats.SeatPolicy] draws the seats of a new game from the
self-play's random stream, so a seed's games depend only on the settings: self-play, a
DAgger colour with probability `dagger`, a fixed opponent in every game.

The seat codes stay integers in the hot arrays (`SelfPlay.seats`, saved with the games in
flight); what each code means, how its colour moves and how its games count, is its
[`Seat`][training.alphazero.seats.Seat] in `SEATS`, the one place to change it. The fixed
opponent moves through an [`OpponentSeat`][training.alphazero.seats.OpponentSeat], a plain
agent's or a batched network's, the same interface in self-play and in the batched
evaluation games (`games.play_batched_games`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from satellites_env.agents.base import Agent
from satellites_env.core.game import Game

from .agent import BatchedPlayer

SEARCH, RAW, AGENT = 0, 1, 2


class SeatPolicy:
    """Draws both seats of each new game.

    Args:
        dagger: The chance of a game in which one colour, either at random, plays the raw
            policy.
        opponent: Whether a fixed opponent plays one colour, at random, in every game.
    """

    def __init__(self, dagger: float = 0.0, opponent: bool = False):
        self.dagger = dagger
        self.opponent = opponent

    def __call__(self, rng: np.random.Generator) -> tuple[int, int]:
        """The seats (red's, blue's) of a new game.

        Only the draws a setting needs are made (no draw for a share of 0), so that adding a
        setting keeps the games of the others.

        Args:
            rng: The self-play's random stream.

        Returns:
            The seat of each colour.
        """
        seats = [SEARCH, SEARCH]
        if self.dagger and rng.random() < self.dagger:
            seats[int(rng.integers(2))] = RAW
        if self.opponent:
            seats[int(rng.integers(2))] = AGENT
        return seats[0], seats[1]


@dataclass(frozen=True)
class Seat:
    """What a seat code means to self-play: how its colour's moves are made and how its games
    count in `SelfPlayStats` (the names of the counters it adds to; None: none).

    Attributes:
        raw_move: The network's search plays the root prior's most likely action (DAgger).
        opponent: The fixed opponent moves here, outside the network's search (its
            `OpponentSeat`; under victim-play the search models this colour by the
            opponent's policy).
        games: The counter of the games with this seat.
        wins: The counter of those games won by this seat.
        losses: The counter of those games lost by this seat.
    """

    raw_move: bool = False
    opponent: bool = False
    games: str | None = None
    wins: str | None = None
    losses: str | None = None

    def count(self, stats: object, winner: int, colour: int) -> None:
        """Count a game that `winner` won (or drew) in which this seat played `colour`."""
        for name, add in (
            (self.games, True),
            (self.wins, winner == colour),
            (self.losses, winner == 1 - colour),
        ):
            if name is not None and add:
                setattr(stats, name, getattr(stats, name) + 1)


#: each seat code's meaning (indexed by the code)
SEATS = (
    Seat(),  # SEARCH
    Seat(raw_move=True, games="dagger_games", wins="dagger_wins"),  # RAW
    # the opponent's wins are the network's losses
    Seat(
        opponent=True, games="opponent_games", wins="opponent_losses", losses="opponent_wins"
    ),  # AGENT
)
#: per seat code, whether the network's search plays the raw policy's move
RAW_MOVE = np.array([seat.raw_move for seat in SEATS])
#: per seat code, whether the fixed opponent moves
OPPONENT = np.array([seat.opponent for seat in SEATS])


class OpponentSeat(ABC):
    """The fixed opponent's seat in many games at once, whatever the agent: `SelfPlay` and
    `games.play_batched_games` move an opponent only through this interface.

    `take_turn(b, game)` hands it game b where it is to move: a plain agent
    ([`PlainSeat`][training.alphazero.seats.PlainSeat]) plays there and then, until the other
    colour's turn or the end; a batched one
    ([`BatchedSeat`][training.alphazero.seats.BatchedSeat]) starts its search of the game,
    which then waits for `step()` calls until `step()` returns b: `state[b]`, `action[b]`,
    `done[b]` and `winner[b]` are then the position after its move, the move, and whether and
    how it ended the game.
    """

    state: np.ndarray
    action: np.ndarray
    done: np.ndarray
    winner: np.ndarray

    @staticmethod
    def of(
        agent: Agent, games: int, max_moves: int, agent_of: Callable[[int], Agent] | None = None
    ) -> OpponentSeat:
        """`agent`'s seat in `games` games of `max_moves` moves at most: its batched form
        ([`BatchedPlayer.of`][training.alphazero.agent.BatchedPlayer.of]) where it has one,
        else the agent itself, or `agent_of(b)` in game b where given (built only then)."""
        player = BatchedPlayer.of(agent, games, max_moves)
        if player is not None:
            return BatchedSeat(player)
        return PlainSeat([agent_of(b) for b in range(games)] if agent_of else [agent] * games)

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

    def __init__(self, agents: list[Agent]):
        self.agents = agents
        self.state = self.action = self.done = self.winner = np.zeros(0)  # no game waits

    def take_turn(self, b: int, game: Game) -> bool:
        colour = game.to_move
        while not game.is_over and game.to_move == colour:
            game.play(self.agents[b].act(game))  # checked: a wrong agent is an error
        return False

    @property
    def busy(self) -> bool:
        return False

    def step(self) -> np.ndarray:
        return np.zeros(0, np.intp)

    def stop(self) -> None:
        pass


class BatchedSeat(OpponentSeat):
    """A network agent's batched search (`agent.BatchedPlayer`): started on a game, stepped
    with the other waiting games, one forward pass per simulation step for all of them."""

    def __init__(self, player: BatchedPlayer):
        self.player = player
        self.state, self.action = player.state, player.action
        self.done, self.winner = player.done, player.winner

    def take_turn(self, b: int, game: Game) -> bool:
        self.player.start(b, game.state)
        return True

    @property
    def busy(self) -> bool:
        return self.player.busy

    def step(self) -> np.ndarray:
        return self.player.step()

    def stop(self) -> None:
        self.player.stop()
