"""Self-play: B games in flight, each move chosen by a Gumbel search (training/alphazero/search.py).

Playout-cap randomisation (KataGo, Wu 2019): each search is *full* with probability
``full_fraction`` (``full_simulations``; its improved policy becomes a policy target) or
*cheap* (``cheap_simulations``; its position is a value target only). The move played is the
Gumbel root search's choice, which samples through the Gumbel noise instead of a temperature
or Dirichlet noise.

With ``dagger`` p > 0, a share p of the games has one colour, either at random, play the raw
policy's move (the most likely action of the network's prior at the root, what the
raw-policy agent plays) instead of the search's choice, while its positions are searched and
stored as ever: DAgger (Ross et al. 2011), the states the raw policy's own moves lead to,
labelled by the search. Played alone, the raw policy repeats itself (a satellite moved back
and forth) in states that self-play's sampled moves never reach; these games reach them.

With an ``opponent`` (an agent spec), every game is against that frozen agent instead: the
network plays one colour, drawn at random for each game, and the agent plays the other, its
moves made here between the searches. Only the network's own positions are searched and
stored, so it learns to beat that agent, weaknesses included: an exploiter (Wang et al. 2023;
AlphaStar's league exploiters). Its search models the opponent by its own network.

When a game ends, every position of it gets the final result as value target, from the view
of the player to move there (R24; a game the training cap stopped is scored there, R22), and
goes to the replay buffer.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from satellites_env.agents import make_agent
from satellites_env.core import engine
from satellites_env.core.engine import DRAW, N_CELLS, ONGOING, TO_MOVE
from satellites_env.core.game import Game

from .config import AZSearchConfig
from .replay import ReplayBuffer
from .search import NEED_ROOT, SLOTS, BatchedSearch, search_options

CHEAP, FULL = 0, 1


@dataclass
class SelfPlayStats:
    positions: int = 0  # moves chosen by a search (or forced: one legal action)
    full_searches: int = 0
    games: int = 0
    red_wins: int = 0
    blue_wins: int = 0
    draws: int = 0
    dagger_games: int = 0  # games with a colour that plays the raw policy's moves (dagger)
    dagger_wins: int = 0  # of them, won by that colour
    opponent_games: int = 0  # games against `opponent` (an exploiter's run)
    opponent_wins: int = 0  # of them, won by the network
    opponent_losses: int = 0  # of them, won by the opponent
    lengths: deque = field(default_factory=lambda: deque(maxlen=200))


class SelfPlay:
    """`config.games` games in flight, searched in one `BatchedSearch`; `play` runs them."""

    def __init__(self, config: AZSearchConfig, seed: int):
        self.config = config
        self.search = BatchedSearch(config.games, search_options(
            [config.cheap_simulations, config.full_simulations], config.max_considered,
            config.c_visit, config.c_scale, config.max_moves))
        self.rng = np.random.default_rng(seed)
        self.stats = SelfPlayStats()
        self.trajectories: list[list] = [[] for _ in range(config.games)]
        self.dagger_side = np.full(config.games, -1, np.int32)  # RED/BLUE: plays raw moves
        # the opponent's colour in each game (-1: self-play); its own random stream, so that
        # its moves do not shift the games' set-ups
        self.opponent_side = np.full(config.games, -1, np.int32)
        self.opponent = (make_agent(config.opponent, seed=int(self.rng.integers(2**63)))
                         if config.opponent else None)
        self.restart_games()

    def restart_games(self) -> None:
        """Fresh games in every slot (the games in flight are dropped)."""
        for b in range(self.config.games):
            self._start_game(b)
        self.search.tree.phase[:] = NEED_ROOT

    def _start_game(self, b: int) -> None:
        self.search.tree.game_state[b] = engine.init(rng=self.rng)
        self.trajectories[b] = []
        self.dagger_side[b] = self._draw_side(self.config.dagger)
        if self.opponent is not None:
            self.opponent_side[b] = int(self.rng.integers(2))

    def _draw_side(self, share: float) -> int:
        """The colour (either) that plays the raw policy in a new game, with probability
        share; else -1. No draw when share is 0: a seed's games stay the same."""
        if not share or self.rng.random() >= share:
            return -1
        return int(self.rng.integers(2))

    def _new_roots(self) -> None:
        rows = self.search.needs_root()
        if len(rows):
            tree = self.search.tree
            tree.gumbel[rows] = self.rng.gumbel(size=(len(rows), SLOTS)).astype(np.float32)
            tree.kind[rows] = (self.rng.random(len(rows)) < self.config.full_fraction
                               ).astype(np.int32)
            tree.raw_move[rows] = tree.game_state[rows, TO_MOVE] == self.dagger_side[rows]

    def play(self, positions: int, evaluate, buffer: ReplayBuffer) -> int:
        """Play until `positions` more moves were searched; finished games go to `buffer`.
        Returns the number of positions added to the buffer."""
        out = self.search.finished
        target = self.stats.positions + positions
        added = 0
        while self.stats.positions < target:
            if self.opponent is not None:
                added += self._opponent_moves(buffer)
            self._new_roots()
            self.search.step(evaluate)
            for b in np.flatnonzero(out.ready):
                n = int(out.count[b])
                full = int(out.kind[b]) == FULL and bool(out.searched[b])
                self.stats.positions += 1
                self.stats.full_searches += full
                self.trajectories[b].append((out.state[b].copy(), out.actions[b, :n].copy(),
                                             out.policy[b, :n].copy(), full))
                if out.done[b]:
                    added += self._game_over(b, int(out.winner[b]), buffer)
        return added

    def _opponent_moves(self, buffer: ReplayBuffer) -> int:
        """The opponent's moves in every game waiting for a new search where it is to move,
        until the network's turn (a finished game starts the next one); positions added."""
        added = 0
        state = self.search.tree.game_state
        for b in self.search.needs_root():
            while state[b, TO_MOVE] == self.opponent_side[b]:
                game = Game(state[b].copy(), self.search.max_moves)
                game.play(self.opponent.act(game))  # checked: a wrong agent is an error
                state[b] = game.state
                if game.status != ONGOING:
                    added += self._game_over(b, int(engine.winner_code(
                        game.state[:N_CELLS], engine.new_work())), buffer)
        return added

    def _game_over(self, b: int, winner: int, buffer: ReplayBuffer) -> int:
        trajectory = self.trajectories[b]
        n = len(trajectory)
        self.stats.games += 1
        self.stats.lengths.append(n)
        if winner == DRAW:
            self.stats.draws += 1
        elif winner == engine.RED:
            self.stats.red_wins += 1
        else:
            self.stats.blue_wins += 1
        opponent = int(self.opponent_side[b])
        if opponent >= 0:
            self.stats.opponent_games += 1
            self.stats.opponent_wins += winner == 1 - opponent
            self.stats.opponent_losses += winner == opponent
        raw = int(self.dagger_side[b])
        if raw >= 0:
            self.stats.dagger_games += 1
            self.stats.dagger_wins += winner == raw
        # the final result from the view of each position's player to move (R24)
        to_move = np.array([s[0][TO_MOVE] for s in trajectory])
        value = (np.zeros(n, np.float32) if winner == DRAW
                 else np.where(to_move == winner, 1.0, -1.0).astype(np.float32))
        actions = np.full((n, SLOTS), -1, dtype=np.int16)
        policy = np.zeros((n, SLOTS), dtype=np.float16)
        for i, s in enumerate(trajectory):
            actions[i, :len(s[1])] = s[1]
            policy[i, :len(s[2])] = s[2]
        # a full search's improved policy is a policy target (weight 1); a cheap search's
        # position is a value target only (KataGo's playout caps)
        weights = np.array([1.0 if s[3] else 0.0 for s in trajectory], np.float32)
        if not n:  # the opponent ended the game before the network's first move
            self._start_game(b)
            return 0
        buffer.add(np.stack([s[0] for s in trajectory]), actions, policy, value, weights)
        self._start_game(b)
        return n
