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
AlphaStar's exploiter agents). Its search models the opponent by its own network, or, with
``victim_play`` and an opponent that has a network (`target_policy`), by the opponent's: inside
the search the opponent's moves follow its network's policy (A-MCTS-S, `BatchedSearch`'s
victim-play); the network's own nodes and every value are searched as ever. A network
opponent (`az:PATH:N`, `checkpoint:PATH`) plays all its games at once, in a batched search of
its own beside the network's: a game waiting for its move sits out of the network's search
until the move is made. Either way the opponent moves through its
[`OpponentSeat`][training.common.seats.OpponentSeat] (which, under victim-play, holds the
opponent's `target_policy`), and what each seat does and how its
games count is its [`Seat`][training.alphazero.seats.Seat].

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

from ..common.seats import PolicyModel
from .config import AZSearchConfig
from .inflight import check_games, games_state, restore_tree
from .replay import PositionSink
from .search import (
    IDLE,
    NEED_ROOT,
    SLOTS,
    BatchedSearch,
    Evaluate,
    SearchOptions,
    search_options,
)
from .seats import OPPONENT, RAW_MOVE, SEATS, SeatPolicy, opponent_seat

#: the budgets of a search (`SearchOptions.budgets` rows): a cheap one and a full one
CHEAP, FULL = 0, 1


def selfplay_options(config: AZSearchConfig) -> SearchOptions:
    """The options of self-play's searches: a cheap budget and a full one."""
    return search_options(
        [config.cheap_simulations, config.full_simulations],
        config.max_considered,
        config.c_visit,
        config.c_scale,
        config.max_moves,
    )


def check_saved_games(config: AZSearchConfig, games: int, data: object) -> dict:
    """A checkpoint's games in flight (`SelfPlay.games_state`) checked for `games` games of
    self-play with these settings (`inflight.check_games`; ValueError)."""
    if config.opponent:
        raise ValueError("a run with an opponent holds no games in flight")
    return check_games(data, selfplay_options(config), games, config.max_moves)


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
    """`config.games` games in flight, searched in one `BatchedSearch`; `play` runs them.

    Who plays each colour of a game is the seat policy's answer at its start
    ([`SeatPolicy`][training.alphazero.seats.SeatPolicy]): the play loop asks the seats, never
    the mode (self-play, DAgger, a fixed opponent).
    """

    def __init__(self, config: AZSearchConfig, seed: int):
        self.config = config
        self.search = BatchedSearch(config.games, selfplay_options(config))
        self.rng = np.random.default_rng(seed)
        self.stats = SelfPlayStats()
        self.trajectories: list[list] = [[] for _ in range(config.games)]
        # the opponent has its own random stream, so that its moves do not shift the games'
        # set-ups
        self.opponent = (
            make_agent(config.opponent, seed=int(self.rng.integers(2**63)))
            if config.opponent
            else None
        )
        self.opponent_seat = (
            opponent_seat(
                self.opponent, config.games, config.max_moves, victim_play=config.victim_play
            )
            if self.opponent is not None
            else None
        )
        self.seat_policy = SeatPolicy(config.dagger, self.opponent is not None)
        self.seats = np.zeros((config.games, 2), np.int32)  # per game, per colour
        self.restart_games()

    def _colour_of(self, seat_test: np.ndarray) -> np.ndarray:
        """Per game, the colour whose seat code passes `seat_test` (a bool per code, as
        `seats.RAW_MOVE`), -1 for none."""
        hits = seat_test[self.seats]
        return np.where(hits[:, 0], 0, np.where(hits[:, 1], 1, -1)).astype(np.int32)

    @property
    def victim(self) -> PolicyModel | None:
        """Victim-play's model of the opponent inside the network's searches, its seat's
        (None: the network models the opponent's moves by its own policy)."""
        return None if self.opponent_seat is None else self.opponent_seat.victim

    @property
    def dagger_side(self) -> np.ndarray:
        """Per game, the colour that plays the raw policy's moves, -1 for none."""
        return self._colour_of(RAW_MOVE)

    def restart_games(self) -> None:
        """Fresh games in every slot (the games in flight are dropped)."""
        for b in range(self.config.games):
            self._start_game(b)
        self.search.tree.phase[:] = NEED_ROOT
        if self.opponent_seat is not None:
            self.opponent_seat.stop()

    @property
    def saves_games(self) -> bool:
        """Whether `games_state` can hold the games in flight: not with an opponent, whose
        agents keep state of their own (a batched search, a random stream)."""
        return self.opponent is None

    def games_state(self) -> dict:
        """The games in flight as checkpoint data (`inflight`), between two `play` calls;
        the random stream is the caller's to save."""
        if not self.saves_games:
            raise ValueError("the games of a run with an opponent are not saved")
        return games_state(self.search.tree, self.trajectories, self.seats)

    def restore_games(self, data: object) -> None:
        """Continue the games in flight `games_state` saved (checked first: ValueError)."""
        checked = check_saved_games(self.config, self.config.games, data)
        restore_tree(self.search.tree, checked["tree"])
        self.trajectories = checked["trajectories"]
        self.seats[:] = checked["seats"]

    def _start_game(self, b: int) -> None:
        self.search.tree.game_state[b] = engine.init(rng=self.rng)
        self.trajectories[b] = []
        self.seats[b] = self.seat_policy(self.rng)

    def _new_roots(self) -> None:
        rows = self.search.needs_root()
        if len(rows):
            tree = self.search.tree
            tree.gumbel[rows] = self.rng.gumbel(size=(len(rows), SLOTS)).astype(np.float32)
            full = self.rng.random(len(rows)) < self.config.full_fraction
            tree.kind[rows] = np.where(full, FULL, CHEAP).astype(np.int32)
            seat = self.seats[rows, tree.game_state[rows, TO_MOVE]]
            tree.raw_move[rows] = RAW_MOVE[seat]
            if self.victim is not None:  # the opponent's colour, whose nodes take its policy
                tree.victim[rows] = self._colour_of(OPPONENT)[rows]

    def play(self, positions: int, evaluate: Evaluate, buffer: PositionSink) -> int:
        """Play until `positions` more moves were searched; finished games go to `buffer`.
        Returns the number of positions added to the buffer."""
        out = self.search.finished
        target = self.stats.positions + positions
        added = 0
        while self.stats.positions < target:
            added += self._agent_moves(buffer)
            self._new_roots()
            self.search.step(evaluate, victim=self.victim)
            # every searched move is the network's (an opponent moves outside this search)
            for b in np.flatnonzero(out.ready):
                self.stats.positions += 1
                n = int(out.n_legal[b])
                full = int(out.kind[b]) == FULL and bool(out.searched[b])
                self.stats.full_searches += full
                self.trajectories[b].append(
                    (out.state[b].copy(), out.actions[b, :n].copy(), out.policy[b, :n].copy(), full)
                )
                if out.done[b]:
                    added += self._game_over(int(b), int(out.winner[b]), buffer)
            added += self._batched_agent_moves(buffer)
        return added

    def _agent_moves(self, buffer: PositionSink) -> int:
        """The fixed opponent's turn in every game waiting for a new search where its seat is
        to move (`OpponentSeat.take_turn`): made there and then until the network's turn (a
        finished game starts the next one), or the game waits out of the network's search
        for the opponent's own. Positions added."""
        added = 0
        state = self.search.tree.game_state
        for b in self.search.needs_root():
            while OPPONENT[self.seats[b, state[b, TO_MOVE]]]:
                assert self.opponent_seat is not None  # an opponent's seat: there is one
                game = Game(state[b].copy(), self.search.max_moves)
                if self.opponent_seat.take_turn(int(b), game):
                    self.search.tree.phase[b] = IDLE
                    break
                state[b] = game.state
                if game.status != ONGOING:
                    added += self._game_over(
                        b, int(engine.winner_code(game.state[:N_CELLS], engine.new_work())), buffer
                    )
        return added

    def _batched_agent_moves(self, buffer: PositionSink) -> int:
        """One step of the opponent's own search, when a game waits for it; the games whose
        move it made go back to the network's search, or end. Positions added."""
        added = 0
        player = self.opponent_seat
        if player is None or not player.busy:
            return 0
        for b in player.step():
            self.search.tree.game_state[b] = player.state[b]
            self.search.tree.phase[b] = NEED_ROOT
            if player.done[b]:
                added += self._game_over(b, int(player.winner[b]), buffer)
        return added

    def _game_over(self, b: int, winner: int, buffer: PositionSink) -> int:
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
        for colour, seat in enumerate(self.seats[b]):
            SEATS[seat].count(self.stats, winner, colour)
        # the final result from the view of each position's player to move (R24)
        to_move = np.array([s[0][TO_MOVE] for s in trajectory])
        value = (
            np.zeros(n, np.float32)
            if winner == DRAW
            else np.where(to_move == winner, 1.0, -1.0).astype(np.float32)
        )
        actions = np.full((n, SLOTS), -1, dtype=np.int16)
        policy = np.zeros((n, SLOTS), dtype=np.float16)
        for i, s in enumerate(trajectory):
            actions[i, : len(s[1])] = s[1]
            policy[i, : len(s[2])] = s[2]
        # a full search's improved policy is a policy target (weight 1); a cheap search's
        # position is a value target only (KataGo's playout caps)
        weights = np.array([1.0 if s[3] else 0.0 for s in trajectory], np.float32)
        if not n:  # the opponent ended the game before the network's first move
            self._start_game(b)
            return 0
        buffer.add(np.stack([s[0] for s in trajectory]), actions, policy, value, weights)
        self._start_game(b)
        return n
