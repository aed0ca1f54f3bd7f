"""How a finished game ended: `Termination` (which rule) and `Outcome` (with the winner)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .board import END_CONNECTED, Player
from .scoring import Score


class Termination(enum.Enum):
    """The rule that ended the game."""

    CONNECTED = "R16"  # 23 or more satellites connected
    GRACE = "R18"  # the grace moves are used up
    PASSES = "R19"  # two passes in a row
    MOVE_CAP = "R20"  # the environment's move cap (a truncation, not a board rule)

    @property
    def description(self) -> str:
        return {
            "R16": f"{END_CONNECTED} or more satellites connected (R16)",
            "R18": "the grace moves are used up (R18)",
            "R19": "two passes in a row (R19)",
            "R20": "the move cap was reached (R20)",
        }[self.value]


@dataclass(frozen=True)
class Outcome:
    """The end of a game: the rule that ended it, the winner (None for a draw) and the score."""

    termination: Termination
    winner: Player | None
    score: Score

    @property
    def truncated(self) -> bool:
        """True when only the move cap ended the game (R20)."""
        return self.termination is Termination.MOVE_CAP

    @property
    def winner_name(self) -> str | None:
        """ "red", "blue" or None for a draw: the vocabulary of records and env infos."""
        return self.score.winner_name

    def result(self) -> str:
        """ "red", "blue" or "draw"."""
        return self.winner_name or "draw"

    def reward(self, player: int) -> int:
        """+1 win, -1 loss, 0 draw for `player` (R24)."""
        return self.score.reward(player)

    @property
    def reason(self) -> str:
        """The whole story in words: how the game ended and why the winner won."""
        return f"{self.termination.description}; {self.score.reason}"
