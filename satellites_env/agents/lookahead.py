"""One-ply lookahead and random rollouts as numba kernels (used by `greedy` and `mcts`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.board import N_ACTIONS, N_CELLS, N_PUSH_ACTIONS, PUSH_BASE
from ..core.engine import ONGOING, apply_unchecked, fill_legal_mask, game_status, new_work
from ..core.game import Game
from ..core.state import PENDING_PUSHES, PENDING_TARGET, STATE_LEN
from .heuristic import final_result, heuristic_value

WIN = 10.0  # a finished game outranks any heuristic value, which lies in (-1, 1)


@njit(cache=True)
def result_value(state, sign, max_moves, scratch, win):
    """`win` * exact result when the game is over, else the heuristic, for the player of `sign`."""
    board = state[:N_CELLS]
    if game_status(state, max_moves) != ONGOING:
        return win * final_result(board, sign, scratch)
    return heuristic_value(board, sign, scratch)


@njit(cache=True)
def action_values(state, actions, sign, max_moves, scratch, child, out):
    """out[i] = value of playing actions[i] for the player of `sign`; a displacement is worth
    its best push. `child` is a (2, STATE_LEN) scratch buffer."""
    for i in range(actions.shape[0]):
        child[0, :] = state
        apply_unchecked(child[0], actions[i], scratch)
        if child[0, PENDING_TARGET] < 0:
            out[i] = result_value(child[0], sign, max_moves, scratch, WIN)
            continue
        best = -np.inf
        pushes = child[0, PENDING_PUSHES]
        for b in range(N_PUSH_ACTIONS):
            if (pushes >> b) & 1:
                child[1, :] = child[0]
                apply_unchecked(child[1], PUSH_BASE + b, scratch)
                best = max(best, result_value(child[1], sign, max_moves, scratch, WIN))
        out[i] = best


@njit(cache=True)
def seed_rollouts(seed):
    """Seed numba's own generator, which the rollout kernel draws from."""
    np.random.seed(seed)


@njit(cache=True)
def rollout_value(state, depth, max_moves, scratch, mask):
    """Play up to `depth` uniformly random moves on `state` (in place), then value the result
    for red: the exact result (+1/-1/0) if the game ended, else the heuristic."""
    for _ in range(depth):
        if game_status(state, max_moves) != ONGOING:
            break
        count = fill_legal_mask(state, mask, scratch)
        pick = np.random.randint(count)
        for a in range(N_ACTIONS):
            if mask[a]:
                if pick == 0:
                    apply_unchecked(state, a, scratch)
                    break
                pick -= 1
    while state[PENDING_TARGET] >= 0:  # finish a displacement the rollout started
        fill_legal_mask(state, mask, scratch)
        for a in range(N_ACTIONS):
            if mask[a]:
                apply_unchecked(state, a, scratch)
                break
    return result_value(state, 1, max_moves, scratch, 1.0)


def new_child_buffer() -> np.ndarray:
    return np.zeros((2, STATE_LEN), dtype=np.int32)


class Lookahead:
    """One-ply lookahead values of a game's actions, with the buffers they need (one instance
    per thread of play)."""

    def __init__(self):
        self._scratch = new_work()
        self._child = new_child_buffer()

    def values(self, game: Game, actions: np.ndarray, out: np.ndarray) -> None:
        """out[i] = the value of playing actions[i] for the player to move, as `greedy` scores
        it (`action_values`: +-10 for a won or lost game, 0 for a draw, the heuristic in
        (-1, 1) otherwise; a displacement is worth its best push)."""
        action_values(
            game.state,
            actions,
            1 - 2 * game.to_move,
            game.max_moves,
            self._scratch,
            self._child,
            out,
        )
