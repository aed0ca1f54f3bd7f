"""The pure game: rules, positions, notation and scoring (no gymnasium, pettingzoo or torch)."""

from .board import DEFAULT_MAX_MOVES, N_ACTIONS, PASS_ACTION, PUSH_BASE
from .game import Game
from .notation import NotationError, parse_spn, square_name, parse_square, to_spn
from .rules import IllegalActionError, ONGOING, TERMINATED, TRUNCATED
from .scoring import Group, Score, score

__all__ = [
    "DEFAULT_MAX_MOVES", "N_ACTIONS", "PASS_ACTION", "PUSH_BASE", "Game", "Group",
    "IllegalActionError", "NotationError", "ONGOING", "Score", "TERMINATED", "TRUNCATED",
    "parse_spn", "parse_square", "score", "square_name", "to_spn",
]
