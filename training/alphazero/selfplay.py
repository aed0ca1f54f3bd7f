"""Self-play: B games in flight, each move chosen by a Gumbel search (training/alphazero/search.py).

Playout-cap randomisation (KataGo, Wu 2019): each search is *full* with probability
``full_fraction`` (``full_simulations``; its improved policy becomes a policy target) or
*cheap* (``cheap_simulations``; value target only, or dropped when ``cheap_value_targets`` is
off; its improved policy becomes a policy target of weight ``cheap_policy_weight`` when that
is above 0). The move played is the Gumbel root search's choice, which samples through the
Gumbel noise instead of a temperature or Dirichlet noise; with ``noise_moves`` N > 0 only a
game's first N moves get the noise (as AlphaZero samples only its first moves). With
``random_moves`` epsilon > 0, a share epsilon of the moves is played uniformly at random
(epsilon-exploration: positions an opponent that does not cooperate leads to): the root's
Gumbel noise is scaled up until it alone decides Gumbel-top-k and the final choice, which makes
the move a uniform draw over the legal actions (Gumbel-max); such a search is cheap and sets no
policy target. With ``random_opponent`` p > 0, a share p of the games (drawn when each starts)
has one colour, either at random, play all its moves that way: an opponent that plays unlike
the network (as a league keeps weaker members beside the current one); its positions are value
targets, like any cheap search's. With ``dagger`` p > 0, a share p of the games has one
colour, either at random, play the raw policy's move (the most likely action of the network's
prior at the root, what the raw-policy agent plays) instead of the search's choice, while its
positions are searched and stored as ever: DAgger (Ross et al. 2011), the states the raw
policy's own moves lead to, labelled by the search. The raw policy played alone repeats itself
(a satellite moved back and forth) in states self-play's sampled moves never reach; these games
reach them. With ``surprise_weight`` s > 0 (KataGo's policy surprise weighting), a finished
game's full searches share their total policy weight anew: a share 1 - s evenly, a share s in
proportion to each one's surprise, KL(improved policy || prior), so that the positions where
the search most disagrees with the network's prior weigh most (:func:`surprise_weights`).
When a game ends, every position of it gets the final
result as value target, from the view of the player to move there (with ``td_lambda`` below 1,
its TD(lambda) return: :func:`lambda_returns`; a game the training cap stopped counts
``capped_value`` of its score), and goes to the replay buffer.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from satellites_env.core import engine
from satellites_env.core.board import N_CELLS
from satellites_env.core.engine import DRAW, TRUNCATED, fill_control_map
from satellites_env.core.state import MOVES, TO_MOVE

from .config import AZSearchConfig
from .replay import ReplayBuffer
from .search import NEED_ROOT, SLOTS, BatchedSearch

CHEAP, FULL = 0, 1
# Root noise of a random move: Gumbel(0, 1) times this dwarfs any logit and sigma (|logit| and
# sigma stay within a few hundred), so argmax(g + logit + sigma) is argmax(g): uniform.
RANDOM_MOVE_NOISE = 1.0e6


@dataclass
class SelfPlayStats:
    positions: int = 0  # moves chosen by a search (or forced: one legal action)
    full_searches: int = 0
    games: int = 0
    red_wins: int = 0
    blue_wins: int = 0
    draws: int = 0
    opponent_games: int = 0  # games against the random opponent (random_opponent)
    opponent_wins: int = 0  # of them, won by the searching colour
    dagger_games: int = 0  # games with a colour that plays the raw policy's moves (dagger)
    dagger_wins: int = 0  # of them, won by that colour
    lengths: deque = field(default_factory=lambda: deque(maxlen=200))


def lambda_returns(to_move: np.ndarray, root_value: np.ndarray, searched: np.ndarray,
                   result: np.ndarray, lam: float) -> np.ndarray:
    """TD(lambda) value targets of one game's positions (Sutton 1988), each from the view of
    its player to move: the last position's is its result, and position t's is
    s_t ((1 - lam) v_{t+1} + lam G_{t+1}), with v_{t+1} the next position's root value after
    its search (G_{t+1} itself where it had no search: a forced move) and s_t = -1 where the
    player to move changes (+1 through grace moves). lam = 1 gives the results."""
    n = len(to_move)
    returns = np.empty(n, np.float32)
    returns[n - 1] = result[n - 1]
    for t in range(n - 2, -1, -1):
        nxt = root_value[t + 1] if searched[t + 1] else returns[t + 1]
        sign = 1.0 if to_move[t + 1] == to_move[t] else -1.0
        returns[t] = sign * ((1.0 - lam) * nxt + lam * returns[t + 1])
    return returns


def surprise_weights(surprise: np.ndarray, share: float) -> np.ndarray:
    """Policy weights of one game's full searches from their surprise (KL of the improved
    policy from the prior): a share 1 - `share` evenly, `share` in proportion to the surprise;
    they sum to the number of searches, as weights of 1 would (even when no search surprised)."""
    total = float(surprise.sum())
    if total <= 0.0:
        return np.ones(len(surprise), np.float32)
    return ((1.0 - share) + share * len(surprise) * surprise / total).astype(np.float32)


class SelfPlay:
    def __init__(self, config: AZSearchConfig, seed: int, cheap_value_targets: bool = True,
                 value_mix: float = 0.0, cheap_policy_weight: float = 0.0,
                 td_lambda: float = 1.0, value_only_leaves: bool = True,
                 capped_value: float = 1.0, surprise_weight: float = 0.0):
        self.config = config
        self.surprise_weight = float(surprise_weight)
        self.capped_value = float(capped_value)
        self.cheap_value_targets = cheap_value_targets
        self.cheap_policy_weight = float(cheap_policy_weight)
        self.value_mix = float(value_mix)
        self.td_lambda = float(td_lambda)
        self.search = BatchedSearch(config.games, [config.cheap_simulations,
                                                   config.full_simulations],
                                    config.max_considered, config.c_visit, config.c_scale,
                                    config.max_moves, config.rescale_q, value_only_leaves,
                                    config.win_check)
        self.rng = np.random.default_rng(seed)
        self.stats = SelfPlayStats()
        self.work = engine.new_work()
        self.trajectories: list[list] = [[] for _ in range(config.games)]
        self.random_side = np.full(config.games, -1, np.int32)  # RED/BLUE: plays at random
        self.dagger_side = np.full(config.games, -1, np.int32)  # RED/BLUE: plays raw moves
        self.dagger_share = config.dagger  # share of new games with a dagger colour (the
                                           # generator turns it off after search.dagger_until)
        self.restart_games()

    def restart_games(self) -> None:
        """Fresh games in every slot (the games in flight are dropped)."""
        for b in range(self.config.games):
            self._start_game(b)
        self.search.trees.phase[:] = NEED_ROOT

    def _start_game(self, b: int) -> None:
        self.search.trees.game_state[b] = engine.init(rng=self.rng)
        self.trajectories[b] = []
        self.random_side[b] = self._draw_side(self.config.random_opponent)
        self.dagger_side[b] = self._draw_side(self.dagger_share)

    def _draw_side(self, share: float) -> int:
        """The colour (either) that plays unlike the search in a new game, with probability
        share; else -1. No draw when share is 0: a seed's games stay the same."""
        if not share or self.rng.random() >= share:
            return -1
        return int(self.rng.integers(2))

    def _new_roots(self) -> None:
        rows = self.search.needs_root()
        if len(rows):
            trees = self.search.trees
            trees.gumbel[rows] = self.rng.gumbel(size=(len(rows), SLOTS)).astype(np.float32)
            if self.config.noise_moves:  # past the opening: the search's best move, no noise
                late = rows[trees.game_state[rows, MOVES] >= self.config.noise_moves]
                trees.gumbel[late] = 0.0
            trees.kind[rows] = (self.rng.random(len(rows)) < self.config.full_fraction
                                ).astype(np.int32)
            if self.config.random_moves:
                explore = rows[self.rng.random(len(rows)) < self.config.random_moves]
                trees.gumbel[explore] = (self.rng.gumbel(size=(len(explore), SLOTS))
                                         * RANDOM_MOVE_NOISE).astype(np.float32)
                trees.kind[explore] = CHEAP
            trees.raw_move[rows] = trees.game_state[rows, TO_MOVE] == self.dagger_side[rows]
            if self.config.random_opponent:
                opponent = rows[trees.game_state[rows, TO_MOVE] == self.random_side[rows]]
                trees.gumbel[opponent] = (self.rng.gumbel(size=(len(opponent), SLOTS))
                                          * RANDOM_MOVE_NOISE).astype(np.float32)
                trees.kind[opponent] = CHEAP

    def play(self, positions: int, evaluate, buffer: ReplayBuffer) -> int:
        """Play until `positions` more moves were searched; finished games go to `buffer`.
        Returns the number of positions added to the buffer."""
        trees = self.search.trees
        target = self.stats.positions + positions
        added = 0
        while self.stats.positions < target:
            self._new_roots()
            self.search.step(evaluate)
            for b in np.flatnonzero(trees.out_ready):
                n = int(trees.out_count[b])
                kind = int(trees.out_kind[b])
                searched = bool(trees.out_searched[b])
                self.stats.positions += 1
                full = kind == FULL and searched
                self.stats.full_searches += full
                weight = 1.0 if full else self.cheap_policy_weight if searched else 0.0
                self.trajectories[b].append((trees.out_state[b].copy(),
                                             trees.out_actions[b, :n].copy(),
                                             trees.out_policy[b, :n].copy(),
                                             weight, float(trees.out_value[b]), full,
                                             searched, float(trees.out_surprise[b])))
                if trees.out_done[b]:
                    added += self._game_over(b, int(trees.out_winner[b]), buffer)
        return added

    def _game_over(self, b: int, winner: int, buffer: ReplayBuffer) -> int:
        trajectory = self.trajectories[b]
        self.stats.games += 1
        self.stats.lengths.append(len(trajectory))
        if winner == DRAW:
            self.stats.draws += 1
        elif winner == engine.RED:
            self.stats.red_wins += 1
        else:
            self.stats.blue_wins += 1
        opponent = int(self.random_side[b])
        if opponent >= 0:
            self.stats.opponent_games += 1
            self.stats.opponent_wins += winner not in (DRAW, opponent)
        raw = int(self.dagger_side[b])
        if raw >= 0:
            self.stats.dagger_games += 1
            self.stats.dagger_wins += winner == raw
        # the final result from the view of each position's player to move (R24); a game the
        # training cap stopped counts capped_value of its score there (which says who was
        # ahead when it stopped, not who would have won)
        to_move = np.array([s[0][TO_MOVE] for s in trajectory])
        scale = (self.capped_value if engine.status(self.search.trees.game_state[b],
                                                    self.config.max_moves) == TRUNCATED else 1.0)
        result = (np.zeros(len(trajectory), np.float32) if winner == DRAW
                  else np.where(to_move == winner, scale, -scale).astype(np.float32))
        if self.td_lambda < 1.0:
            result = lambda_returns(to_move, np.array([s[4] for s in trajectory], np.float32),
                                    np.array([s[6] for s in trajectory]), result,
                                    self.td_lambda)
        kept = [i for i, s in enumerate(trajectory) if s[5] or self.cheap_value_targets]
        keep = [trajectory[i] for i in kept]
        if keep:
            n = len(keep)
            states = np.stack([s[0] for s in keep])
            actions = np.full((n, SLOTS), -1, dtype=np.int16)
            policy = np.zeros((n, SLOTS), dtype=np.float16)
            for i, s in enumerate(keep):
                actions[i, :len(s[1])] = s[1]
                policy[i, :len(s[2])] = s[2]
            value = result[kept]
            control = np.zeros(N_CELLS, dtype=np.int8)
            fill_control_map(self.search.trees.game_state[b, :N_CELLS], self.work, control)
            if self.value_mix:
                root = np.array([s[4] for s in keep], np.float32)
                value = (1.0 - self.value_mix) * value + self.value_mix * root
            weights = np.array([s[3] for s in keep], np.float32)
            if self.surprise_weight:
                full = np.array([s[5] for s in keep])
                weights[full] = surprise_weights(np.array([s[7] for s in keep], np.float32)[full],
                                                 self.surprise_weight)
            buffer.add(states, actions, policy, value, weights,
                       np.broadcast_to(control, (n, N_CELLS)))
        self._start_game(b)
        return len(keep)
