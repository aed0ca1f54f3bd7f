"""A game's result for the pages: the headline, how it ended, and the colonies that decided it."""

from __future__ import annotations

from satellites_env.core.board import COLOR_NAMES
from satellites_env.core.game import Game
from satellites_env.render.facts import colony_notes, colony_squares


def result_summary(game: Game, record_result: dict | None = None) -> dict | None:
    """What a page shows under a finished game (None while it goes on, unless the record
    says it ended otherwise: resigned or stopped). Colonies come from the final position's
    score (R21-R23), each with what it did for the result."""
    record_result = record_result or {}
    end = record_result.get("end")
    if not game.is_over and end not in ("resigned", "ongoing"):
        return None
    score = game.score()
    if game.is_over:
        outcome = game.outcome()
        assert outcome is not None  # the game is over
        winner = outcome.winner_name
        headline = "Draw" if winner is None else f"{winner.capitalize()} wins"
        how = outcome.termination.description
        reason = score.reason
    elif end == "resigned":
        winner = record_result.get("winner")
        headline = f"{(winner or 'nobody').capitalize()} wins"
        how = record_result.get("reason") or "resigned"
        reason = f"on the board: {score.reason}"
    else:
        winner = None
        headline = "Not finished"
        how = record_result.get("reason") or "stopped before the end: no result"
        reason = f"on the board now: {score.reason}"
    colonies = [
        {
            "squares": colony_squares(group),
            "controller": None if group.controller is None else COLOR_NAMES[group.controller],
            "red_sum": group.red_sum,
            "blue_sum": group.blue_sum,
            "total": group.total,
            "crowned": group.crowned,
            "note": note,
        }
        for group, note in colony_notes(score)
    ]
    return {
        "headline": headline,
        "winner": winner,
        "how": how,
        "reason": reason,
        "moves": game.moves,
        "colonies": colonies,
    }
