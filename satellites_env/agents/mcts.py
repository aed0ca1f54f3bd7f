"""`mcts:N`: UCT Monte-Carlo tree search with N simulations per action.

Choices, and why:

The search takes an [`Evaluator`][satellites_env.agents.mcts.Evaluator] (like OpenSpiel's
``mcts.Evaluator``): for each position it expands, the evaluator gives prior action values (and/or a
prior policy) and a leaf value.
[`HeuristicEvaluator`][satellites_env.agents.mcts.HeuristicEvaluator], the default, is the hand-made
one described below; a network plugs into the same search by implementing `evaluate` (and
`evaluate_batch` for many positions).

* **Rollouts are cut at a depth and scored by the heuristic.** Uniformly random games last
  ~260 moves and rarely connect anything (R9 needs a free edge first), so a rollout to the end
  says little and costs a lot. A leaf is valued by `rollout_depth` random moves (default 4)
  followed by the heuristic of `satellites_env.agents.heuristic` (exact result if the game ended).
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
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..core.board import N_ACTIONS, N_CELLS
from ..core.engine import ONGOING, apply_unchecked, fill_legal_mask, game_status, new_work
from ..core.game import Game
from ..core.state import TO_MOVE
from .base import Agent
from .heuristic import final_result
from .lookahead import action_values, new_child_buffer, rollout_value, seed_rollouts


@dataclass
class Evaluation:
    """What an evaluator says about one position, from the side of the player to move.

    `action_values`: values in [-1, 1] of each legal action (the search starts each edge at
    this value with `prior_visits` virtual visits); `policy`: prior probabilities of the legal
    actions (used as a PUCT term, AlphaZero-style); either may be None. `value`: the value of
    the position in [-1, 1].
    """

    value: float
    action_values: np.ndarray | None = None
    policy: np.ndarray | None = None


class Evaluator(ABC):
    """Prior and value for the positions a search expands."""

    def begin_search(self, seed: int) -> None:  # noqa: B027 (an optional hook: no-op)
        """Called once before each search with a seed drawn from the agent's generator."""

    @abstractmethod
    def evaluate(self, state: np.ndarray, actions: np.ndarray, max_moves: int) -> Evaluation:
        """Evaluate the (not finished) position `state`, whose legal actions are `actions`."""

    def evaluate_batch(
        self, states: list[np.ndarray], actions: list[np.ndarray], max_moves: int
    ) -> list[Evaluation]:
        """Evaluate many positions at once (a network batches them; the default loops)."""
        return [self.evaluate(s, a, max_moves) for s, a in zip(states, actions, strict=False)]


class HeuristicEvaluator(Evaluator):
    """The hand-made evaluator: one-ply lookahead values as priors, and a short random rollout
    scored by the heuristic (the exact result when the game ends) as the value."""

    def __init__(self, rollout_depth: int = 4):
        self.rollout_depth = rollout_depth
        self._work = new_work()
        self._child = new_child_buffer()
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)

    def begin_search(self, seed: int) -> None:
        seed_rollouts(seed)

    def evaluate(self, state: np.ndarray, actions: np.ndarray, max_moves: int) -> Evaluation:
        sign = 1 - 2 * int(state[TO_MOVE])
        priors = np.empty(len(actions))
        action_values(state, actions, sign, max_moves, self._work, self._child, priors)
        # Lookahead values of finished games are +-10; as a prior they mean +-1.
        np.clip(priors, -1.0, 1.0, out=priors)
        red_value = rollout_value(
            state.copy(), self.rollout_depth, max_moves, self._work, self._mask
        )
        return Evaluation(value=float(red_value * sign), action_values=priors)


# The edge statistics of a node not expanded yet (shared; expansion replaces them).
_NO_EDGES = np.empty(0)
_NO_EDGES.flags.writeable = False


class _Node:
    __slots__ = (
        "actions",
        "children",
        "policy",
        "state",
        "terminal",
        "terminal_value",
        "to_move",
        "value_sum",
        "visits",
    )

    def __init__(self, state: np.ndarray, max_moves: int, work: np.ndarray):
        self.state = state
        self.to_move = int(state[TO_MOVE])
        self.actions: np.ndarray | None = None  # set on expansion
        self.children: list[_Node | None] = []
        self.visits: np.ndarray = _NO_EDGES
        self.value_sum: np.ndarray = _NO_EDGES
        self.policy: np.ndarray | None = None
        self.terminal = game_status(state, max_moves) != ONGOING
        # Exact result for red when the game is over.
        self.terminal_value = final_result(state[:N_CELLS], 1, work) if self.terminal else 0.0


class MCTSAgent(Agent):
    """UCT search; plays the most visited action at the root."""

    def __init__(
        self,
        simulations: int = 200,
        seed: int | None = None,
        exploration: float = 1.0,
        rollout_depth: int = 4,
        prior_visits: float = 2.0,
        evaluator: Evaluator | None = None,
        policy_weight: float = 1.5,
    ):
        super().__init__(seed)
        self.simulations = simulations
        self.exploration = exploration
        self.prior_visits = prior_visits
        self.policy_weight = policy_weight  # PUCT weight of an evaluator's prior policy
        self.evaluator = evaluator if evaluator is not None else HeuristicEvaluator(rollout_depth)
        self.spec = f"mcts:{simulations}"
        self._work = new_work()
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)

    def act(self, game: Game) -> int:
        legal = game.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        self.evaluator.begin_search(int(self.rng.integers(2**31)))
        root = _Node(game.state.copy(), game.max_moves, self._work)
        for _ in range(self.simulations):
            self._simulate(root, game.max_moves)
        visits = root.visits
        best = np.flatnonzero(visits == visits.max())
        if len(best) > 1:  # equal visits: the better mean value (the prior when unvisited,
            # as after a single simulation), then the generator
            means = root.value_sum[best] / np.maximum(visits[best], 1)
            best = best[means >= means.max() - 1e-12]
        assert root.actions is not None  # the first simulation expanded the root
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
                value = self._expand(node, max_moves)
                break
            i = self._select(node)
            path.append((node, i))
            child = node.children[i]
            if child is None:
                state = node.state.copy()
                apply_unchecked(state, int(node.actions[i]), self._work)
                child = node.children[i] = _Node(state, max_moves, self._work)
            node = child
        for parent, i in path:  # value is for red; each edge stores it for the parent's mover
            parent.visits[i] += 1
            parent.value_sum[i] += value if parent.to_move == 0 else -value

    def _expand(self, node: _Node, max_moves: int) -> float:
        """Expand a leaf with the evaluator; return its value for red."""
        fill_legal_mask(node.state, self._mask, self._work)
        node.actions = np.flatnonzero(self._mask)
        n = len(node.actions)
        evaluation = self.evaluator.evaluate(node.state, node.actions, max_moves)
        node.visits = np.zeros(n)
        node.value_sum = (
            np.zeros(n)
            if evaluation.action_values is None
            else np.asarray(evaluation.action_values, dtype=float) * self.prior_visits
        )
        node.policy = None if evaluation.policy is None else np.asarray(evaluation.policy, float)
        node.children = [None] * n
        return evaluation.value if node.to_move == 0 else -evaluation.value

    def _select(self, node: _Node) -> int:
        counts = node.visits + self.prior_visits
        total = counts.sum()
        ucb = node.value_sum / counts + self.exploration * np.sqrt(math.log(total) / counts)
        if node.policy is not None:  # PUCT term for an evaluator with a prior policy
            ucb += self.policy_weight * node.policy * math.sqrt(total) / (1.0 + node.visits)
        return int(np.argmax(ucb))
