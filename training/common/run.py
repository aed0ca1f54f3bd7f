"""The training run both learners share: one run in one folder, its loop with checkpoints and
resume. A learner subclasses [`Trainer`][training.common.run.Trainer] and plugs in its
generation and update ([`Learner.iterate`][training.common.learner.Learner.iterate]), its state
and its evaluation players ([`learner`][training.common.learner]); the run's other parts are
its folder ([`run_folder`][training.common.run_folder]), its saved state
([`run_state`][training.common.run_state]), its evaluations
([`evaluation`][training.common.evaluation]) and its reports
([`reporting`][training.common.reporting]).

Everything a run writes lives in its folder ([`run_folder`][training.common.run_folder]).

Guarantees:

* Reproducible: the same config (same seed, same `threads`, same worker count) gives the same
  weights, bit for bit, with any backend.
* A checkpoint is always a consistent state: the state at the end of an iteration. Ctrl-C
  lets the iteration under way finish, saves, and stops (exit 130); a second Ctrl-C stops at
  once and leaves the last checkpoint written. `--resume` continues with the same counters,
  random streams and, where the generators save them, games in flight (AlphaZero without an
  opponent: the uninterrupted run, bit for bit); other generators start fresh games.
* `--resume` accepts only settings that are safe to change mid-run (`Config.resumable`: the
  run's length, evaluation and checkpoint cadence, threads, the `distributed` keys) and records
  each change; any other difference is an error listing the keys.
* A finished run is not trained again: opening it reports its final evaluation.
* A run starts only in a new or empty folder, or its own (`run_folder`): nothing in any
  other folder is read or replaced.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.progress import TextColumn

from satellites_env.core.batch import configure_threads
from satellites_env.files import check_output, write_output
from satellites_env.placement import Placement
from satellites_env.terminal import printable, progress_bar

from ..distributed.pool import GeneratorPool, open_pool
from .checkpoint import (
    VERSION,
    check_counters,
    check_optimizer_state,
    load_checkpoint,
    load_weights,
    restoring,
    save_checkpoint,
)
from .config import Config
from .evaluation import FINAL_SHARE, Evaluating, EvaluationGames
from .interrupt import Interrupt
from .reporting import Reporting, rates
from .run_folder import OUTPUT_FILES, RunError, RunExistsError, check_run_folder, claim_run_folder
from .run_state import (
    Evaluation,
    accepted_changes,
    check_config_changes,
    check_files,
    check_generator_states,
    pinned_files,
    progress_of,
    saved_config,
)
from .runlock import RunLock

#: seconds between progress lines when the console is not a terminal (a log file)
PROGRESS_SECONDS = 30.0


class Trainer(Evaluating, Reporting):
    """One run in one folder. `Trainer(config, run_dir)` starts a new run (an error if the
    folder holds an unfinished one); `resume=True` continues the folder's run. Opening a
    finished run, with or without `resume`, restores it with `finished` set: `report()` shows
    its result and `run()` returns it without training (unless `resume` lengthened it).

    A learner subclasses it and implements its hooks ([`Learner`][
    training.common.learner.Learner]); the run's evaluations are [`Evaluating`][
    training.common.evaluation.Evaluating]'s, its reports [`Reporting`][
    training.common.reporting.Reporting]'s.

    Self-play runs in a `GeneratorPool` (training/distributed/pool.py) that the trainer holds:
    started on first use (a finished run that is only reported starts none) and stopped by
    `close()`, which keeps the workers' states (random streams, games in flight) for the next
    start. It runs at `placement` (default: where the config's `distributed:` section says): a
    session's own choice, which is not written into the run's config (`--ray`)."""

    def __init__(
        self,
        config: Config,
        run_dir: str | Path,
        resume: bool = False,
        console: Console | None = None,
        placement: Placement | None = None,
    ):
        self.placement = placement or Placement.of_config(config.distributed)
        config.check_placement(self.placement)
        self.config = config
        self.run_dir = Path(run_dir)
        check_run_folder(self.run_dir)  # a folder that is not a run's: refused, nothing read
        for name in OUTPUT_FILES:  # a link or special file in the folder: refused before work
            check_output(self.run_dir / name, "run file")
        self.console = console or Console()
        self.counters = self.Counters()
        self.history = []
        self.finished = False
        # the last evaluation's first game against its last opponent
        self.sample_game = None
        self.config_changes = []
        self.new_changes: dict[str, list] = {}  # changes accepted when this session resumed
        self._pool = None  # self-play, started by `generators`
        self._generator_states: list[dict] | None = None  # the workers' streams while none runs
        # where the evaluations' games run (its processes kept until `close`)
        self.games = EvaluationGames(self.placement, self._ray_pool)
        self.files = {}  # key -> sha256 of the network file it names
        self.doing = lambda text: None  # `_run` shows it on the progress bar
        torch.set_num_threads(config.threads)
        configure_threads()  # torch is imported: numba's idle threads may sleep
        self.setup()
        self.resumed = False
        if self.checkpoint_path.exists() or resume:
            if not self.checkpoint_path.exists():
                raise RunError(
                    f"--resume: there is no run to continue in {self.run_dir} (no "
                    f"{self.checkpoint_path.name}); leave out --resume to start one"
                )
            self._open(load_checkpoint(self.checkpoint_path), resume)
            self.resumed = True
        # the networks the config names, by content: a file changed since the run began is
        # another opponent, refused (on --resume and before each evaluation)
        self.files = pinned_files(config, self.files)

    # ------------------------------------------------------------------ checkpoints

    @property
    def checkpoint_path(self) -> Path:
        return self.run_dir / "checkpoint.pt"

    def state_payload(self, full: bool = True) -> dict:
        """The state of the run now, tensors and plain data only: whole (to resume), or
        without `full` the network and the record of the run alone (final.pt)."""
        payload: dict[str, Any] = {
            "learner": self.config.learner,
            "model": {k: v.detach().cpu() for k, v in self.net.state_dict().items()},
            "model_shape": self.net.shape,
            "config": self.config.to_dict(),
            "config_changes": copy.deepcopy(self.config_changes),
            "finished": self.finished,
            "counters": asdict(self.counters),
            "history": [asdict(e) for e in self.history],
            "files": dict(self.files),
        }
        if full:
            payload.update(
                optimizer=self.optimizer.state_dict(),
                # one per generator, in worker order; None: not started (fresh)
                generators=self.generator_states(),
                **self.learner_payload(),
            )
        return payload

    def save(self, path: Path | None = None) -> Path:
        """Save the current state to the checkpoint (call it between iterations), or the
        network and the record of the run to `path` (final.pt)."""
        claim_run_folder(self.run_dir)
        return save_checkpoint(path or self.checkpoint_path, self.state_payload(path is None))

    def _open(self, payload: dict, resume: bool) -> None:
        path = self.checkpoint_path
        if payload.get("version") != VERSION:
            raise RunError(
                f"{path} was written by an earlier version of satellites (checkpoint "
                f"format {payload.get('version')!r}): its network plays "
                f"(checkpoint:{path}), but the run cannot be resumed; train into "
                f"another --out folder"
            )
        finished = payload.get("finished") is True
        if not resume and not finished:
            raise RunExistsError(
                f"{self.run_dir} holds an unfinished run "
                f"({progress_of(payload, type(self.config).TOTAL, self.UNIT)}): pass "
                f"--resume to continue it, or choose another --out folder"
            )
        changes = accepted_changes(
            self._saved_config(payload, path), self.config, self.run_dir, resume
        )
        with restoring(path):
            self._restore(payload, path)
        if changes:
            self.new_changes = {key: list(change) for key, change in sorted(changes.items())}
            self.config_changes.append(
                {
                    "progress": self.progress,
                    "iterations": self.counters.iterations,
                    "time": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                    "changes": self.new_changes,
                }
            )
        if self.finished and not self.trained_enough:
            self.finished = False  # lengthened by --resume: train on, then evaluate again

    def _saved_config(self, payload: dict, path: Path) -> Config:
        """The run's config as the checkpoint saved it."""
        return saved_config(payload, self.config, self.run_dir, path)

    def _restore(self, payload: dict, path: Path) -> None:
        counters = payload["counters"]
        if not isinstance(counters, dict):
            raise TypeError("counters must be a mapping")
        counters = self.Counters(**counters)
        floats = tuple(f.name for f in dataclasses.fields(counters) if f.type in ("float", float))
        check_counters(asdict(counters), floats=floats)
        history = [Evaluation.checked(e) for e in payload["history"]]
        changes = check_config_changes(payload.get("config_changes", []))
        if type(payload.get("finished", False)) is not bool:
            raise TypeError("finished must be true or false")
        load_weights(self.net, payload["model"], path)
        self.restore_learner(payload, path)
        check_optimizer_state(
            payload["optimizer"],
            [p for group in self.optimizer.param_groups for p in group["params"]],
        )
        learning_rates = [group["lr"] for group in self.optimizer.param_groups]
        self.optimizer.load_state_dict(payload["optimizer"])
        for group, lr in zip(self.optimizer.param_groups, learning_rates, strict=False):
            group["lr"] = lr  # the config's step size (or the learner's schedule), not the file's
        files = check_files(payload.get("files", {}))
        self.counters, self.history = counters, history
        self.files = files
        self.config_changes = copy.deepcopy(changes)
        self.finished = payload.get("finished", False)
        self._generator_states = check_generator_states(payload.get("generators"), path)

    # ------------------------------------------------------------------ self-play

    def _open_pool(self) -> GeneratorPool:
        """A new pool for this learner's self-play, continuing `_generator_states`: None for
        fresh streams, else a checkpoint's."""
        return open_pool(
            self.generator_factory(),
            self.placement,
            self.config.distributed,
            self.config.seed,
            self._generator_states,
            self.counters.iterations,
        )

    @property
    def generators(self) -> GeneratorPool:
        """The self-play generators (started on first use, restored from the checkpoint)."""
        if self._pool is None:
            self._pool = self._open_pool()
        return self._pool

    def generator_states(self) -> list[dict] | None:
        """Each worker's state (random streams, and games in flight where it saves them), in
        worker order (None: not started, fresh)."""
        return self._pool.states() if self._pool is not None else self._generator_states

    def _ray_pool(self) -> GeneratorPool:
        """The generators, holding the learner's weights now (evaluation games on Ray)."""
        pool = self.generators
        pool.set_weights(self.weights(), self.counters.iterations)
        return pool

    def close(self) -> None:
        """Stop the generators (Ray actors) and the evaluation processes; the next use starts
        them again, the generators from their current states."""
        if self._pool is not None:
            self._generator_states = self._pool.states()
            self._pool.close()
            self._pool = None
        self.games.close()

    # ------------------------------------------------------------------ the loop

    def run(self) -> Evaluation:
        """Train to the config's length, evaluate at the end and save everything; returns the
        final evaluation. A finished run returns its final evaluation at once."""
        claim_run_folder(self.run_dir)
        with RunLock(self.run_dir):
            if self.finished:
                return self.final_evaluation()
            try:
                _ = self.generators  # start them (join Ray) before anything is written
                return self._run()
            finally:
                self.close()

    @property
    def trained_enough(self) -> bool:
        """Whether the run has reached its length, or its time budget: `minutes` (training
        and the evaluations along the run take all but FINAL_SHARE of it, which the final
        table takes at most: the whole command within `minutes`) or `cpu_minutes` (the CPU
        time of training)."""
        config = self.config
        spent = self.counters.seconds + self.counters.other_seconds
        return (
            self.progress >= config.total
            or (config.minutes > 0 and spent >= config.minutes * 60 * (1 - FINAL_SHARE))
            or (config.cpu_minutes > 0 and self.counters.cpu_seconds >= config.cpu_minutes * 60)
        )

    def _bar(self) -> tuple[float, float]:
        """(done, total) for the progress bar: minutes of training (or of CPU time) when the
        run has a time budget, else its progress in its unit."""
        config = self.config
        if config.minutes > 0:
            total = config.minutes * (1 - FINAL_SHARE)
            return min((self.counters.seconds + self.counters.other_seconds) / 60, total), total
        if config.cpu_minutes > 0:
            return min(self.counters.cpu_seconds / 60, config.cpu_minutes), config.cpu_minutes
        return min(self.progress, config.total), config.total

    def _run(self) -> Evaluation:
        config = self.config
        claim_run_folder(self.run_dir)
        if not (self.resumed and (self.run_dir / "config.json").exists()):
            write_output(
                self.run_dir / "config.json", json.dumps(config.to_dict(), indent=1), "run file"
            )
        if self.config_changes:
            write_output(
                self.run_dir / "config_changes.json",
                json.dumps(self.config_changes, indent=1),
                "run file",
            )
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(self.run_dir / "tensorboard"), purge_step=self.progress)
        session = (time.perf_counter(), self.progress)
        log_lines = not self.console.is_terminal  # a log file: plain lines, no progress bar
        last_line = time.monotonic()
        interrupt = Interrupt(self.console)
        try:
            with (
                progress_bar(
                    f"[bold]{config.learner}",
                    TextColumn("{task.fields[doing]}"),
                    TextColumn("{task.fields[status]}"),
                    console=self.console,
                    disable=log_lines,
                ) as progress,
                interrupt.deferred(),
            ):
                done, total = self._bar()
                task = progress.add_task("train", total=total, status="", doing="")
                progress.update(task, completed=done)  # minutes: rich's add_task takes ints
                # the first iteration of a process compiles the kernels numba has not cached
                first = " (compiling kernels on first use)"

                def doing(text: str) -> None:
                    progress.update(task, doing=text + first)

                self.doing = doing
                if self.evaluates_first() and not self.history and config.eval.games > 0:
                    tick = time.perf_counter()
                    evaluation = self.evaluate()
                    self.counters.other_seconds += time.perf_counter() - tick
                    self.history.append(evaluation)
                    self._log_evaluation(writer, evaluation)
                    self.console.print(f"before training: {rates(evaluation)}", highlight=False)
                while not self.trained_enough:
                    tick, tick_cpu = time.perf_counter(), time.process_time()
                    self.doing("self-play and training")
                    losses = self.iterate()
                    first = ""
                    trained = time.perf_counter() - tick
                    self.counters.seconds += trained
                    self.counters.cpu_seconds += time.process_time() - tick_cpu
                    self._log(writer, losses)
                    status = self.status(losses)
                    evaluated = (
                        self.counters.iterations % config.eval.every == 0 and config.eval.games > 0
                    )
                    if evaluated:
                        evaluation = self.evaluate()
                        self.history.append(evaluation)
                        self._log_evaluation(writer, evaluation)
                        status += "  " + rates(evaluation)
                    progress.update(task, completed=self._bar()[0], status=status, doing="")
                    if interrupt.requested:
                        interrupt.saved = True
                        self._stop()
                    if self.counters.iterations % config.checkpoint_every == 0:
                        self.save()
                    self.counters.other_seconds += time.perf_counter() - tick - trained
                    if log_lines and (
                        evaluated
                        or self.trained_enough
                        or time.monotonic() - last_line >= PROGRESS_SECONDS
                    ):
                        self.console.print(self._progress_line(losses), highlight=False)
                        last_line = time.monotonic()
                self.doing("the last gradient steps")
                self.flush()
        except KeyboardInterrupt:
            if not interrupt.saved:  # stopped mid-iteration: the last checkpoint stands
                self.console.print(
                    printable(
                        f"interrupted: the last checkpoint in {self.checkpoint_path} "
                        f"is the run's state; continue with --resume"
                    ),
                    markup=False,
                )
            raise
        finally:
            writer.close()
            self.doing = lambda text: None
        tick = time.perf_counter()
        self.save()
        self.save(self.run_dir / "final.pt")  # the trained network, whatever the evaluation does
        self.counters.other_seconds += time.perf_counter() - tick
        tick = time.perf_counter()
        final = self._final_table(log_lines)
        eval_seconds = time.perf_counter() - tick
        self.history.append(final)
        self.finished = True
        # final.pt first: a checkpoint marked finished always has its final.pt beside it
        self.save(self.run_dir / "final.pt")
        self.save()
        self._write_summary(
            final, self.progress - session[1], time.perf_counter() - session[0], eval_seconds
        )
        self.plot()
        return final

    def _final_table(self, log_lines: bool) -> Evaluation:
        """The final evaluation under its own bar: games played of games in all, and the time
        left (in a log file, a line every `PROGRESS_SECONDS`)."""
        players = self.players(True)
        opponents = list(dict.fromkeys(s for p in players for s in self.final_games(p)))
        games = sum(sum(self.final_games(player).values()) for player in players)
        budget = self.config.minutes
        self.console.print(
            f"final table: {len(players)} player(s) against "
            f"{', '.join(opponents) or 'no opponent'} ({games} games)"
            + (
                f", within the {self.final_seconds_left():.0f} s left of the {budget:g}-minute "
                f"budget: its games stop where the time runs out"
                if budget > 0
                else ""
            ),
            highlight=False,
        )
        last_line = time.monotonic()
        # a share of games comes back every half-minute or so: the time left is estimated from
        # the speed over the whole table, not rich's last 30 seconds
        with progress_bar(
            "final table", console=self.console, disable=log_lines, speed_estimate_period=3600
        ) as progress:
            task = progress.add_task("final", total=None)

            def update(done: int, total: int) -> None:
                nonlocal last_line
                progress.update(task, completed=done, total=total)
                due = time.monotonic() - last_line >= PROGRESS_SECONDS
                if log_lines and (done == total or due):
                    self.console.print(f"final table: {done}/{total} games", highlight=False)
                    last_line = time.monotonic()

            return self.evaluate(final=True, progress=update)

    def _stop(self) -> None:
        self.save()
        self.console.print(
            printable(
                f"interrupted: saved the state after {self.ITERATION} "
                f"{self.counters.iterations} ({self.progress:,} {self.UNIT}) to "
                f"{self.checkpoint_path}; continue with --resume"
            ),
            markup=False,
        )
        raise KeyboardInterrupt

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
            self.save(self.run_dir / "final.pt")
        self._write_summary(
            final, 0, 0.0, None, write=not (self.run_dir / "summary.json").is_file()
        )
        if not (self.run_dir / "learning_curve.png").is_file():
            self.plot()
        return final
