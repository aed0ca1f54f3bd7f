"""The agent interface and `make_agent(spec)`.

An agent sees only the position (a :class:`~satellites_env.core.Game`, which is the whole
public state of the game: Satellites has no hidden information) and returns one legal action
id for the player to move. Agents are seedable and deterministic for a seed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..core.game import Game


class Agent(ABC):
    """Base class: `act(game)` returns a legal action id for `game.to_move`."""

    #: the spec string that builds this agent again (`random`, `mcts:200`, ...)
    spec: str = ""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; reseed when `seed` is given."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, game: Game) -> int:
        """A legal action for the player to move in `game` (which must not be over)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


class AgentSpecError(ValueError):
    """An agent spec that names no known agent or has a bad argument."""


def parse_int_argument(spec: str, name: str, argument: str | None, default: int) -> int:
    if argument is None or argument == "":
        return default
    try:
        value = int(argument)
    except ValueError:
        raise AgentSpecError(f"agent spec {spec!r}: {name} must be a positive integer, "
                             f"got {argument!r}") from None
    if value < 1:
        raise AgentSpecError(f"agent spec {spec!r}: {name} must be >= 1, got {value}")
    return value
