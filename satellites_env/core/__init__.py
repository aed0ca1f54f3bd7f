"""The pure game: rules, positions, notation and scoring (no gymnasium, pettingzoo or torch).

`engine` is the stateless API over state arrays (for search and self-play); `Game` is the
checked, friendly object over one position.
"""

from . import engine
from .board import DEFAULT_MAX_MOVES, MAX_MOVES_LIMIT, N_ACTIONS, PASS_ACTION, PUSH_BASE, Player
from .game import Game
from .notation import NotationError, parse_spn, square_name, parse_square, to_spn
from .outcome import Outcome, Termination
from .rules import IllegalActionError, ONGOING, TERMINATED, TRUNCATED
from .scoring import Group, Score, score

__all__ = [
    "DEFAULT_MAX_MOVES", "MAX_MOVES_LIMIT", "N_ACTIONS", "PASS_ACTION", "PUSH_BASE", "Game",
    "Group", "IllegalActionError", "NotationError", "ONGOING", "Outcome", "Player", "Score",
    "TERMINATED", "TRUNCATED", "Termination", "engine", "parse_spn", "parse_square", "score",
    "square_name", "to_spn",
]
