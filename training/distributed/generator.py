"""The generator interface: what a learner's self-play offers so a `GeneratorPool` can run it.

A *generator* plays games with the weights it was last given and hands back finished samples.
The pool runs K of them (in this process, or as Ray actors on a cluster), broadcasts the
learner's weights to all, and collects each batch exactly once. The pool never looks inside
the samples: what a sample is belongs to the learner.

PPO (`training.ppo.selfplay.SelfPlayGenerator`) implements it: a sample is one learner
decision; `SampleBatch.samples` is a list of `Trajectory` segments (whole games, or games in
flight cut and bootstrapped), `count` the decisions in them.

An AlphaZero generator (phase 2) wraps `training.alphazero.selfplay.SelfPlay` the same way:

* ``__init__`` (through the factory): ``SelfPlay(config.search with games = this worker's
  share, seed, cheap_value_targets)`` plus the network it evaluates with (built from the
  checkpoint's shape) and an `Evaluator` over it;
* ``set_weights(weights, version)``: load ``weights`` (the learner's ``state_dict``) into that
  network;
* ``generate(n)``: ``SelfPlay.play(n, evaluate, buffer)`` into a *local, empty*
  ``ReplayBuffer`` (capacity >= the positions of the games that can end meanwhile), then return
  ``SampleBatch(samples={"states", "actions", "policy", "value", "policy_weight"}`` (the
  buffer's filled arrays, in the order added, i.e. finished games' positions only),
  ``count`` = positions added, ``counters`` = ``{"positions": searched moves,
  "full_searches", "games", "red_wins", "blue_wins", "draws", "game_moves"}`` (deltas of
  `SelfPlayStats` over the call)). The learner adds the arrays to its own replay buffer with
  ``ReplayBuffer.add(...)``: games still in flight stay in the generator and are delivered by
  a later call, so no position is sent twice;
* ``state()`` / ``restore(state)``: ``{"rng": self.rng.bit_generator.state}``;
* ``restart_games()``: ``SelfPlay.restart_games()``.

Rules every generator keeps, so the pool can promise "delivered once or dropped":

* ``generate(n)`` returns only *finished* samples, never one it returned before: what it keeps
  for later (games in flight) is not in the batch;
* it is deterministic for its seed and the sequence of ``set_weights``/``generate`` calls, so a
  run with ``backend: local`` is exactly reproducible, and so is a Ray run without faults;
* weights, samples, counters and states are plain data (tensors, numpy arrays, numbers,
  lists, dicts): they travel through Ray's object store and into checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

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
    count: int  # samples in `samples`: what `generate(n)` counts toward n
    counters: dict[str, int] = field(default_factory=dict)  # additive: env_steps, games, ...
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
        """Play until at least `n` finished samples are ready; return them with counters."""

    def state(self) -> dict:
        """The random streams (plain data) that `restore` sets again: for checkpoints."""

    def restore(self, state: dict) -> None:
        """Set the random streams saved by `state()`."""

    def restart_games(self) -> None:
        """Drop the games in flight (after `restore`, or when a run resumes)."""


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
