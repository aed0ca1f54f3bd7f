"""`mcts:N`: UCT Monte-Carlo tree search with N simulations per action.

Choices, and why:

* **Rollouts are cut at a depth and scored by the heuristic.** Uniformly random games last
  ~260 moves and rarely connect anything (R9 needs a free edge first), so a rollout to the end
  says little and costs a lot. A leaf is valued by `rollout_depth` random moves (default 4)
  followed by the heuristic of :mod:`.heuristic` (exact result if the game ended).
* **Children start from their one-ply heuristic value.** With ~75 legal moves, 200 simulations
  would otherwise spend most of their budget visiting every child once. Each edge starts with
  `prior_visits` virtual visits at its lookahead value (the same one `greedy` maximises), so the
  search spends its simulations on the replies to the promising moves.
* **The two-step displacement is two tree levels**: the move onto the opponent's satellite,
  then a node where the same player chooses the push. Values are backed up from the point of
  view of the player to move at each node, so same-player levels (pushes, grace moves) work.

Deterministic for a seed: the agent's generator seeds the rollouts before every search.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.board import N_ACTIONS, N_CELLS
from ..core.game import Game
from ..core.rules import ONGOING, apply_unchecked, fill_legal_mask, game_status, new_scratch
from ..core.state import TO_MOVE
from .base import Agent
from .heuristic import final_result
from .lookahead import action_values, new_child_buffer, rollout_value, seed_rollouts


class _Node:
    __slots__ = ("state", "to_move", "actions", "children", "visits", "value_sum", "terminal",
                 "terminal_value")

    def __init__(self, state: np.ndarray, max_moves: int, scratch: np.ndarray):
        self.state = state
        self.to_move = int(state[TO_MOVE])
        self.actions: np.ndarray | None = None  # set on expansion
        self.children: list[_Node | None] = []
        self.visits: np.ndarray | None = None
        self.value_sum: np.ndarray | None = None
        self.terminal = game_status(state, max_moves) != ONGOING
        # Exact result for red when the game is over.
        self.terminal_value = final_result(state[:N_CELLS], 1, scratch) if self.terminal else 0.0


class MCTSAgent(Agent):
    """UCT search; plays the most visited action at the root."""

    def __init__(self, simulations: int = 200, seed: int | None = None, exploration: float = 1.0,
                 rollout_depth: int = 4, prior_visits: float = 2.0):
        super().__init__(seed)
        self.simulations = simulations
        self.exploration = exploration
        self.rollout_depth = rollout_depth
        self.prior_visits = prior_visits
        self.spec = f"mcts:{simulations}"
        self._scratch = new_scratch()
        self._child = new_child_buffer()
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)

    def act(self, game: Game) -> int:
        legal = game.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        seed_rollouts(int(self.rng.integers(2**31)))
        root = _Node(game.state.copy(), game.max_moves, self._scratch)
        for _ in range(self.simulations):
            self._simulate(root, game.max_moves)
        visits = root.visits
        best = np.flatnonzero(visits == visits.max())
        if len(best) > 1:  # equal visits: the better mean value, then the generator
            means = root.value_sum[best] / visits[best]
            best = best[means >= means.max() - 1e-12]
        return int(root.actions[best[self.rng.integers(len(best))]])

    # ------------------------------------------------------------------ search

    def _simulate(self, root: _Node, max_moves: int) -> None:
        path: list[tuple[_Node, int]] = []
        node = root
        while True:
            if node.terminal:
                value = node.terminal_value
                break
            if node.actions is None:
                self._expand(node, max_moves)
                value = self._leaf_value(node, max_moves)
                break
            i = self._select(node)
            path.append((node, i))
            child = node.children[i]
            if child is None:
                state = node.state.copy()
                apply_unchecked(state, int(node.actions[i]), self._scratch)
                child = node.children[i] = _Node(state, max_moves, self._scratch)
            node = child
        for parent, i in path:  # value is for red; each edge stores it for the parent's mover
            parent.visits[i] += 1
            parent.value_sum[i] += value if parent.to_move == 0 else -value

    def _expand(self, node: _Node, max_moves: int) -> None:
        fill_legal_mask(node.state, self._mask, self._scratch)
        node.actions = np.flatnonzero(self._mask)
        n = len(node.actions)
        priors = np.empty(n)
        action_values(node.state, node.actions, 1 - 2 * node.to_move, max_moves, self._scratch,
                      self._child, priors)
        # Lookahead values of finished games are +-10; as a prior they mean +-1.
        np.clip(priors, -1.0, 1.0, out=priors)
        node.visits = np.zeros(n)
        node.value_sum = priors * self.prior_visits
        node.children = [None] * n

    def _select(self, node: _Node) -> int:
        counts = node.visits + self.prior_visits
        total = counts.sum()
        ucb = node.value_sum / counts + self.exploration * np.sqrt(math.log(total) / counts)
        return int(np.argmax(ucb))

    def _leaf_value(self, node: _Node, max_moves: int) -> float:
        state = node.state.copy()
        return float(rollout_value(state, self.rollout_depth, max_moves, self._scratch,
                                   self._mask))
