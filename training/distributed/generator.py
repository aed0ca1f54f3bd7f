"""The generator interface: what a learner's self-play offers so a `GeneratorPool` can run it.

A *generator* plays games with the weights it was last given and hands back finished samples.
The pool runs K of them (in this process, or as Ray actors on a cluster), broadcasts the
learner's weights to all, and collects each batch exactly once. The pool never looks inside
the samples: what a sample is belongs to the learner.

PPO (`training.ppo.selfplay.SelfPlayGenerator`) implements it: a sample is one learner
decision; `SampleBatch.samples` is a list of `Trajectory` segments (whole games, or games in
flight cut and bootstrapped), `count` the decisions in them.

AlphaZero (`training.alphazero.generator.AZGenerator`) implements it with no change to the
pool: it wraps `training.alphazero.selfplay.SelfPlay` with this worker's share of
``search.games`` (``split(games, workers)[worker]``) and a network whose weights come by
``set_weights(state_dict, version)``; a sample is one searched position of a game that ended
during the call: ``SampleBatch.samples`` is a dict of the arrays `SelfPlay` gave the replay
buffer's ``add`` (states, actions, policy, value, policy_weight: whatever ``add``
takes, by name), concatenated in the order added, so that the learner's
``ReplayBuffer.add(**samples)``, batch after batch in worker order, stores what one
``SelfPlay.play(n, evaluate, buffer)`` would; ``count`` is the positions in it; ``counters``
are the deltas of ``SelfPlay.stats`` (positions, full_searches, games, red_wins, blue_wins,
draws), the search's ``evaluations``, and ``lengths`` (a list: the lengths of the games that
ended). Games still in flight stay in the generator and are delivered, once, by the call in
which they end; ``state()`` is ``{"rng": selfplay.rng.bit_generator.state, "games": the games
in flight}`` (`training.alphazero.inflight`; no ``games`` with an opponent), so a resumed run
plays on as the uninterrupted one. PPO's ``state()`` holds its random streams alone: its
games in flight restart on resume.

Rules every generator keeps, so the pool can promise "delivered once or dropped":

* ``generate(n)`` returns only samples that are ready (finished games, or PPO's cut segments),
  never one it returned before: what it keeps for later (games in flight) is not in the batch;
* it is deterministic for its seed and the sequence of ``set_weights``/``generate`` calls, so a
  run with ``backend: local`` is exactly reproducible, and so is a Ray run without faults;
* weights, samples, counters and states are plain data (tensors, numpy arrays, numbers,
  lists, dicts): they travel through Ray's object store and into checkpoints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass
class SampleBatch:
    """Finished samples from one `generate(n)` call of one generator.

    `worker`, `incarnation` and `sequence` are set by the pool's worker wrapper: slot `worker`
    of the pool, its `incarnation`-th actor (0 the first, +1 each replacement), and the batch's
    number within that actor (0, 1, ...). The pool accepts each (worker, incarnation, sequence)
    once and in order.
    """

    samples: Any  # the learner's own format (PPO: list[Trajectory])
    count: int  # samples in `samples` (PPO: decisions, >= n; AlphaZero: finished positions)
    counters: dict[str, Any] = field(default_factory=dict)  # additive: env_steps, games, ...
    # (numbers; AlphaZero's `lengths` is a list of game lengths, added by concatenation)
    version: int = -1  # version of the weights the samples were played with
    worker: int = -1
    incarnation: int = 0
    sequence: int = -1

    @property
    def tag(self) -> tuple[int, int, int]:
        return self.worker, self.incarnation, self.sequence


@runtime_checkable
class Generator(Protocol):
    """Self-play of one learner that a `GeneratorPool` can run (see the module docstring)."""

    def set_weights(self, weights: Any, version: int) -> None:
        """Play with these weights from now on (the learner's payload, e.g. a state dict)."""

    def generate(self, n: int) -> SampleBatch:
        """Play `n` units of the learner's work and return the samples finished meanwhile,
        with counters. PPO: until >= n decisions, all delivered (games in flight are cut);
        AlphaZero: n searched positions, delivering the positions of the games that ended."""

    def state(self) -> dict:
        """What `restore` sets again, as plain data (for checkpoints): the random streams, and
        the games in flight where the generator can save them."""

    def restore(self, state: dict) -> None:
        """Set the state saved by `state()`; a generator whose state holds no games in flight
        starts fresh games."""

    def restart_games(self) -> None:
        """Drop the games in flight: fresh games start."""


#: builds generator `worker` (of the pool's `workers`) with `seed`; must be picklable
#: (a module-level function or a functools.partial of one) to reach Ray actors
GeneratorFactory = Callable[[int, int], Generator]


def worker_seed(seed: int, worker: int, incarnation: int = 0) -> int:
    """The seed of a pool slot: `seed` itself for worker 0's first actor (so one local worker
    plays exactly the single-generator run), else a stream derived from all three numbers."""
    if worker == 0 and incarnation == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), worker, incarnation]).generate_state(1)[0])


def split(total: int, parts: int) -> list[int]:
    """`total` split into `parts` near-equal shares, larger ones first (sum == total)."""
    return [total // parts + (k < total % parts) for k in range(parts)]
