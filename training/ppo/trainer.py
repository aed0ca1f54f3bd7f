"""The PPO learner: self-play generation -> PPO update, in the shared run loop
([`Trainer`][training.common.run.Trainer]: folder, checkpoints, resume, evaluation, reports).

One iteration (an *update*) collects `ppo.steps_per_update` learner decisions from the
generators (games in flight are cut and bootstrapped) and takes `ppo.epochs` passes of
clipped PPO over them; every `selfplay.snapshot_every` updates a frozen copy of the learner
joins the opponent pool. Self-play runs in a `GeneratorPool` (training/distributed):
`distributed.workers` generators, each playing its share of `selfplay.envs` games, in this
process or as Ray actors; the learner gives them its weights and the opponent pool before
each update and takes their segments in worker order, so for one worker count every backend
gives the same run.
"""

from __future__ import annotations

import copy
import functools
import random
from dataclasses import dataclass
from pathlib import Path

import torch

from ..common.checkpoint import CheckpointError, check_weights, load_weights
from ..common.learner import Player
from ..common.network import PolicyValueNet
from ..common.policy_agent import PolicyAgent
from ..common.run import Trainer
from ..common.run_state import Counters
from ..distributed.generator import GeneratorFactory
from .config import PPOConfig
from .prior import network_from_shape, policy_agent
from .selfplay import make_generator
from .update import build_batch, ppo_update

LEARNER = "learner"


@dataclass
class PPOCounters(Counters):
    steps: int = 0  # learner transitions trained on
    env_steps: int = 0  # all actions played in training games


def policy_player(net: PolicyValueNet) -> PolicyAgent:
    """The learner's policy as an evaluation agent (its most likely legal action)."""
    return policy_agent(net, spec=LEARNER)


class PPOTrainer(Trainer):
    """PPO self-play (see the module docstring and [`Trainer`][training.common.run.Trainer])."""

    Counters = PPOCounters
    counters: PPOCounters
    UNIT = "learner steps"
    ITERATION = "update"
    config: PPOConfig

    def setup(self) -> None:
        config = self.config
        # Every random stream is seeded before anything draws from it, the network's initial
        # weights included: the same config gives the same run.
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        model = config.model
        self.net = network_from_shape(
            {"channels": model.channels, "blocks": model.blocks, "lookahead": model.lookahead}
        )
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.ppo.learning_rate)
        self.update_generator = torch.Generator().manual_seed(config.seed + 1)
        self.snapshots: list[dict] = []  # the opponent pool: past learners' state dicts
        self.snapshots_added = 0
        self._mean_game_length: float | None = None  # of the last update's finished games

    @property
    def progress(self) -> int:
        return self.counters.steps

    def generator_factory(self) -> GeneratorFactory:
        return functools.partial(
            make_generator, self.config.selfplay, self.net.shape, self.config.distributed.workers
        )

    def add_snapshot(self) -> None:
        """A frozen copy of the learner joins the opponent pool (the oldest beyond
        selfplay.pool_size leave it)."""
        self.snapshots.append({k: v.detach().clone() for k, v in self.net.state_dict().items()})
        del self.snapshots[: -self.config.selfplay.pool_size]
        self.snapshots_added += 1

    def weights(self) -> dict:
        """What the generators play with (see SelfPlayGenerator.set_weights)."""
        return {
            "model": self.net.state_dict(),
            "pool": self.snapshots,
            "pool_version": self.snapshots_added,
        }

    def players(self, final: bool) -> list[Player]:
        return [Player("", policy_player, network_from_shape)]

    # ------------------------------------------------------------------ checkpoints

    def learner_payload(self) -> dict:
        return {
            "pool": [copy.copy(s) for s in self.snapshots],
            "snapshots_added": self.snapshots_added,
            "rng": {
                "update_torch": self.update_generator.get_state(),
                "torch": torch.get_rng_state(),
                "python": random.getstate(),
            },
        }

    def restore_learner(self, payload: dict, path: Path) -> None:
        snapshots = []
        for weights in payload["pool"]:
            check_weights(weights, path, "pool")
            net = load_weights(network_from_shape(self.net.shape), weights, path, "pool")
            snapshots.append(net.state_dict())
        self.snapshots = snapshots[-self.config.selfplay.pool_size :]
        self.snapshots_added = payload.get("snapshots_added", len(self.snapshots))
        if type(self.snapshots_added) is not int or self.snapshots_added < len(self.snapshots):
            raise CheckpointError(
                f"checkpoint {str(path)!r}: snapshots_added must be an int "
                f">= the pool size, got {self.snapshots_added!r}"[:300]
            )
        rng = payload["rng"]
        self.update_generator.set_state(rng["update_torch"])
        torch.set_rng_state(rng["torch"])
        random.setstate(rng["python"])

    # ------------------------------------------------------------------ one update

    def iterate(self) -> dict[str, float]:
        """Collect one batch of self-play and do one PPO update."""
        generators = self.generators
        generators.set_weights(self.weights(), self.counters.iterations)
        # Batched inference on a small net gains nothing from a second thread, and threads
        # that spin-wait on a busy machine slow generation down many times over.
        torch.set_num_threads(1)
        batches = generators.generate(self.config.ppo.steps_per_update)
        torch.set_num_threads(self.config.threads)
        trajectories = [segment for batch in batches for segment in batch.samples]
        played = {
            key: sum(batch.counters[key] for batch in batches)
            for key in ("env_steps", "games", "game_moves")
        }
        if played["games"]:
            self._mean_game_length = played["game_moves"] / played["games"]
        batch = build_batch(self.net, trajectories, self.config.ppo, self.config.selfplay.shaping)
        if self.config.ppo.anneal_lr:
            remaining = max(0.0, 1.0 - self.counters.steps / self.config.total_steps)
            for group in self.optimizer.param_groups:
                group["lr"] = self.config.ppo.learning_rate * max(remaining, 0.02)
        losses = ppo_update(self.net, self.optimizer, batch, self.config.ppo, self.update_generator)
        self.counters.iterations += 1
        self.counters.steps += len(batch)
        self.counters.env_steps += played["env_steps"]
        self.counters.games += played["games"]
        if self.counters.iterations % self.config.selfplay.snapshot_every == 0:
            self.add_snapshot()
        return losses

    # ------------------------------------------------------------------ reporting

    def status(self, losses: dict[str, float]) -> str:
        return f"entropy {losses['entropy']:.2f}"

    def throughput(self) -> dict[str, float]:
        seconds = max(self.counters.seconds, 1e-9)
        return {
            "env_steps_per_s": self.counters.env_steps / seconds,
            "learner_steps_per_s": self.counters.steps / seconds,
            "games_per_s": self.counters.games / seconds,
        }

    def describe_throughput(self) -> str:
        rates = self.throughput()
        return f"{rates['env_steps_per_s']:.0f} env steps/s, {rates['games_per_s']:.2f} games/s"

    def log_scalars(self) -> dict[str, float]:
        scalars = {"selfplay/pool_size": float(len(self.snapshots))}
        if self._mean_game_length is not None:
            scalars["selfplay/mean_game_length"] = self._mean_game_length
        return scalars


__all__ = ["LEARNER", "PPOCounters", "PPOTrainer"]
