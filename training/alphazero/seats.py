"""Who plays each colour of a self-play game: the seat policy that `SelfPlay` asks at the
start of each game.

A seat is one of:

- `SEARCH`: the network's Gumbel search plays the colour; its positions are stored;
- `RAW`: the network's raw policy plays it (DAgger): the most likely action of the root's
  prior instead of the search's choice, while its positions are searched and stored as ever;
- `AGENT`: the fixed opponent (an agent spec) plays it, outside the search, nothing stored;
- `MEMBER + k`: league member k plays it, searched with its own network, nothing stored.

[`SeatPolicy`][training.alphazero.seats.SeatPolicy] draws the seats of a new game from the
self-play's random stream, so a seed's games depend only on the settings: self-play, a
DAgger colour with probability `dagger`, a fixed opponent in every game, a league member
with probability `league_share` (drawn by the league's probabilities).
"""

from __future__ import annotations

import numpy as np

SEARCH, RAW, AGENT, MEMBER = 0, 1, 2, 3


def stored(seat: int) -> bool:
    """Whether the positions of a colour with this seat become training data.

    Args:
        seat: A seat code.

    Returns:
        True for the network's own seats (`SEARCH`, `RAW`).
    """
    return seat in (SEARCH, RAW)


class SeatPolicy:
    """Draws both seats of each new game.

    Args:
        dagger: The chance of a game in which one colour, either at random, plays the raw
            policy.
        opponent: Whether a fixed opponent plays one colour, at random, in every game.
        league_share: The chance of a game against a league member (when the league has
            members); such a game has no DAgger colour.
    """

    def __init__(self, dagger: float = 0.0, opponent: bool = False, league_share: float = 0.0):
        self.dagger = dagger
        self.opponent = opponent
        self.league_share = league_share
        self.members = np.zeros(0, np.int64)  # the drawable members' indices
        self.probabilities = np.zeros(0)

    def set_members(self, members: np.ndarray, probabilities: np.ndarray) -> None:
        """The league members a new game may draw and the chance of each.

        Args:
            members: The members' indices (the `k` of `MEMBER + k`).
            probabilities: The chance of each, summing to 1.
        """
        self.members = np.asarray(members, np.int64)
        self.probabilities = np.asarray(probabilities, np.float64)

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
        if self.league_share and len(self.members) and rng.random() < self.league_share:
            member = int(rng.choice(self.members, p=self.probabilities))
            seats[int(rng.integers(2))] = MEMBER + member
            return seats[0], seats[1]
        if self.dagger and rng.random() < self.dagger:
            seats[int(rng.integers(2))] = RAW
        if self.opponent:
            seats[int(rng.integers(2))] = AGENT
        return seats[0], seats[1]
