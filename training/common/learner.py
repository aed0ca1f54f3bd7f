"""What a learner plugs into a training run (its generation and update, state and evaluation
players: `Player`), and the run's state that the run's parts (evaluation, reporting, the loop)
share."""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from satellites_env.agents import Agent, make_agent
from satellites_env.arena import play_pairing_game
from satellites_env.placement import Placement
from satellites_env.record import GameRecord

from .config import Config
from .network import PolicyValueNet
from .run_state import Counters as RunCounters
from .run_state import Evaluation

if TYPE_CHECKING:
    import torch

    from ..distributed.generator import GeneratorFactory
    from ..distributed.pool import GeneratorPool

#: games of a pairing, as the evaluations play them: [(game index, record)]
Games = list[tuple[int, GameRecord]]


@dataclass(frozen=True)
class Player:
    """One of the learner's agents in an evaluation. `key` prefixes its results (`""`: the
    policy itself); `build(net)` makes it around a network; `network(shape)` is a blank
    network of a shape; `batched(net, opponent, games, seed, max_moves)`, where given, plays
    many games at once (each as `arena.play_pairing_game` would). All picklable: they reach
    Ray actors and evaluation processes."""

    key: str
    build: Callable[[PolicyValueNet], Agent]
    network: Callable[[dict[str, Any]], PolicyValueNet]
    batched: Callable[[PolicyValueNet, str, list[int], int, int], Games] | None = None

    def play(
        self,
        net: PolicyValueNet,
        opponent: str,
        opponent_seed: int,
        games: list[int],
        seed: int,
        max_moves: int,
    ) -> Games:
        """Games `games` of the pairing (this player, `opponent`): [(index, record)]."""
        if self.batched is not None:
            return self.batched(net, opponent, games, seed, max_moves)
        a, b = self.build(net), make_agent(opponent, seed=opponent_seed)
        return [(i, play_pairing_game(a, b, i, seed, max_moves)) for i in games]


class Learner(abc.ABC):
    """The learner's part of a [`Trainer`][training.common.run.Trainer]. A learner sets
    `Counters` (a [`Counters`][training.common.run_state.Counters] dataclass), `UNIT` (what
    its progress counts) and `ITERATION` (what one iteration is called), and implements
    `setup`, `iterate`, `progress`, `players`, `learner_payload`, `restore_learner`, `weights`
    and `generator_factory`."""

    Counters: type = RunCounters
    UNIT = "steps"
    ITERATION = "iteration"

    # the run's state (the Trainer sets it)
    config: Config
    run_dir: Path
    console: Console
    counters: RunCounters
    history: list[Evaluation]
    config_changes: list[dict]  # settings changed by `--resume` sessions (config_changes.json)
    # the last evaluation's first game against its last opponent (TensorBoard shows it)
    sample_game: GameRecord | None
    net: PolicyValueNet
    optimizer: torch.optim.Optimizer
    # what the run is doing, for the progress bar's status (the loop shows it)
    doing: Callable[[str], None]
    placement: Placement  # where this session's self-play runs (--ray or the config's)
    _pool: GeneratorPool | None  # self-play, started on first use

    @abc.abstractmethod
    def setup(self) -> None:
        """Seed the random streams, build the network, optimizer and learner state."""

    @abc.abstractmethod
    def iterate(self) -> dict[str, float]:
        """One iteration (generation and update); returns its losses and diagnostics."""

    @property
    @abc.abstractmethod
    def progress(self) -> int:
        """The run's progress in the unit of `config.total`."""

    @abc.abstractmethod
    def players(self, final: bool) -> list[Player]:
        """The learner's agents to evaluate: the policy first (key ""), then, at the end
        (`final`), others."""

    @abc.abstractmethod
    def learner_payload(self) -> dict:
        """The learner's own state for the checkpoint (tensors and plain data)."""

    @abc.abstractmethod
    def restore_learner(self, payload: dict, path: Path) -> None:
        """Restore `learner_payload`'s state, each field checked (any damage raises)."""

    @abc.abstractmethod
    def weights(self) -> Any:
        """What the generators play with (GeneratorPool.set_weights)."""

    @abc.abstractmethod
    def generator_factory(self) -> GeneratorFactory:
        """What builds one of this learner's self-play generators in a worker (picklable: it
        travels to processes and Ray actors)."""

    def evaluates_first(self) -> bool:
        """Whether the run is evaluated once before its first iteration (a learner from a
        trained network: its curve starts where the network started)."""
        return False

    def flush(self) -> None:  # noqa: B027 (an optional hook: no-op)
        """Work left when the run reaches its length (AlphaZero's overlapped last steps)."""

    def status(self, losses: dict[str, float]) -> str:
        """A short status for the progress bar."""
        return ""

    def log_scalars(self) -> dict[str, float]:
        """The learner's TensorBoard scalars after an iteration (beside losses/throughput)."""
        return {}

    def throughput(self) -> dict[str, float]:
        seconds = max(self.counters.seconds, 1e-9)
        return {
            f"{self.UNIT.replace(' ', '_')}_per_s": self.progress / seconds,
            "games_per_s": self.counters.games / seconds,
        }

    def describe_throughput(self) -> str:
        rates = self.throughput()
        return (
            f"{rates[f'{self.UNIT.replace(chr(32), chr(95))}_per_s']:.0f} {self.UNIT}/s, "
            f"{rates['games_per_s']:.2f} games/s"
        )
