"""A training run: self-play generation -> PPO updates -> evaluation, with checkpoints.

Everything a run writes lives in its folder:

    checkpoint.pt        latest state (weights, optimizer, config, counters, RNG, pool, history)
    final.pt             the policy at the end (loads as `checkpoint:PATH`)
    tensorboard/         losses, entropy, win rates, Elo, throughput
    learning_curve.png   win rates and Elo against the baselines over training
    summary.json         final evaluation and throughput

Ctrl-C (or a crash after the last checkpoint) loses only the unfinished update: `--resume`
continues from `checkpoint.pt` with the same counters and random streams.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.table import Table

from satellites_env.agents import make_agent
from satellites_env.arena import PairResult, fit_elo, match, rate_with_interval

from ..common.checkpoint import (PolicyAgent, load_checkpoint, network_from_checkpoint,
                         save_checkpoint)
from ..common.config import TrainConfig, config_from_dict
from ..common.network import PolicyValueNet
from .update import build_batch, ppo_update
from .selfplay import SelfPlayGenerator

LEARNER = "learner"


@dataclass
class Counters:
    updates: int = 0
    steps: int = 0  # learner transitions trained on
    env_steps: int = 0  # all actions played in training games
    games: int = 0
    seconds: float = 0.0  # training wall time, summed over sessions


@dataclass
class Evaluation:
    """Win rates of the learner against each opponent at one point of training."""

    step: int
    results: dict[str, dict] = field(default_factory=dict)  # opponent -> PairResult dict
    elo: float = 0.0

    def win_rate(self, opponent: str) -> float:
        r = self.results[opponent]
        return r["a_wins"] / r["games"]


class Trainer:
    def __init__(self, config: TrainConfig, run_dir: str | Path, resume: bool = False,
                 console: Console | None = None):
        self.config = config
        self.run_dir = Path(run_dir)
        self.console = console or Console()
        torch.set_num_threads(config.threads)
        self.counters = Counters()
        self.history: list[Evaluation] = []
        self.net = PolicyValueNet(config.model.channels, config.model.blocks,
                                  config.model.lookahead)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.ppo.learning_rate)
        self.update_generator = torch.Generator().manual_seed(config.seed + 1)
        self.generator = SelfPlayGenerator(config.selfplay, self.net, config.seed)
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        if resume:
            self._restore(self.checkpoint_path)
        elif self.checkpoint_path.exists():
            raise FileExistsError(f"{self.checkpoint_path} exists: pass --resume to continue "
                                  f"that run, or choose another --out folder")

    @property
    def checkpoint_path(self) -> Path:
        return self.run_dir / "checkpoint.pt"

    # ------------------------------------------------------------------ checkpoints

    def state_payload(self) -> dict:
        return {
            "model": self.net.state_dict(),
            "model_shape": self.net.shape,
            "optimizer": self.optimizer.state_dict(),
            "config": self.config.to_dict(),
            "counters": vars(self.counters).copy(),
            "history": [vars(e) for e in self.history],
            "pool": [snapshot.state_dict() for snapshot in self.generator.pool],
            "rng": {"selfplay": self.generator.rng.bit_generator.state,
                    "selfplay_torch": self.generator.torch_generator.get_state(),
                    "update_torch": self.update_generator.get_state(),
                    "torch": torch.get_rng_state(), "python": random.getstate()},
        }

    def save(self, path: Path | None = None) -> Path:
        return save_checkpoint(path or self.checkpoint_path, self.state_payload())

    def _restore(self, path: Path) -> None:
        payload = load_checkpoint(path)
        saved = config_from_dict(payload["config"])
        if saved.model != self.config.model:
            raise ValueError(f"--resume: the config's model {self.config.model} differs from "
                             f"the checkpoint's {saved.model}")
        self.net.load_state_dict(network_from_checkpoint(payload, path).state_dict())
        self.optimizer.load_state_dict(payload["optimizer"])
        self.counters = Counters(**payload["counters"])
        self.history = [Evaluation(**e) for e in payload["history"]]
        for weights in payload["pool"]:
            snapshot = PolicyValueNet(**self.net.shape)
            snapshot.load_state_dict(weights)
            self.generator.add_snapshot(snapshot)
        rng = payload["rng"]
        self.generator.rng.bit_generator.state = rng["selfplay"]
        self.generator.torch_generator.set_state(rng["selfplay_torch"])
        self.update_generator.set_state(rng["update_torch"])
        torch.set_rng_state(rng["torch"])
        random.setstate(rng["python"])
        # Games in flight are not saved: fresh ones start from the restored generator.
        self.generator.restart_games()

    # ------------------------------------------------------------------ the loop

    def train_update(self) -> dict[str, float]:
        """Collect one batch of self-play and do one PPO update."""
        stats = self.generator.stats
        before_env, before_games = stats.steps, stats.games
        # Batched inference on a small net gains nothing from a second thread, and threads
        # that spin-wait on a busy machine slow generation down many times over.
        torch.set_num_threads(1)
        trajectories = self.generator.collect(self.config.ppo.steps_per_update)
        torch.set_num_threads(self.config.threads)
        batch = build_batch(self.net, trajectories, self.config.ppo, self.config.selfplay.shaping)
        if self.config.ppo.anneal_lr:
            remaining = max(0.0, 1.0 - self.counters.steps / self.config.total_steps)
            for group in self.optimizer.param_groups:
                group["lr"] = self.config.ppo.learning_rate * max(remaining, 0.02)
        losses = ppo_update(self.net, self.optimizer, batch, self.config.ppo,
                            self.update_generator)
        self.counters.updates += 1
        self.counters.steps += len(batch)
        self.counters.env_steps += stats.steps - before_env
        self.counters.games += stats.games - before_games
        if self.counters.updates % self.config.selfplay.snapshot_every == 0:
            self.generator.add_snapshot(self.net)
        return losses

    def evaluate(self, games: int) -> Evaluation:
        """The learner (most likely action) against each evaluation opponent."""
        self.net.eval()
        learner = PolicyAgent(self.net, spec=LEARNER)
        evaluation = Evaluation(self.counters.steps)
        pairs = []
        for k, spec in enumerate(self.config.eval.opponents):
            opponent = make_agent(spec, seed=self.config.seed + k)
            result = match(learner, opponent, games, seed=10_000 + self.config.seed,
                           max_moves=self.config.eval.max_moves)
            evaluation.results[spec] = result.as_dict()
            pairs.append(result)
        if "random" not in self.config.eval.opponents:
            pairs.append(PairResult(LEARNER, "random"))
        evaluation.elo = fit_elo([LEARNER] + [p.b for p in pairs], pairs)[LEARNER]
        return evaluation

    def run(self) -> Evaluation:
        config = self.config
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=1))
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(self.run_dir / "tensorboard", purge_step=self.counters.steps)
        columns = (TextColumn("[bold]training"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TimeRemainingColumn())
        session_start = time.perf_counter()
        session_steps = self.counters.steps
        try:
            with Progress(*columns, console=self.console) as progress:
                task = progress.add_task("train", total=config.total_steps,
                                         completed=self.counters.steps, status="")
                while self.counters.steps < config.total_steps:
                    tick = time.perf_counter()
                    losses = self.train_update()
                    self.counters.seconds += time.perf_counter() - tick
                    self._log(writer, losses)
                    status = f"entropy {losses['entropy']:.2f}"
                    if self.counters.updates % config.eval.every == 0:
                        evaluation = self.evaluate(config.eval.games)
                        self.history.append(evaluation)
                        self._log_evaluation(writer, evaluation)
                        status += "  " + "  ".join(
                            f"{o} {evaluation.win_rate(o):.0%}" for o in evaluation.results)
                    progress.update(task, completed=min(self.counters.steps, config.total_steps),
                                    status=status)
                    if self.counters.updates % config.checkpoint_every == 0:
                        self.save()
        except KeyboardInterrupt:
            self.save()
            self.console.print(f"interrupted: saved {self.checkpoint_path}; continue with "
                               f"--resume")
            raise
        finally:
            writer.close()
        self.save()
        self.console.print("final evaluation ...")
        final = self.evaluate(config.eval.final_games)
        self.history.append(final)
        self.save()
        self.save(self.run_dir / "final.pt")
        session_seconds = time.perf_counter() - session_start
        self._write_summary(final, self.counters.steps - session_steps, session_seconds)
        self._plot()
        return final

    # ------------------------------------------------------------------ reporting

    def throughput(self) -> dict[str, float]:
        seconds = max(self.counters.seconds, 1e-9)
        return {"env_steps_per_s": self.counters.env_steps / seconds,
                "learner_steps_per_s": self.counters.steps / seconds,
                "games_per_s": self.counters.games / seconds}

    def _log(self, writer, losses: dict[str, float]) -> None:
        step = self.counters.steps
        for key, value in losses.items():
            writer.add_scalar(f"loss/{key}", value, step)
        for key, value in self.throughput().items():
            writer.add_scalar(f"throughput/{key}", value, step)
        lengths = self.generator.stats.game_lengths[-200:]
        if lengths:
            writer.add_scalar("selfplay/mean_game_length", float(np.mean(lengths)), step)
        writer.add_scalar("selfplay/pool_size", len(self.generator.pool), step)

    def _log_evaluation(self, writer, evaluation: Evaluation) -> None:
        for opponent in evaluation.results:
            writer.add_scalar(f"eval/win_rate_vs_{opponent}", evaluation.win_rate(opponent),
                              evaluation.step)
        writer.add_scalar("eval/elo", evaluation.elo, evaluation.step)

    def _write_summary(self, final: Evaluation, session_steps: int, session_seconds: float
                       ) -> None:
        table = Table(title=f"Final evaluation after {self.counters.steps:,} learner steps "
                            f"({self.counters.games:,} training games)")
        for column in ("opponent", "games", "wins", "draws", "losses", "win rate (95% CI)"):
            table.add_column(column, justify="left" if column == "opponent" else "right")
        for opponent, r in final.results.items():
            table.add_row(opponent, str(r["games"]), str(r["a_wins"]), str(r["draws"]),
                          str(r["b_wins"]), rate_with_interval(r["a_wins"], r["games"]))
        self.console.print(table)
        rates = self.throughput()
        self.console.print(
            f"Elo vs random = 0: {final.elo:+.0f}   self-play throughput: "
            f"{rates['env_steps_per_s']:.0f} env steps/s, {rates['games_per_s']:.2f} games/s "
            f"({self.counters.seconds / 60:.1f} min training)")
        summary = {"final": vars(final), "counters": vars(self.counters),
                   "throughput": rates, "session": {"learner_steps": session_steps,
                                                    "seconds": session_seconds}}
        (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=1))

    def _plot(self) -> Path | None:
        if not self.history:
            return None
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import EngFormatter

        figure, (rates_axis, elo_axis) = plt.subplots(1, 2, figsize=(11, 4))
        steps = [e.step for e in self.history]
        for opponent in self.config.eval.opponents:
            rates_axis.plot(steps, [e.win_rate(opponent) for e in self.history], marker="o",
                            label=f"vs {opponent}")
        rates_axis.set(xlabel="learner steps", ylabel="win rate", ylim=(-0.02, 1.02),
                       title="Win rate of the learner")
        rates_axis.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
        rates_axis.legend()
        elo_axis.plot(steps, [e.elo for e in self.history], marker="o", color="tab:purple")
        elo_axis.set(xlabel="learner steps", ylabel="Elo (random = 0)", title="Elo estimate")
        for axis in (rates_axis, elo_axis):
            axis.xaxis.set_major_formatter(EngFormatter(sep=""))
        figure.tight_layout()
        path = self.run_dir / "learning_curve.png"
        figure.savefig(path, dpi=110)
        plt.close(figure)
        return path
