"""`openspiel-mcts:N`: OpenSpiel's own MCTS bot as an agent of this package.

OpenSpiel's ``MCTSBot`` (UCT, ``uct_c`` 2 as in OpenSpiel's examples, MCTS-Solver backups)
searching the `python_satellites` state of the position it is asked about, with one of two
leaf evaluators:

- `openspiel-mcts:N`: its own ``RandomRolloutEvaluator`` (one uniformly random rollout to the
  end of the game per simulation);
- `openspiel-mcts:N:heuristic`:
  [`HeuristicRollout`][satellites_env.openspiel.mcts.HeuristicRollout], `mcts:N`'s leaf value
  (4 random moves, then the hand-made heuristic), with uniform priors.
  Against `mcts:N` this leaves one difference, the tree search itself: OpenSpiel's UCT, and
  ours with its one-ply lookahead values as starting visits.

It is written by people who never saw this package's search, which makes it an independent
check of `mcts:N`; it runs in Python, so it is slow (see the OpenSpiel page of the docs for
the measured cost).
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python.algorithms.mcts import Evaluator, MCTSBot, RandomRolloutEvaluator

from ..agents.base import Agent
from ..agents.lookahead import rollout_value, seed_rollouts
from ..core.board import N_ACTIONS
from ..core.engine import new_work
from ..core.game import Game
from .game import GAME_NAME, SatellitesState, state_from_game

#: OpenSpiel's examples/mcts.py default exploration constant
UCT_C = 2.0
#: the leaf evaluators, by the name a spec gives them
EVALUATORS = ("random", "heuristic")


class HeuristicRollout(Evaluator):
    """`mcts:N`'s leaf value as an OpenSpiel evaluator: `rollout_depth` uniformly random
    moves, then the hand-made heuristic (the exact result where the game ended), as
    `HeuristicEvaluator` values a leaf; uniform priors (UCT does not use them)."""

    def __init__(self, rollout_depth: int = 4):
        self.rollout_depth = rollout_depth
        self._work = new_work()
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)

    def evaluate(self, state: SatellitesState) -> np.ndarray:
        """Both players' values of a decision node (red's first)."""
        game = state.game
        red = rollout_value(
            game.state.copy(), self.rollout_depth, game.max_moves, self._work, self._mask
        )
        return np.array([red, -red])

    def prior(self, state: SatellitesState) -> list[tuple[int, float]]:
        """Equal probability for every legal action."""
        legal = state.legal_actions()
        return [(action, 1.0 / len(legal)) for action in legal]


class OpenSpielMCTSAgent(Agent):
    """OpenSpiel's MCTSBot with random rollouts, or with `mcts:N`'s leaf value
    (`evaluator="heuristic"`); deterministic for a seed."""

    def __init__(
        self,
        simulations: int = 200,
        seed: int | None = None,
        uct_c: float = UCT_C,
        evaluator: str = "random",
    ):
        super().__init__(seed)
        if evaluator not in EVALUATORS:
            raise ValueError(f"evaluator must be one of {', '.join(EVALUATORS)}, got {evaluator!r}")
        self.simulations = simulations
        self.uct_c = uct_c
        self.evaluator = evaluator
        self.spec = f"openspiel-mcts:{simulations}" + (
            ":heuristic" if evaluator == "heuristic" else ""
        )
        self._games: dict[int, pyspiel.Game] = {}
        self._heuristic = HeuristicRollout()

    def act(self, game: Game) -> int:
        legal = game.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        spiel_game = self._games.get(game.max_moves)
        if spiel_game is None:
            spiel_game = pyspiel.load_game(GAME_NAME, {"max_moves": game.max_moves})
            self._games[game.max_moves] = spiel_game
        # one RandomState per search, drawn from the agent's generator: a seed fixes the game
        search_rng = np.random.RandomState(int(self.rng.integers(2**31)))
        if self.evaluator == "heuristic":
            seed_rollouts(int(self.rng.integers(2**31)))  # as mcts:N seeds its rollouts
            evaluator: Evaluator = self._heuristic
        else:
            evaluator = RandomRolloutEvaluator(n_rollouts=1, random_state=search_rng)
        bot = MCTSBot(
            spiel_game,
            uct_c=self.uct_c,
            max_simulations=self.simulations,
            evaluator=evaluator,
            random_state=search_rng,
        )
        return int(bot.step(state_from_game(spiel_game, game)))
