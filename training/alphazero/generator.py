"""AlphaZero self-play as a `training.distributed.Generator`, so that a `GeneratorPool` runs it
(in this process, or as Ray actors on a cluster).

`AZGenerator` wraps one `SelfPlay` (its share of `search.games` in flight) and a network of the
run's shape whose weights the learner sends (`set_weights({"model": state_dict}, version)`).
`generate(n)` searches `n` more positions and returns the positions of the games that ended
meanwhile: exactly the arguments `SelfPlay` gave the replay buffer's `add`, by name
(`Collector`), so the learner's `ReplayBuffer.add(**batch.samples)` stores what
`SelfPlay.play(n, evaluate, buffer)` would have stored, whatever target fields `add` takes
(states, actions, policy, value and policy_weight). Games still in flight stay in the
generator and are delivered, once, by the call in which they end; `state()` holds them
(`inflight`), so a checkpoint's run goes on with them.

The counters of a batch are the deltas of `SelfPlay.stats` over the call (every number in it:
positions, full_searches, games, red_wins, blue_wins, draws, and any added later), the search's
network `evaluations`, and `lengths`, the lengths of the games that ended; `add_batches` adds
them up (the numbers into the learner's own `SelfPlayStats`).

Evaluation games during a run on Ray are spread over the same actors
(`training.common.evaluation.play_match_games`, which builds the learner's agent around the
generator's `net`).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..common.network import BatchedInference, PolicyValueNet, resolve_device
from ..distributed.generator import SampleBatch, split
from .config import AZConfig
from .replay import ReplayBuffer
from .selfplay import SelfPlay, SelfPlayStats


def build_selfplay(config: AZConfig, seed: int, games: int | None = None) -> SelfPlay:
    """The run's self-play with `games` of `search.games` in flight (default: all of them)."""
    search = config.search if games is None else dataclasses.replace(config.search, games=games)
    return SelfPlay(search, seed)


def cpu_weights(net: torch.nn.Module) -> dict:
    """The network's state dict on the CPU: what checkpoints hold and generators are sent (a
    Ray actor without a GPU could not load CUDA tensors)."""
    return {k: v.detach().cpu() for k, v in net.state_dict().items()}


def generator_device(name: str) -> torch.device:
    """Where a generator's network runs: the config's `device` where this process has it (the
    learner's own, or a Ray actor given GPUs by `gpus_per_worker`), else the CPU."""
    if name == "cpu" or not torch.cuda.is_available():
        return torch.device("cpu")
    return resolve_device(name)


def make_generator(
    config: AZConfig, shape: dict, workers: int, worker: int, seed: int
) -> AZGenerator:
    """Generator `worker` of `workers` (the pool's factory, with functools.partial): its share
    of `search.games` in flight, a network of `shape` on `generator_device(config.device)`
    (weights come by `set_weights`)."""
    with torch.random.fork_rng(devices=[]):  # building a net draws from torch's global RNG
        net = PolicyValueNet(**shape).to(generator_device(config.device))
    return AZGenerator(
        build_selfplay(config, seed, split(config.search.games, workers)[worker]), net
    )


class Collector:
    """Stands in for the replay buffer during `SelfPlay.play`: keeps each call of `add`, its
    arguments named as `add` names them (positional ones too), and hands them back as one set
    of arrays in the order added (`samples()`, ready for `ReplayBuffer.add(**samples)`)."""

    def __init__(self, add: Callable = ReplayBuffer.add):
        self._signature = inspect.signature(add)
        self._calls: list[dict[str, Any]] = []

    def add(self, *args: Any, **kwargs: Any) -> None:
        bound = self._signature.bind(None, *args, **kwargs)  # None: the buffer's `self`
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(self._signature.parameters)))
        if self._calls and set(arguments) != set(self._calls[0]):
            raise ValueError(
                f"self-play passed add() the fields {sorted(arguments)} after "
                f"{sorted(self._calls[0])}: one batch needs the same ones"
            )
        self._calls.append(arguments)

    def samples(self) -> dict[str, np.ndarray]:
        """{field: the calls' arrays concatenated}; {} when nothing was added."""
        if not self._calls:
            return {}
        return {
            name: np.concatenate([np.asarray(call[name]) for call in self._calls])
            for name in self._calls[0]
        }


def _numbers(selfplay: SelfPlay) -> dict[str, int]:
    stats = selfplay.stats
    numbers = {
        f.name: getattr(stats, f.name)
        for f in dataclasses.fields(stats)
        if isinstance(getattr(stats, f.name), (int, float))
    }
    numbers["evaluations"] = selfplay.search.evaluations
    return numbers


class AZGenerator:
    """One `SelfPlay` and its network behind the Generator interface (module docstring)."""

    def __init__(self, selfplay: SelfPlay, net: PolicyValueNet):
        self.selfplay = selfplay
        self.net = net.eval()
        self.version = -1  # of the weights given by set_weights: the learner's iteration

    def set_weights(self, weights: dict, version: int) -> None:
        """`weights`: {"model": the learner network's state dict}; `version`: the learner's
        iteration count."""
        self.net.load_state_dict(weights["model"])
        self.version = version

    def generate(self, n: int) -> SampleBatch:
        """Search `n` more positions; the positions of the games that ended, with counters."""
        before = _numbers(self.selfplay)
        collector = Collector()
        added = self.selfplay.play(n, BatchedInference(self.net), collector) if n > 0 else 0
        counters: dict[str, Any] = {
            key: value - before[key] for key, value in _numbers(self.selfplay).items()
        }
        lengths = self.selfplay.stats.lengths
        counters["lengths"] = list(lengths)[len(lengths) - min(counters["games"], len(lengths)) :]
        return SampleBatch(collector.samples(), added, counters, self.version)

    def state(self) -> dict:
        """The random stream and the games in flight (`SelfPlay.games_state`; not with an
        opponent, whose games restart on `restore`)."""
        state: dict[str, Any] = {"rng": self.selfplay.rng.bit_generator.state}
        if self.selfplay.saves_games:
            state["games"] = self.selfplay.games_state()
        return state

    def restore(self, state: dict) -> None:
        """The random stream and the games in flight `state()` saved; fresh games where it
        holds none (an older checkpoint, or a run with an opponent)."""
        games = state.get("games")
        if games is not None:
            self.selfplay.restore_games(games)  # checked before anything changes
        self.selfplay.rng.bit_generator.state = state["rng"]
        if games is None:
            self.selfplay.restart_games()

    def restart_games(self) -> None:
        self.selfplay.restart_games()


def add_batches(
    batches: list[SampleBatch], buffer: ReplayBuffer, stats: SelfPlayStats
) -> dict[str, Any]:
    """Put the batches' positions into `buffer` (in the order given: worker order) and their
    counters into `stats`; returns the counters summed, with `samples` (positions added)."""
    played: dict[str, Any] = {"samples": 0}
    for batch in batches:
        if batch.count:
            buffer.add(**batch.samples)
        played["samples"] += batch.count
        for key, value in batch.counters.items():
            if key == "lengths":
                stats.lengths.extend(value)
                continue
            played[key] = played.get(key, 0) + value
            if hasattr(stats, key):
                setattr(stats, key, getattr(stats, key) + value)
    return played
