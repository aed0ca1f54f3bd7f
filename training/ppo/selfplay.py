"""Vectorised game generation: many games at once, one batched forward pass per step.

Who plays a new game (the opponent rule, drawn per game from the generator's RNG):

* with probability `baseline_fraction`: the learner against the baseline agent
  `baseline_opponent` (e.g. greedy), learner color random;
* else with probability `pool_fraction` (when the pool is not empty): the learner against a
  past snapshot drawn uniformly from the pool (the last `pool_size` snapshots, one added every
  `snapshot_every` updates), learner color random;
* otherwise pure self-play: the learner plays both colors and learns from both.

Each colour's player is a seat (`training.ppo.seats`): the learner's, a snapshot's or the
baseline agent's, which moves all the games where it is to move at once.

Only the learner's own decisions become training data. Games run on the core engine directly
(not through the AEC env): the generator is the hot loop of training.

`SelfPlayGenerator` is a `training.distributed.Generator`: the trainer runs one or more of them
in a `GeneratorPool` (in this process, or as Ray actors), gives them the learner's weights and
the opponent pool with `set_weights`, and takes finished segments from `generate(n)`.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

import numba
import numpy as np
import torch

from satellites_env.agents import make_agent
from satellites_env.core.engine import (
    N_ACTIONS,
    N_CELLS,
    initial_state,
    legal_masks,
    new_batch_scratch,
    new_work,
)
from satellites_env.core.game import Game
from satellites_env.observation import (
    N_PLANES,
    OBSERVATION_SHAPE,
    fill_observation,
    observe,
    observe_states,
)

from ..common.network import PolicyValueNet, sample_masked
from ..distributed.generator import SampleBatch, split
from .config import SelfPlayConfig
from .prior import LookaheadFeatures, PriorNet, masked_logits, network_from_shape
from .seats import LEARNER, AgentSeat, Seat, SnapshotSeat
from .shaping import potential


@dataclass
class Trajectory:
    """One player's decisions in one game, with what PPO needs.

    Pickled (to cross Ray's object store) it travels small: the positions' states instead of
    their observation planes and masks, which are computed again on arrival by the same
    kernels (so exactly), and the lookahead values at legal actions only (the others are 0):
    about 1.5 KB a decision instead of 25 KB.
    """

    states: list[np.ndarray] = field(default_factory=list)  # the position at each decision
    max_moves: int = 400  # of the game (its observation planes depend on it)
    observations: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    lookaheads: list[np.ndarray] = field(default_factory=list)  # when the net uses them
    actions: list[int] = field(default_factory=list)
    log_probs: list[float] = field(default_factory=list)
    potentials: list[float] = field(default_factory=list)  # shaping potential at each decision
    outcome: float = 0.0  # final reward (R24) of this player, when `done`
    done: bool = False  # the game ended; else the segment is cut and bootstrapped
    bootstrap_observation: np.ndarray | None = None  # the player's view where the cut was made
    bootstrap_potential: float = 0.0

    def __len__(self) -> int:
        return len(self.actions)

    def __getstate__(self) -> dict:
        packed = self.__dict__.copy()
        if self.states:
            legal = np.stack(self.masks) != 0
            packed["states"] = np.stack(self.states)
            packed["lookaheads"] = np.stack(self.lookaheads)[legal] if self.lookaheads else None
        packed["observations"] = packed["masks"] = None
        return packed

    def __setstate__(self, packed: dict) -> None:
        states, values = packed["states"], packed["lookaheads"]
        self.__dict__.update(packed, states=[], observations=[], masks=[], lookaheads=[])
        if not len(states):
            return
        n, scratch = len(states), new_batch_scratch()
        masks = np.zeros((n, N_ACTIONS), dtype=np.int8)
        planes = np.empty((n, N_CELLS, N_PLANES), dtype=np.float32)
        threads = numba.get_num_threads()
        # One segment is small work: waking numba's threads for it (OpenMP's, once torch is
        # loaded) costs milliseconds on a busy machine, running it on this thread microseconds.
        numba.set_num_threads(1)
        try:
            legal_masks(states, self.max_moves, masks, np.zeros(n, dtype=np.int32), scratch)
            observe_states(states, self.max_moves, planes, scratch)
        finally:
            numba.set_num_threads(threads)
        self.states, self.masks = list(states), list(masks)
        self.observations = list(planes.reshape(n, *OBSERVATION_SHAPE))
        if values is not None:
            lookaheads = np.zeros((n, N_ACTIONS), dtype=np.float32)
            lookaheads[masks != 0] = values  # packed row by row, in action order
            self.lookaheads = list(lookaheads)


@dataclass
class _Slot:
    game: Game
    seats: tuple[Seat, Seat]
    trajectories: tuple[Trajectory | None, Trajectory | None]


@dataclass
class GenerationStats:
    games: int = 0
    steps: int = 0  # every action played, all seats
    learner_steps: int = 0
    game_lengths: list[int] = field(default_factory=list)
    truncated: int = 0


def make_generator(
    config: SelfPlayConfig, shape: dict, workers: int, worker: int, seed: int
) -> SelfPlayGenerator:
    """Generator `worker` of `workers` (the pool's factory, with functools.partial): it plays
    its share of `config.envs` games with a network of `shape` (weights come by set_weights)."""
    with torch.random.fork_rng(devices=[]):  # building a net draws from torch's global RNG
        net = network_from_shape(shape)
    return SelfPlayGenerator(config, net, seed, envs=split(config.envs, workers)[worker])


class SelfPlayGenerator:
    """Keeps `envs` games running (default `config.envs`); `collect(n)` plays until the
    learner made >= n decisions and returns them as trajectory segments: whole when the game
    ended, else cut at the current position with what is needed to bootstrap (so every update
    trains on fresh data). `net` is the learner's network it plays (and `set_weights` loads)."""

    def __init__(
        self, config: SelfPlayConfig, net: PolicyValueNet, seed: int, envs: int | None = None
    ):
        self.config = config
        self.envs = config.envs if envs is None else envs
        self.net = net
        self.pool: list[PolicyValueNet] = []
        self.pool_version = 0  # snapshots ever added, as of the last set_weights
        self.version = -1  # of the weights given by set_weights
        self.rng = np.random.default_rng(seed)
        self.torch_generator = torch.Generator().manual_seed(seed)
        self.scratch = new_work()
        self._obs = np.zeros((self.envs, N_CELLS, N_PLANES), dtype=np.float32)
        self._masks = np.zeros((self.envs, N_ACTIONS), dtype=np.int8)
        self._lookaheads = np.zeros((self.envs, N_ACTIONS), dtype=np.float32)
        self._features = LookaheadFeatures()
        self._baseline: AgentSeat | None = None
        self.stats = GenerationStats()
        self.slots: list[_Slot] = []  # games start on the first step (after a resume too)

    def restart_games(self) -> None:
        """Drop the games in flight; the next step starts new ones."""
        self.slots = []

    # ------------------------------------------------------------------ the Generator interface

    def set_weights(self, weights: dict, version: int) -> None:
        """`weights`: {"model": the learner's state dict, "pool": the opponent snapshots'
        state dicts (oldest first), "pool_version": snapshots ever added}."""
        self.net.load_state_dict(weights["model"])
        if weights["pool_version"] != self.pool_version or len(self.pool) != len(weights["pool"]):
            while len(self.pool) < len(weights["pool"]):
                with torch.random.fork_rng(devices=[]):
                    self.pool.append(network_from_shape(self.net.shape).eval())
            del self.pool[len(weights["pool"]) :]
            for net, snapshot in zip(self.pool, weights["pool"], strict=False):
                net.load_state_dict(snapshot)
            self.pool_version = weights["pool_version"]
        self.version = version

    def generate(self, n: int) -> SampleBatch:
        """`collect(n)` as a batch: its segments, the learner decisions in them, and the
        counters of the games played meanwhile (env_steps, games, truncated, game_moves)."""
        before = (
            self.stats.steps,
            self.stats.games,
            self.stats.truncated,
            len(self.stats.game_lengths),
        )
        segments = self.collect(n) if n > 0 else []
        lengths = self.stats.game_lengths[before[3] :]
        del self.stats.game_lengths[:-200]  # a long-lived actor keeps the recent ones only
        counters = {
            "env_steps": self.stats.steps - before[0],
            "games": self.stats.games - before[1],
            "truncated": self.stats.truncated - before[2],
            "game_moves": int(sum(lengths)),
        }
        return SampleBatch(segments, sum(len(s) for s in segments), counters, self.version)

    def state(self) -> dict:
        return {"rng": self.rng.bit_generator.state, "torch": self.torch_generator.get_state()}

    def restore(self, state: dict) -> None:
        """Set the random streams; the baseline agent is built again from them (as in a
        fresh generator, which is what a resumed run starts with), and fresh games start
        (the games in flight are not saved)."""
        self.rng.bit_generator.state = state["rng"]
        self.torch_generator.set_state(state["torch"])
        self._baseline = None
        self.restart_games()

    # ------------------------------------------------------------------ seats

    def _trajectory(self) -> Trajectory:
        return Trajectory(max_moves=self.config.max_moves)

    def _new_slot(self) -> _Slot:
        game = Game(initial_state(self.rng), self.config.max_moves)
        draw = self.rng.random()
        learner_color = int(self.rng.integers(2))
        if draw < self.config.baseline_fraction:
            if self._baseline is None:
                agent = make_agent(
                    self.config.baseline_opponent, seed=int(self.rng.integers(2**31))
                )
                self._baseline = AgentSeat(agent, self.envs)
            opponent: Seat = self._baseline
        elif self.pool and draw < self.config.baseline_fraction + self.config.pool_fraction:
            opponent = SnapshotSeat(int(self.rng.integers(len(self.pool))))
        else:
            return _Slot(game, (LEARNER, LEARNER), (self._trajectory(), self._trajectory()))
        seats: list[Seat] = [opponent, opponent]
        seats[learner_color] = LEARNER
        trajectories: list[Trajectory | None] = [None, None]
        trajectories[learner_color] = self._trajectory()
        return _Slot(game, (seats[0], seats[1]), (trajectories[0], trajectories[1]))

    # ------------------------------------------------------------------ generation

    def collect(self, min_learner_steps: int) -> list[Trajectory]:
        """Play until the learner made `min_learner_steps` decisions; return all its segments."""
        segments: list[Trajectory] = []
        start = self.stats.learner_steps
        while self.stats.learner_steps - start < min_learner_steps:
            segments.extend(self.step())
        for slot in self.slots:  # cut the games in flight
            game = slot.game
            trajectories: list[Trajectory | None] = list(slot.trajectories)
            for color, trajectory in enumerate(trajectories):
                if trajectory is None or not len(trajectory):
                    continue
                trajectory.bootstrap_observation = observe(
                    game.state, color, game.max_moves, self.scratch
                )
                trajectory.bootstrap_potential = float(
                    potential(game.state[:N_CELLS], 1 - 2 * color, self.scratch)
                )
                segments.append(trajectory)
                trajectories[color] = self._trajectory()
            slot.trajectories = (trajectories[0], trajectories[1])
        return segments

    @torch.no_grad()
    def step(self) -> list[Trajectory]:
        """One action in every running game (the games grouped by the seat to move, each
        group moved at once); returns the learner trajectories that ended."""
        if not self.slots:
            self.slots = [self._new_slot() for _ in range(self.envs)]
        groups: dict[Seat, list[int]] = {}
        for i, slot in enumerate(self.slots):
            game = slot.game
            player = game.to_move
            seat = slot.seats[player]
            if seat.observes:
                fill_observation(game.state, player, game.max_moves, self._obs[i], self.scratch)
                self._masks[i] = game.legal_mask()
                if isinstance(self.net, PriorNet):  # pool snapshots share the learner's shape
                    self._features.fill(game, self._masks[i], self._lookaheads[i])
            groups.setdefault(seat, []).append(i)
        actions = np.zeros(len(self.slots), dtype=np.int64)
        log_probs = np.zeros(len(self.slots), dtype=np.float32)
        for seat, indices in groups.items():
            net = seat.network(self.net, self.pool)
            if net is None:  # a seat that moves by itself, game by game
                for i in indices:
                    actions[i] = seat.act(i, self.slots[i].game)
                continue
            chosen, chosen_log_probs = self._sample(net, indices)
            actions[indices] = chosen
            log_probs[indices] = chosen_log_probs
        learner = [i for seat, indices in groups.items() if seat.learner for i in indices]
        return self._apply(actions, log_probs, learner)

    def _sample(self, net: PolicyValueNet, indices: list[int]) -> tuple[np.ndarray, np.ndarray]:
        obs = torch.from_numpy(self._obs[indices].reshape(-1, *OBSERVATION_SHAPE))
        mask = torch.from_numpy(self._masks[indices])
        lookahead = (
            torch.from_numpy(self._lookaheads[indices]) if isinstance(net, PriorNet) else None
        )
        was_training = net.training
        net.eval()
        logits, _ = masked_logits(net, obs, mask, lookahead)
        net.train(was_training)
        log_probs = torch.log_softmax(logits, dim=-1)
        chosen = sample_masked(logits, self.torch_generator)
        return chosen.numpy(), log_probs.gather(1, chosen[:, None]).squeeze(1).numpy()

    def _apply(
        self, actions: np.ndarray, log_probs: np.ndarray, learner_indices: list[int]
    ) -> list[Trajectory]:
        learner_set = set(learner_indices)
        ended: list[Trajectory] = []
        for i, slot in enumerate(self.slots):
            game = slot.game
            player = game.to_move
            if i in learner_set:
                # the learner's colour always has a trajectory (_new_slot)
                trajectory = typing.cast(Trajectory, slot.trajectories[player])
                trajectory.states.append(game.state.copy())
                trajectory.observations.append(self._obs[i].reshape(OBSERVATION_SHAPE).copy())
                trajectory.masks.append(self._masks[i].copy())
                if isinstance(self.net, PriorNet):
                    trajectory.lookaheads.append(self._lookaheads[i].copy())
                trajectory.actions.append(int(actions[i]))
                trajectory.log_probs.append(float(log_probs[i]))
                trajectory.potentials.append(
                    float(potential(game.state[:N_CELLS], 1 - 2 * player, self.scratch))
                )
                self.stats.learner_steps += 1
            game.play(int(actions[i]))
            self.stats.steps += 1
            if game.is_over:
                result = game.score()
                for color, segment in enumerate(slot.trajectories):
                    if segment is not None and len(segment):
                        segment.outcome = float(result.reward(color))
                        segment.done = True
                        ended.append(segment)
                self.stats.games += 1
                self.stats.game_lengths.append(game.moves)
                self.stats.truncated += game.truncated
                self.slots[i] = self._new_slot()
        return ended
