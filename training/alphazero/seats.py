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
opponent moves through an [`OpponentSeat`][training.common.seats.OpponentSeat]
([`opponent_seat`][training.alphazero.seats.opponent_seat]: a plain agent's, as in PPO's
self-play, or a batched network's), the same interface in self-play and in the batched
evaluation games (`games.play_batched_games`); under victim-play the seat also carries the
policy the network's search models the opponent by.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from satellites_env.agents.base import Agent
from satellites_env.core.game import Game

from ..common.network import BatchedInference, PolicyValueNet
from ..common.policy_agent import PolicyAgent
from ..common.seats import OpponentSeat, PlainSeat, PolicyModel
from .agent import AZAgent, BatchedPlayer

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


class TargetPolicy:
    """The policy of a network agent as a search's victim evaluator: the logits of its
    network (a sampled `checkpoint:` agent's divided by its temperature, the distribution it
    samples from), the values of its network alongside."""

    def __init__(self, net: PolicyValueNet, temperature: float = 1.0):
        self._evaluate = BatchedInference(net)
        self.temperature = float(temperature)

    def __call__(
        self, obs: np.ndarray, policy_rows: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        logits, values = self._evaluate(obs, policy_rows)
        if self.temperature != 1.0:
            # in float64 and clipped: no temperature makes a logit inf (the search's
            # softmax subtracts the largest)
            scaled = logits.astype(np.float64) / self.temperature
            logits = np.clip(scaled, -1e29, 1e29).astype(np.float32)
        return logits, values


def target_policy(agent: Agent) -> TargetPolicy | None:
    """The network policy victim-play models `agent` by: an `az:` agent's raw network (its
    search approximated by the policy its search starts from), a `checkpoint:` agent's
    network; None for an agent without one (`greedy`, `mcts:N`, a PPO policy whose moves
    need the game as well as the planes)."""
    if isinstance(agent, AZAgent):
        return TargetPolicy(agent.net)
    if isinstance(agent, PolicyAgent) and agent.planes_only:
        return TargetPolicy(agent.net, agent.temperature if agent.sample else 1.0)
    return None


def opponent_seat(
    agent: Agent,
    games: int,
    max_moves: int,
    agent_of: Callable[[int], Agent] | None = None,
    victim_play: bool = False,
) -> OpponentSeat:
    """`agent`'s seat in `games` games of `max_moves` moves at most: its batched form
    ([`BatchedPlayer.of`][training.alphazero.agent.BatchedPlayer.of]) where it has one,
    else the agent itself, or `agent_of(b)` in game b where given (built only then). With
    `victim_play`, the seat carries the policy the network's search models it by
    ([`target_policy`][training.alphazero.seats.target_policy]; None where it has none)."""
    victim = target_policy(agent) if victim_play else None
    player = BatchedPlayer.of(agent, games, max_moves)
    if player is not None:
        return BatchedSeat(player, victim)
    agents = [agent_of(b) for b in range(games)] if agent_of else [agent] * games
    return PlainSeat(agents, victim)


class BatchedSeat(OpponentSeat):
    """A network agent's batched search (`agent.BatchedPlayer`): started on a game, stepped
    with the other waiting games, one forward pass per simulation step for all of them."""

    def __init__(self, player: BatchedPlayer, victim: PolicyModel | None = None):
        self.player = player
        self.victim = victim
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
