"""The pure game: rules, positions, notation and scoring (no gymnasium, pettingzoo or torch).

`engine` is the stateless API over state arrays (for search and self-play); `Game` is the
checked, friendly object over one position.
"""

from . import engine
from .board import DEFAULT_MAX_MOVES, MAX_MOVES_LIMIT, N_ACTIONS, PASS_ACTION, PUSH_BASE, Player
from .game import Game
from .notation import NotationError, parse_spn, parse_square, square_name, to_spn
from .outcome import Outcome, Termination
from .rules import ONGOING, TERMINATED, TRUNCATED, IllegalActionError
from .scoring import Group, Score, score

__all__ = [
    "DEFAULT_MAX_MOVES",
    "MAX_MOVES_LIMIT",
    "N_ACTIONS",
    "ONGOING",
    "PASS_ACTION",
    "PUSH_BASE",
    "TERMINATED",
    "TRUNCATED",
    "Game",
    "Group",
    "IllegalActionError",
    "NotationError",
    "Outcome",
    "Player",
    "Score",
    "Termination",
    "engine",
    "parse_spn",
    "parse_square",
    "score",
    "square_name",
    "to_spn",
]
