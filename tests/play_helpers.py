"""Shared helpers for tests that need positions from real play."""

from __future__ import annotations

import numpy as np

from satellites_env.core import Game, engine, square_name
from satellites_env.core.board import N_MOVE_ACTIONS, PUSH_BASE


def purposeful_action(game: Game, rng: np.random.Generator) -> int:
    """A legal action that prefers displacements, then connection moves, else random.

    Purposeful play reaches the end phase (colonies, displacements, grace) in ~50 moves,
    where uniform random play mostly wanders until the move cap.
    """
    legal = game.legal_actions()
    if legal[0] >= PUSH_BASE:
        return int(rng.choice(legal))
    displacements = [a for a in legal if a < N_MOVE_ACTIONS and game.is_displacement(int(a))]
    if displacements and rng.random() < 0.8:
        return int(rng.choice(displacements))
    before = sum(game.connected_counts)
    connecting = []
    for action in legal:
        child = game.clone()
        child.play(int(action))
        if child.pending_push is None and sum(child.connected_counts) > before:
            connecting.append(action)
    if connecting and rng.random() < 0.8:
        return int(rng.choice(connecting))
    return int(rng.choice(legal))


def find_game(predicate, seeds=range(200), max_moves: int = 400) -> Game:
    """The first game state (by purposeful play over `seeds`) for which predicate(game) holds."""
    for seed in seeds:
        rng = np.random.default_rng(seed)
        game = Game.new(seed=seed, max_moves=max_moves)
        while not game.is_over:
            if predicate(game):
                return game
            game.play(purposeful_action(game, rng))
        if predicate(game):
            return game
    raise LookupError("no position found satisfying the predicate")


def engine_pieces(game: Game) -> dict[str, tuple[str, bool]]:
    """square -> (piece, connected) straight from the engine API (`R3` a red 3, `B2` a blue 2):
    what a picture of the position must show."""
    board = np.asarray(game.board)
    connected = {c for group in engine.groups(board) for c in group.cells}
    return {
        square_name(c): (("R" if board[c] > 0 else "B") + str(abs(int(board[c]))), c in connected)
        for c in np.flatnonzero(board)
    }
