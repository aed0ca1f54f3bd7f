"""A training run: self-play generation -> PPO updates -> evaluation, with checkpoints.

Everything a run writes lives in its folder:

    checkpoint.pt        latest state (weights, optimizer, config, counters, RNG, pool, history)
    final.pt             the policy at the end (loads as `checkpoint:PATH`)
    config.json          the settings the run started with (never rewritten)
    config_changes.json  settings changed by later `--resume` sessions (old -> new, at which step)
    run.lock             held by the process training in the folder (one at a time)
    tensorboard/         losses, entropy, win rates, Elo, throughput, a sample game per evaluation
    learning_curve.png   win rates and Elo against the baselines over training
    summary.json         final evaluation and throughput

Guarantees:

* Reproducible: the same config (same seed, same `threads`) gives the same weights, bit for
  bit; the network is built after every random stream is seeded.
* A checkpoint is always a consistent state: the state at the end of a completed update (and
  its evaluation). Ctrl-C mid-update saves the last completed state, not the half-done one, so
  it loses only the unfinished update; `--resume` continues from it with the same counters
  and random streams (games in flight are not saved: fresh ones start).
* `--resume` accepts only settings that are safe to change mid-run (RESUMABLE_KEYS: extend
  `total_steps`, evaluation cadence and size, checkpoint cadence, threads, and every
  `distributed` key: backend, address, workers, resources) and records each change; any other
  difference is an error listing the keys. With the same `distributed.workers` the resumed run
  continues each generator's random stream; with another count the generators start fresh
  streams (derived from the seed and the update), so the run is valid but not the one an
  uninterrupted run would have given.
* Self-play runs in a `GeneratorPool` (training/distributed): `distributed.workers`
  generators, each playing its share of `selfplay.envs` games, in this process
  (`backend: local`) or as Ray actors (`backend: ray`). The learner gives them its weights
  and the opponent pool before each update and takes their finished segments in worker order,
  so for one worker count both backends give the same run.
* A finished run is not trained again: opening it reports its final evaluation.
"""

from __future__ import annotations

import copy
import datetime
import functools
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

from ..common.checkpoint import (CheckpointError, PolicyAgent, check_counters,
                                 check_optimizer_state, check_results, check_weights,
                                 load_checkpoint, network_from_checkpoint, network_from_weights,
                                 restoring, save_checkpoint, saved_config)
from ..common.config import TrainConfig, config_from_dict
from ..common.network import PolicyValueNet
from ..common.runlock import RunLock
from ..common.tensorboard import log_game
from ..distributed.pool import GeneratorPool, PoolOwner, log_pool, open_pool
from .update import build_batch, ppo_update
from .selfplay import make_generator, play_match_games

LEARNER = "learner"
#: settings `--resume` may change: they extend or re-pace a run without changing what it learns
#: from so far (a longer `total_steps` also stretches an annealed learning rate from here on)
RESUMABLE_KEYS = ("total_steps", "threads", "checkpoint_every", "eval.every", "eval.games",
                  "eval.final_games", "distributed.backend", "distributed.address",
                  "distributed.workers", "distributed.cpus_per_worker",
                  "distributed.gpus_per_worker", "distributed.timeout",
                  "distributed.max_replacements")
#: seconds between progress lines when the console is not a terminal (a log file)
PROGRESS_SECONDS = 30.0


class RunError(ValueError):
    """A run folder that cannot be used as asked (wrong config, nothing to resume, ...)."""


class RunExistsError(RunError, FileExistsError):
    """The run folder holds an unfinished run and `--resume` was not given."""


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
    final: bool = False  # the end-of-run evaluation (final_games per opponent)

    def win_rate(self, opponent: str) -> float:
        r = self.results[opponent]
        return r["a_wins"] / r["games"]


class Trainer(PoolOwner):
    """One run in one folder. `Trainer(config, run_dir)` starts a new run (an error if the
    folder holds an unfinished one); `resume=True` continues the folder's run. Opening a
    finished run, with or without `resume`, restores it with `finished` set: `report()` shows
    its result and `run()` returns it without training (unless `resume` raised total_steps)."""

    def __init__(self, config: TrainConfig, run_dir: str | Path, resume: bool = False,
                 console: Console | None = None):
        self.config = config
        self.run_dir = Path(run_dir)
        self.console = console or Console()
        torch.set_num_threads(config.threads)
        # Every random stream is seeded before anything draws from it, the network's
        # initial weights included: the same config gives the same run.
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        self.counters = Counters()
        self.history: list[Evaluation] = []
        self.finished = False
        self.sample_game = None  # the last evaluation's sample game (a GameRecord)
        self.config_changes: list[dict] = []
        self.new_changes: dict[str, list] = {}  # changes accepted when this session resumed
        self.net = PolicyValueNet(config.model.channels, config.model.blocks,
                                  config.model.lookahead)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.ppo.learning_rate)
        self.update_generator = torch.Generator().manual_seed(config.seed + 1)
        self.snapshots: list[dict] = []  # the opponent pool: past learners' state dicts
        self.snapshots_added = 0
        # The generators start on first use (a finished run that is only reported starts
        # none); until then their states are these (None: fresh from the seed).
        self._pool: GeneratorPool | None = None
        self._generator_states: list[dict] | None = None
        self._mean_game_length: float | None = None  # of the last update's finished games
        self.resumed = False
        if self.checkpoint_path.exists() or resume:
            if not self.checkpoint_path.exists():
                raise RunError(f"--resume: there is no run to continue in {self.run_dir} (no "
                               f"{self.checkpoint_path.name}); leave out --resume to start one")
            payload = load_checkpoint(self.checkpoint_path)
            finished = payload.get("finished") is True
            if not resume and not finished:
                raise RunExistsError(
                    f"{self.run_dir} holds an unfinished run ({self._steps_of(payload)}): pass "
                    f"--resume to continue it, or choose another --out folder")
            self._restore(payload, self.checkpoint_path, resume)
            self.resumed = True
        self._consistent = self._snapshot()

    @property
    def checkpoint_path(self) -> Path:
        return self.run_dir / "checkpoint.pt"

    def _open_pool(self) -> GeneratorPool:
        factory = functools.partial(make_generator, self.config.selfplay, self.net.shape,
                                    self.config.distributed.workers)
        return open_pool(factory, self.config.distributed, self.config.seed,
                         self._generator_states, self.counters.updates)

    def add_snapshot(self) -> None:
        """A frozen copy of the learner joins the opponent pool (the oldest beyond
        selfplay.pool_size leave it)."""
        self.snapshots.append(_clone(self.net.state_dict()))
        del self.snapshots[:-self.config.selfplay.pool_size]
        self.snapshots_added += 1

    def weights(self) -> dict:
        """What the generators play with (see SelfPlayGenerator.set_weights)."""
        return {"model": self.net.state_dict(), "pool": self.snapshots,
                "pool_version": self.snapshots_added}

    @staticmethod
    def _steps_of(payload: dict) -> str:
        counters = payload.get("counters")
        config = payload.get("config")
        if isinstance(counters, dict) and isinstance(config, dict):
            done, total = counters.get("steps"), config.get("total_steps")
            if type(done) is int and type(total) is int:
                return f"{done:,} of {total:,} learner steps"
        return "unknown progress"

    # ------------------------------------------------------------------ checkpoints

    def state_payload(self) -> dict:
        """The whole state of the run now: tensors and plain data only."""
        return {
            "model": self.net.state_dict(),
            "model_shape": self.net.shape,
            "optimizer": self.optimizer.state_dict(),
            "config": self.config.to_dict(),
            "config_changes": copy.deepcopy(self.config_changes),
            "finished": self.finished,
            "counters": vars(self.counters).copy(),
            "history": [copy.deepcopy(vars(e)) for e in self.history],
            "pool": list(self.snapshots),
            "snapshots_added": self.snapshots_added,
            # one per generator, in worker order; None: not started yet (fresh from the seed)
            "generators": self.generator_states(),
            "rng": {"update_torch": self.update_generator.get_state(),
                    "torch": torch.get_rng_state(), "python": random.getstate()},
        }

    def _snapshot(self) -> dict:
        """A frozen copy of `state_payload()`: later training does not change it."""
        return _clone(self.state_payload())

    def save(self, path: Path | None = None) -> Path:
        """Save the current state (call it between updates: it is not a snapshot)."""
        return save_checkpoint(path or self.checkpoint_path, self.state_payload())

    def _restore(self, payload: dict, path: Path, resume: bool) -> None:
        saved = saved_config(payload, path,
                             functools.partial(config_from_dict, check_agents=False))
        changes = config_differences(saved, self.config)
        fixed = {key: change for key, change in changes.items() if key not in RESUMABLE_KEYS}
        # Where self-play runs is not what the run learns: opening a run on Ray (or off it)
        # needs no --resume; the change is still recorded when the run trains on.
        if not resume and all(key.startswith("distributed.") for key in changes):
            changes = {}
        if fixed or (changes and not resume):
            listed = "; ".join(f"{key}: {old!r} -> {new!r}" for key, (old, new) in
                               (fixed or changes).items())
            if fixed:
                advice = (f"only {', '.join(RESUMABLE_KEYS)} may change when resuming; restore "
                          f"the others or train into another --out folder")
            else:
                advice = "pass --resume to apply these changes to the run"
            raise RunError(f"the config differs from the run in {self.run_dir} ({listed}); "
                           f"{advice}")
        with restoring(path):
            self._restore_state(payload, path)
        if changes:
            self.new_changes = {key: list(change) for key, change in changes.items()}
            self.config_changes.append({
                "step": self.counters.steps, "updates": self.counters.updates,
                "time": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "changes": {key: list(change) for key, change in changes.items()}})
        if self.finished and self.counters.steps < self.config.total_steps:
            self.finished = False  # extended by --resume: train on, then evaluate again

    def _restore_state(self, payload: dict, path: Path) -> None:
        self.net.load_state_dict(network_from_checkpoint(payload, path).state_dict())
        check_optimizer_state(payload["optimizer"], [
            p for group in self.optimizer.param_groups for p in group["params"]])
        self.optimizer.load_state_dict(payload["optimizer"])
        for group in self.optimizer.param_groups:  # never the checkpoint's own idea of lr
            if not (isinstance(group.get("lr"), float) and group["lr"] >= 0):
                raise CheckpointError(f"checkpoint {str(path)!r}: optimizer lr is "
                                      f"{group.get('lr')!r}")
        counters = payload["counters"]
        if not isinstance(counters, dict):
            raise TypeError("counters must be a mapping")
        self.counters = Counters(**counters)
        check_counters(vars(self.counters))
        self.history = [_evaluation_from(e) for e in payload["history"]]
        self.finished = payload.get("finished", False) is True
        changes = payload.get("config_changes", [])
        if not isinstance(changes, list):
            raise TypeError("config_changes must be a list")
        self.config_changes = copy.deepcopy(changes)
        for weights in payload["pool"]:
            check_weights(weights, path, "pool")
            self.snapshots.append(network_from_weights(self.net.shape, weights, path,
                                                       "pool").state_dict())
        del self.snapshots[:-self.config.selfplay.pool_size]
        self.snapshots_added = payload.get("snapshots_added", len(self.snapshots))
        if type(self.snapshots_added) is not int or self.snapshots_added < len(self.snapshots):
            raise CheckpointError(f"checkpoint {str(path)!r}: snapshots_added must be an int "
                                  f">= the pool size, got {self.snapshots_added!r}")
        rng = payload["rng"]
        states = payload.get("generators")
        if "selfplay" in rng:  # written before the generators were a pool: one generator
            states = [{"rng": rng["selfplay"], "torch": rng["selfplay_torch"]}]
        if states is not None:
            if not (isinstance(states, list) and all(
                    isinstance(state, dict) and isinstance(state.get("rng"), dict)
                    and isinstance(state.get("torch"), torch.Tensor) for state in states)):
                raise CheckpointError(f"checkpoint {str(path)!r}: generators must be a list "
                                      f"of random-stream states")
            for state in states:  # a bad state fails here, not later inside an actor
                np.random.default_rng().bit_generator.state = state["rng"]
                torch.Generator().set_state(state["torch"])
        self._generator_states = states
        self.update_generator.set_state(rng["update_torch"])
        torch.set_rng_state(rng["torch"])
        random.setstate(rng["python"])

    # ------------------------------------------------------------------ the loop

    def train_update(self) -> dict[str, float]:
        """Collect one batch of self-play and do one PPO update."""
        generators = self.generators
        generators.set_weights(self.weights(), self.counters.updates)
        # Batched inference on a small net gains nothing from a second thread, and threads
        # that spin-wait on a busy machine slow generation down many times over.
        torch.set_num_threads(1)
        batches = generators.generate(self.config.ppo.steps_per_update)
        torch.set_num_threads(self.config.threads)
        trajectories = [segment for batch in batches for segment in batch.samples]
        played = {key: sum(batch.counters[key] for batch in batches)
                  for key in ("env_steps", "games", "game_moves")}
        if played["games"]:
            self._mean_game_length = played["game_moves"] / played["games"]
        batch = build_batch(self.net, trajectories, self.config.ppo, self.config.selfplay.shaping)
        if self.config.ppo.anneal_lr:
            remaining = max(0.0, 1.0 - self.counters.steps / self.config.total_steps)
            for group in self.optimizer.param_groups:
                group["lr"] = self.config.ppo.learning_rate * max(remaining, 0.02)
        losses = ppo_update(self.net, self.optimizer, batch, self.config.ppo,
                            self.update_generator)
        self.counters.updates += 1
        self.counters.steps += len(batch)
        self.counters.env_steps += played["env_steps"]
        self.counters.games += played["games"]
        if self.counters.updates % self.config.selfplay.snapshot_every == 0:
            self.add_snapshot()
        return losses

    def evaluate(self, games: int, final: bool = False) -> Evaluation:
        """The learner (most likely action) against each evaluation opponent. The first game
        against the last opponent (the learner is red) is kept in `sample_game`."""
        self.net.eval()
        learner = PolicyAgent(self.net, spec=LEARNER)
        evaluation = Evaluation(self.counters.steps, final=final)
        pairs = []
        opponents = self.config.eval.opponents
        seed, max_moves = 10_000 + self.config.seed, self.config.eval.max_moves

        def keep_sample(i: int, record) -> None:
            if i == 0:
                self.sample_game = record

        for k, spec in enumerate(opponents):
            on_record = keep_sample if k == len(opponents) - 1 else None
            if self.config.distributed.backend == "ray":
                result = self._match_on_generators(spec, self.config.seed + k, games, on_record)
            else:
                opponent = make_agent(spec, seed=self.config.seed + k)
                result = match(learner, opponent, games, seed=seed, max_moves=max_moves,
                               on_record=on_record)
            evaluation.results[spec] = result.as_dict()
            pairs.append(result)
        if "random" not in self.config.eval.opponents:
            pairs.append(PairResult(LEARNER, "random"))
        evaluation.elo = fit_elo([LEARNER] + [p.b for p in pairs], pairs)[LEARNER]
        return evaluation

    def _match_on_generators(self, opponent: str, opponent_seed: int, games: int,
                             on_record=None) -> PairResult:
        """`match(learner, opponent, games, on_record=...)` with the games spread over the
        generators' actors (each game is a pure function of its index: the same result)."""
        pool = self.generators
        pool.set_weights(self.weights(), self.counters.updates)
        shares = [list(range(k, games, pool.workers)) for k in range(pool.workers)]
        played = pool.run(play_match_games, [
            (opponent, opponent_seed, share, 10_000 + self.config.seed,
             self.config.eval.max_moves) for share in shares])
        result = PairResult(LEARNER, opponent)
        for i, record in sorted((pair for part in played for pair in part), key=lambda p: p[0]):
            result.add(record, a_is_red=i % 2 == 0)
            if on_record is not None:
                on_record(i, record)
        return result

    def run(self) -> Evaluation:
        """Train to total_steps, evaluate at the end and save everything; returns the final
        evaluation. A finished run returns its final evaluation at once."""
        with RunLock(self.run_dir):
            if self.finished:
                return self.final_evaluation()
            try:
                return self._run()
            finally:
                self.close()

    def _run(self) -> Evaluation:
        config = self.config
        _ = self.generators  # start them (join Ray) before anything is written: fail early
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not self.resumed or not (self.run_dir / "config.json").exists():
            (self.run_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=1))
        if self.config_changes:
            (self.run_dir / "config_changes.json").write_text(
                json.dumps(self.config_changes, indent=1))
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(self.run_dir / "tensorboard", purge_step=self.counters.steps)
        columns = (TextColumn("[bold]training"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TimeRemainingColumn())
        session_start = time.perf_counter()
        session_steps = self.counters.steps
        log_lines = not self.console.is_terminal  # a log file: plain lines, no progress bar
        last_line = time.monotonic()
        self._consistent = self._snapshot()
        try:
            with Progress(*columns, console=self.console, disable=log_lines) as progress:
                task = progress.add_task("train", total=config.total_steps,
                                         completed=self.counters.steps, status="")
                while self.counters.steps < config.total_steps:
                    tick = time.perf_counter()
                    losses = self.train_update()
                    self.counters.seconds += time.perf_counter() - tick
                    self._log(writer, losses)
                    status = f"entropy {losses['entropy']:.2f}"
                    evaluated = self.counters.updates % config.eval.every == 0
                    if evaluated:
                        evaluation = self.evaluate(config.eval.games)
                        self.history.append(evaluation)
                        self._log_evaluation(writer, evaluation)
                        status += "  " + _rates(evaluation)
                    progress.update(task, completed=min(self.counters.steps, config.total_steps),
                                    status=status)
                    # The update (and its evaluation) is complete: this is the state that a
                    # checkpoint, or Ctrl-C from here to the end of the next update, saves.
                    self._consistent = self._snapshot()
                    if self.counters.updates % config.checkpoint_every == 0:
                        save_checkpoint(self.checkpoint_path, self._consistent)
                    if log_lines and (evaluated or self.counters.steps >= config.total_steps
                                      or time.monotonic() - last_line >= PROGRESS_SECONDS):
                        self.console.print(self._progress_line(losses), highlight=False)
                        last_line = time.monotonic()
        except KeyboardInterrupt:
            save_checkpoint(self.checkpoint_path, self._consistent)
            done = self._consistent["counters"]
            self.console.print(
                f"interrupted: saved the state after update {done['updates']} ({done['steps']:,} "
                f"learner steps) to {self.checkpoint_path}; continue with --resume")
            raise
        finally:
            writer.close()
        save_checkpoint(self.checkpoint_path, self._consistent)
        self.console.print("final evaluation ...")
        try:
            final = self.evaluate(config.eval.final_games, final=True)
            self.history.append(final)
            self.finished = True
            self._consistent = self._snapshot()
            # final.pt first: a checkpoint marked finished always has its final.pt beside it
            save_checkpoint(self.run_dir / "final.pt", self._consistent)
            save_checkpoint(self.checkpoint_path, self._consistent)
        except KeyboardInterrupt:
            save_checkpoint(self.checkpoint_path, self._consistent)
            self.console.print(f"interrupted: saved {self.checkpoint_path}; continue with "
                               f"--resume")
            raise
        session_seconds = time.perf_counter() - session_start
        self._write_summary(final, self.counters.steps - session_steps, session_seconds)
        self._plot()
        return final

    def final_evaluation(self) -> Evaluation:
        """The final evaluation of a finished run."""
        finals = [e for e in self.history if e.final] or self.history[-1:]
        if not self.finished or not finals:
            raise RunError(f"the run in {self.run_dir} is not finished")
        return finals[-1]

    def report(self) -> Evaluation:
        """Print a finished run's final table (writing final.pt, summary.json and the learning
        curve again if they are missing) and return its final evaluation."""
        final = self.final_evaluation()
        if not (self.run_dir / "final.pt").is_file():
            save_checkpoint(self.run_dir / "final.pt", self._consistent)
        self._write_summary(final, 0, 0.0, write=not (self.run_dir / "summary.json").is_file())
        if not (self.run_dir / "learning_curve.png").is_file():
            self._plot()
        return final

    def _progress_line(self, losses: dict[str, float]) -> str:
        c, total = self.counters, self.config.total_steps
        rates = self.throughput()
        line = (f"update {c.updates}: {c.steps:,}/{total:,} learner steps "
                f"({min(c.steps / total, 1):.0%}), {c.games:,} games, "
                f"{rates['env_steps_per_s']:.0f} env steps/s, {c.seconds / 60:.1f} min, "
                f"entropy {losses['entropy']:.2f}")
        if self.history:
            line += f"; eval at {self.history[-1].step:,}: {_rates(self.history[-1])}"
        return line

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
        if self._mean_game_length is not None:
            writer.add_scalar("selfplay/mean_game_length", self._mean_game_length, step)
        writer.add_scalar("selfplay/pool_size", len(self.snapshots), step)
        log_pool(writer, self._pool, step)

    def _log_evaluation(self, writer, evaluation: Evaluation) -> None:
        for opponent in evaluation.results:
            writer.add_scalar(f"eval/win_rate_vs_{opponent}", evaluation.win_rate(opponent),
                              evaluation.step)
        writer.add_scalar("eval/elo", evaluation.elo, evaluation.step)
        if self.sample_game is not None:  # how the learner plays now, as an animation
            log_game(writer, f"eval/game_vs_{self.config.eval.opponents[-1]}", self.sample_game,
                     evaluation.step)

    def _write_summary(self, final: Evaluation, session_steps: int, session_seconds: float,
                       write: bool = True) -> None:
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
        if not write:
            return
        summary = {"final": vars(final), "counters": vars(self.counters),
                   "throughput": rates, "session": {
                       "learner_steps": session_steps, "seconds": session_seconds,
                       # batches delivered, dropped with a dead actor, refused; actors replaced
                       "generators": vars(self._pool.stats) if self._pool else None},
                   "config": self.config.to_dict(), "config_changes": self.config_changes}
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


def _evaluation_from(data) -> Evaluation:
    """An Evaluation from its checkpoint dict, checked (TypeError/ValueError when damaged)."""
    evaluation = Evaluation(**data)
    if type(evaluation.step) is not int or type(evaluation.elo) not in (int, float):
        raise TypeError(f"evaluation step/elo of the wrong type: {data!r}"[:200])
    check_results(evaluation.results)
    return evaluation


def _rates(evaluation: Evaluation) -> str:
    return "  ".join(f"{o} {evaluation.win_rate(o):.0%}" for o in evaluation.results)


def _clone(value):
    """A deep copy in which tensors are cloned (state dicts share storage with the model)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return type(value)((key, _clone(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(item) for item in value)
    return copy.deepcopy(value)


def _flatten(data: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def config_differences(old: TrainConfig, new: TrainConfig) -> dict[str, tuple]:
    """{dotted key: (old value, new value)} for every setting that differs."""
    before, after = _flatten(old.to_dict()), _flatten(new.to_dict())
    return {key: (before[key], after[key]) for key in before if before[key] != after[key]}
