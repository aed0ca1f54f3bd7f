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
"""

from __future__ import annotations

import numpy as np

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
