"""AlphaZero self-play as a `training.distributed.Generator`, so that a `GeneratorPool` runs it
(in this process, or as Ray actors on a cluster).

`AZGenerator` wraps one `SelfPlay` (its share of `search.games` in flight) and a network of the
run's shape whose weights the learner sends (`set_weights(state_dict, version)`).
`generate(n)` searches `n` more positions and returns the positions of the games that ended
meanwhile: exactly the arguments `SelfPlay` gave the replay buffer's `add`, by name
(`Collector`), so the learner's `ReplayBuffer.add(**batch.samples)` stores what
`SelfPlay.play(n, evaluate, buffer)` would have stored, whatever target fields `add` takes
(today states, actions, policy, value, policy_weight and ownership). Games still in flight stay
in the generator and are delivered, once, by the call in which they end.

The counters of a batch are the deltas of `SelfPlay.stats` over the call (every number in it:
positions, full_searches, games, red_wins, blue_wins, draws, and any added later), the search's
network `evaluations`, and `lengths`, the lengths of the games that ended; `add_batches`
adds them to the learner's own `SelfPlayStats`.

Evaluation games during a run on Ray are spread over the same actors (`match_on_pool`): the
learner's agent is built again in each actor around its generator's network, the opponent from
its spec, and every game is a pure function of its index (the arena reseeds both agents at each
game), so the result is the one `arena.match` gives in the learner's process.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from satellites_env.arena import PairResult, play_pairing_game

from ..common.network import PolicyValueNet
from ..distributed.generator import SampleBatch, split
from ..distributed.pool import GeneratorPool
from .agent import AZAgent, AZPolicyAgent
from .config import AZConfig
from .network import Evaluator, resolve_device
from .replay import ReplayBuffer
from .selfplay import SelfPlay, SelfPlayStats


def build_selfplay(config: AZConfig, seed: int, games: int | None = None) -> SelfPlay:
    """The run's self-play with `games` of `search.games` in flight (default: all of them)."""
    search = config.search if games is None else dataclasses.replace(config.search, games=games)
    return SelfPlay(search, seed, config.replay.cheap_value_targets, config.replay.value_mix,
                    config.replay.cheap_policy_weight, config.replay.td_lambda,
                    capped_value=config.replay.capped_value,
                    surprise_weight=config.replay.surprise_weight)


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


def make_generator(config: AZConfig, shape: dict, workers: int, worker: int,
                   seed: int) -> "AZGenerator":
    """Generator `worker` of `workers` (the pool's factory, with functools.partial): its share
    of `search.games` in flight, a network of `shape` on `generator_device(config.device)`
    (weights come by `set_weights`)."""
    with torch.random.fork_rng(devices=[]):  # building a net draws from torch's global RNG
        net = PolicyValueNet(**shape).to(generator_device(config.device))
    return AZGenerator(build_selfplay(config, seed, split(config.search.games, workers)[worker]),
                       net, dagger_iterations(config))


def dagger_iterations(config: AZConfig) -> int | None:
    """The first iteration whose new games get no dagger colour (`search.dagger_until` of the
    run's iterations, rounded up); None when dagger games may start throughout."""
    if config.search.dagger_until >= 1.0:
        return None
    iterations = config.total_positions / config.positions_per_iteration
    return math.ceil(config.search.dagger_until * iterations)


class Collector:
    """Stands in for the replay buffer during `SelfPlay.play`: keeps each call of `add`, its
    arguments named as `add` names them (positional ones too), and hands them back as one set
    of arrays in the order added (`samples()`, ready for `ReplayBuffer.add(**samples)`)."""

    def __init__(self, add: Callable = ReplayBuffer.add):
        self._signature = inspect.signature(add)
        self._calls: list[dict[str, Any]] = []

    def add(self, *args, **kwargs) -> None:
        bound = self._signature.bind(None, *args, **kwargs)  # None: the buffer's `self`
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(self._signature.parameters)))
        if self._calls and set(arguments) != set(self._calls[0]):
            raise ValueError(f"self-play passed add() the fields {sorted(arguments)} after "
                             f"{sorted(self._calls[0])}: one batch needs the same ones")
        self._calls.append(arguments)

    def samples(self) -> dict[str, np.ndarray]:
        """{field: the calls' arrays concatenated}; {} when nothing was added."""
        if not self._calls:
            return {}
        return {name: np.concatenate([np.asarray(call[name]) for call in self._calls])
                for name in self._calls[0]}


def _numbers(selfplay: SelfPlay) -> dict[str, int]:
    stats = selfplay.stats
    numbers = {f.name: getattr(stats, f.name) for f in dataclasses.fields(stats)
               if isinstance(getattr(stats, f.name), (int, float))}
    numbers["evaluations"] = selfplay.search.evaluations
    return numbers


class AZGenerator:
    """One `SelfPlay` and its network behind the Generator interface (module docstring)."""

    def __init__(self, selfplay: SelfPlay, net: PolicyValueNet,
                 dagger_until: int | None = None):
        self.selfplay = selfplay
        self.net = net.eval()
        self.version = -1  # of the weights given by set_weights: the learner's iteration
        self.dagger_until = dagger_until  # first iteration without new dagger games (None: never)

    def set_weights(self, weights: dict, version: int) -> None:
        """`weights`: the learner network's state dict; `version`: its iteration count."""
        self.net.load_state_dict(weights)
        self._set_version(version)

    def _set_version(self, version: int) -> None:
        self.version = version
        late = self.dagger_until is not None and version >= self.dagger_until
        self.selfplay.dagger_share = 0.0 if late else self.selfplay.config.dagger

    def generate(self, n: int) -> SampleBatch:
        """Search `n` more positions; the positions of the games that ended, with counters."""
        before = _numbers(self.selfplay)
        collector = Collector()
        added = self.selfplay.play(n, Evaluator(self.net), collector) if n > 0 else 0
        counters = {key: value - before[key] for key, value in _numbers(self.selfplay).items()}
        lengths = self.selfplay.stats.lengths
        counters["lengths"] = list(lengths)[len(lengths) - min(counters["games"], len(lengths)):]
        return SampleBatch(collector.samples(), added, counters, self.version)

    def state(self) -> dict:
        return {"rng": self.selfplay.rng.bit_generator.state, "version": self.version}

    def restore(self, state: dict) -> None:
        """The random stream, and the iteration, so that the games the pool restarts before the
        next weights arrive follow the dagger schedule (older checkpoints hold no version)."""
        self.selfplay.rng.bit_generator.state = state["rng"]
        self._set_version(state.get("version", -1))  # checked by check_states

    def restart_games(self) -> None:
        self.selfplay.restart_games()


def add_batches(batches: list[SampleBatch], buffer: ReplayBuffer,
                stats: SelfPlayStats) -> dict[str, int]:
    """Put the batches' positions into `buffer` (in the order given: worker order) and their
    counters into `stats`; returns the counters summed, with `samples` (positions added)."""
    played: dict[str, int] = {"samples": 0}
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


def check_states(states: Any, path: str | Path) -> list[dict] | None:
    """Generator states read from a checkpoint (None: fresh from the seed), checked here so
    that a damaged one fails in the learner rather than later inside an actor."""
    from training.common.checkpoint import CheckpointError

    if states is None:
        return None
    try:
        if not isinstance(states, list) or not states:
            raise TypeError("not a list")
        for state in states:
            np.random.default_rng().bit_generator.state = state["rng"]
            version = state.get("version", -1)  # absent in checkpoints before dagger_until
            if not isinstance(version, int) or isinstance(version, bool) or version < -1:
                raise ValueError(f"version {version!r} is not an iteration count")
    except (TypeError, KeyError, ValueError, OverflowError) as error:
        raise CheckpointError(f"checkpoint {str(path)!r}: generators must be a list of "
                              f"random-stream states with their weights' version ({type(error).__name__}: "
                              f"{str(error)[:100]})") from None
    return states


# ---------------------------------------------------------------------- evaluation on the actors

@dataclasses.dataclass(frozen=True)
class PlayerSpec:
    """What an actor needs to build the learner's evaluation agent around its own network."""

    spec: str  # the agent's name in the results (PairResult.a)
    simulations: int = 0  # 0: the raw policy (AZPolicyAgent); else AZAgent's search
    settings: Any = None  # AZAgent's search settings (AZSearchConfig)

    @classmethod
    def of(cls, agent) -> "PlayerSpec | None":
        """The spec of the learner's agent; None for an agent not built on the network."""
        if isinstance(agent, AZPolicyAgent):
            return cls(agent.spec)
        if isinstance(agent, AZAgent):
            return cls(agent.spec, agent.simulations, agent.settings)
        return None

    def build(self, net: PolicyValueNet):
        if not self.simulations:
            return AZPolicyAgent(net, spec=self.spec)
        agent = AZAgent(net, self.simulations, settings=self.settings)
        agent.spec = self.spec
        return agent


def play_match_games(generator: AZGenerator, player: PlayerSpec, opponent: str,
                     games: list[int], seed: int, max_moves: int) -> list:
    """Games `games` of the pairing `player` (on the generator's network, with the weights last
    broadcast) against `opponent`, as `arena.match` plays them; [(game index, record)]."""
    from satellites_env.agents import make_agent

    # reseeded at every game: the seed it is built with plays no part
    a, b = player.build(generator.net), make_agent(opponent, seed=0)
    return [(i, play_pairing_game(a, b, i, seed, max_moves)) for i in games]


def match_on_pool(pool: GeneratorPool, weights: dict, version: int, a, b, games: int,
                  seed: int, max_moves: int, on_record=None) -> PairResult | None:
    """`arena.match(a, b, games, seed, max_moves, on_record)` with the games spread over the
    pool's generators, which get `weights` first; None when `a` is not an agent of the
    learner's network (the caller then plays the match itself)."""
    player = PlayerSpec.of(a)
    if player is None:
        return None
    pool.set_weights(weights, version)
    shares = [list(range(k, games, pool.workers)) for k in range(pool.workers)]
    played = pool.run(play_match_games, [(player, b.spec, share, seed, max_moves)
                                         for share in shares])
    result = PairResult(a.spec, b.spec)
    for i, record in sorted((pair for part in played for pair in part), key=lambda p: p[0]):
        result.add(record, a_is_red=i % 2 == 0)
        if on_record is not None:
            on_record(i, record)
    return result

