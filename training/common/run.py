"""The training run both learners share: one run in one folder, its loop, checkpoints, resume,
evaluation, logging, summary and plots. A learner subclasses
[`Trainer`][training.common.run.Trainer] and plugs in its generation and update
([`Trainer.iterate`][training.common.run.Trainer.iterate]), its state and its evaluation players.

Everything a run writes lives in its folder:

    satellites-run.json  marks the folder as a run's (written first, before anything else)
    checkpoint.pt        latest state (weights, optimizer, config, counters, RNG, history, ...)
    final.pt             the network at the end (`checkpoint:PATH`; AlphaZero's also `az:PATH`)
    config.json          the settings the run started with (never rewritten by --resume)
    config_changes.json  settings changed by later `--resume` sessions (old -> new, when)
    run.lock             held by the process training in the folder (one at a time)
    tensorboard/         losses, win rates, Elo, throughput, a sample game per evaluation
    learning_curve.png   Elo and win rates against the evaluation opponents over training
    summary.json         final evaluation and throughput

Guarantees:

* Reproducible: the same config (same seed, same `threads`, same worker count) gives the same
  weights, bit for bit, with any backend.
* A checkpoint is always a consistent state: the state at the end of an iteration. Ctrl-C
  lets the iteration under way finish, saves, and stops (exit 130); a second Ctrl-C stops at
  once and leaves the last checkpoint written. `--resume` continues with the same counters
  and random streams (games in flight are not saved: fresh ones start).
* `--resume` accepts only settings that are safe to change mid-run (`Config.resumable`: the
  run's length, evaluation and checkpoint cadence, threads, the `distributed` keys) and records
  each change; any other difference is an error listing the keys.
* A finished run is not trained again: opening it reports its final evaluation.
* A folder is a run folder when it holds `satellites-run.json` (or, written by a version
  before that file, a satellites `checkpoint.pt`). A run starts only in a new or empty folder
  (a `run.lock` alone counts as empty); nothing in any other folder is read or replaced, so
  a user's own `config.json` or `summary.json` is never taken for the run's. A path that
  cannot be a folder (too long, too deep, under a file) is one RunError.
"""

from __future__ import annotations

import abc
import contextlib
import copy
import dataclasses
import datetime
import functools
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import torch
from rich.console import Console
from rich.markup import escape
from rich.progress import TextColumn
from rich.table import Table

from satellites_env.agents import Agent, make_agent
from satellites_env.agents.base import digest_of
from satellites_env.arena import (
    PairResult,
    elo_against,
    play_pairing_game,
    rate_with_interval,
    wilson_interval,
)
from satellites_env.core.batch import configure_threads
from satellites_env.core.checks import quoted_path
from satellites_env.files import (
    FileKindError,
    check_output,
    kind_of,
    make_folders,
    open_output,
    read_input,
    write_output,
)
from satellites_env.rating import SCALE, SCALE_ANCHOR
from satellites_env.record import GameRecord
from satellites_env.stops import received
from satellites_env.terminal import plain, printable, progress_bar

from ..distributed.generator import GeneratorFactory
from ..distributed.pool import GeneratorPool, log_pool, open_pool
from .checkpoint import (
    VERSION,
    CheckpointError,
    check_counters,
    check_optimizer_state,
    check_results,
    load_checkpoint,
    load_weights,
    resolve,
    restoring,
    save_checkpoint,
)
from .config import Config, ConfigError, build, differences, flatten
from .network import PolicyValueNet
from .runlock import LOCK_NAME, RunLock
from .specs import spec_file
from .tensorboard import log_game

if TYPE_CHECKING:
    from torch.utils.tensorboard import SummaryWriter

    from satellites_env.jobs import Workers

#: games of a pairing, as the evaluations play them: [(game index, record)]
Games = list[tuple[int, GameRecord]]

#: seconds between progress lines when the console is not a terminal (a log file)
PROGRESS_SECONDS = 30.0
#: the seed of the evaluation games of the k-th player (10_000 + seed for the policy)
EVAL_SEED = 10_000
#: with a time budget (`minutes`), the share of it that training leaves to the final table
#: at least, and the games of each match in one round of the final table under its deadline
FINAL_SHARE = 0.2
ROUND_GAMES = 8
#: a match of an evaluation: (player, opponent, opponent seed, games: the first N or a range
#: of game indices, seed)
Match = tuple["Player", str, int, "int | range", int]
#: the files a run writes into its folder (beside run.lock and tensorboard/), each written
#: atomically and never through a link or into a special file (satellites_env.files)
OUTPUT_FILES = (
    "satellites-run.json",
    "config.json",
    "config_changes.json",
    "checkpoint.pt",
    "final.pt",
    "summary.json",
    "learning_curve.png",
)


class RunError(ValueError):
    """A run folder that cannot be used as asked (wrong config, nothing to resume, ...)."""


class RunExistsError(RunError, FileExistsError):
    """The run folder holds an unfinished run and `--resume` was not given."""


#: the file that marks a folder as a run folder, and what it holds
RUN_MARKER = "satellites-run.json"
RUN_FORMAT = {"format": "satellites-run", "version": 1}


def check_run_folder(run_dir: str | Path) -> bool:
    """Whether `run_dir` may hold a run: True when it is marked as one (or holds a checkpoint
    written before the mark existed, which the caller loads and checks), False when it is new
    or empty (nothing of a run there yet). Nothing is written.

    Raises:
        FileKindError: One of the run's files (OUTPUT_FILES) is a link or a special file.
        RunError: `run_dir` is a file, a non-empty folder that is not a run's, a marker that
            is not ours, or a path the system refuses (too long, too deep, no permission).
    """
    run_dir = Path(run_dir)
    name = quoted_path(run_dir)
    try:
        if not run_dir.exists():
            return False
        if not run_dir.is_dir():
            raise RunError(
                f"run folder {name} is {kind_of(run_dir.stat().st_mode)}, not a "
                f"folder; give a folder path with --out"
            )
        for file in OUTPUT_FILES:  # a link or special file: refused first, whoever put it
            check_output(run_dir / file, "run file")
        marker = run_dir / RUN_MARKER
        if marker.exists():
            try:
                data = json.loads(read_input(marker, 4096, "run marker"))
            except (ValueError, FileKindError) as error:
                raise RunError(
                    f"{quoted_path(marker)} is not a satellites run marker "
                    f"({str(error)[:120]}); choose another --out folder"
                ) from None
            if not (isinstance(data, dict) and data.get("format") == RUN_FORMAT["format"]):
                raise RunError(
                    f"{quoted_path(marker)} is not a satellites run marker; choose "
                    f"another --out folder"
                )
            return True
        entries = {entry.name for entry in os.scandir(run_dir)}
    except FileKindError:
        raise
    except OSError as error:
        raise RunError(
            f"run folder {name} cannot be used: {error.strerror or type(error).__name__}"
        ) from None
    if entries <= {LOCK_NAME}:
        return False
    checkpoint = run_dir / "checkpoint.pt"
    if "checkpoint.pt" in entries and checkpoint.is_file() and not checkpoint.is_symlink():
        return True  # a run of an earlier version: its checkpoint says whether it is ours
    others = sorted(entries - {LOCK_NAME})
    listed = ", ".join(others[:3])[:200] + (", ..." if len(others) > 3 else "")
    raise RunError(
        f"run folder {name} holds files that are not a satellites run ({listed}"
        f") and no {RUN_MARKER}; nothing in it "
        f"is read or replaced: train into a new or empty folder"
    )


def claim_run_folder(run_dir: str | Path) -> Path:
    """Make `run_dir` a run folder: checked by [`check_run_folder`][
    training.common.run.check_run_folder], created (with the folders above it) and marked
    when it is new or empty, or holds a checkpoint of an earlier version that loads as one.
    Returns the folder; RunError (or CheckpointError) when it cannot be a run's."""
    run_dir = Path(run_dir)
    ours = check_run_folder(run_dir)
    marker = run_dir / RUN_MARKER
    if ours and marker.exists():
        return run_dir
    if ours:
        load_checkpoint(run_dir / "checkpoint.pt")  # a CheckpointError unless it is ours
    try:
        make_folders(run_dir)
        write_output(marker, json.dumps(RUN_FORMAT, indent=1) + "\n", "run marker")
    except OSError as error:
        raise RunError(
            f"run folder {quoted_path(run_dir)} cannot be created: {error.strerror or error}"[:1300]
        ) from None
    return run_dir


@dataclass
class Counters:
    """What every run counts; a learner's counters add their own fields."""

    iterations: int = 0
    games: int = 0  # self-play games finished
    seconds: float = 0.0  # training wall time (generation + updates), summed over sessions
    cpu_seconds: float = 0.0  # the process's CPU time in training (all threads), summed too
    # wall time of the run's loop besides training (evaluations, checkpoints, logs), summed too
    other_seconds: float = 0.0


@dataclass
class Evaluation:
    """Win rates of the learner's players against each opponent at one point of training."""

    progress: int  # the run's progress when it was taken (learner steps, positions)
    results: dict = field(default_factory=dict)  # key -> PairResult dict (see Trainer.players)
    minutes: float = 0.0  # training wall time then
    final: bool = False  # the end-of-run evaluation (eval.final)

    def win_rate(self, key: str) -> float:
        r = self.results[key]
        return float(r["a_wins"] / max(r["games"], 1))

    def elo(self) -> tuple[float, float, float] | None:
        """The policy's Elo with its 95% interval on the shipped scale
        (`satellites_env.rating.SCALE`), from its games against the opponents rated there."""
        rated = [
            (SCALE[o], r["a_wins"] + 0.5 * r["draws"], r["games"])
            for o, r in self.results.items()
            if o in SCALE and r["games"]
        ]
        return elo_against(rated) if rated else None

    @classmethod
    def checked(cls, data: Any) -> Evaluation:
        """An Evaluation from its checkpoint dict (TypeError/ValueError when damaged)."""
        evaluation = cls(**data)
        if type(evaluation.progress) is not int or evaluation.progress < 0:
            raise ValueError(
                f"evaluation progress must be an int >= 0, got {evaluation.progress!r}"[:200]
            )
        if type(evaluation.minutes) not in (int, float) or type(evaluation.final) is not bool:
            raise TypeError("evaluation minutes/final of the wrong type")
        check_results(evaluation.results)
        return evaluation


def named_files(config: Config) -> dict[str, Path]:
    """The network files a config names, by the key that names them: each `checkpoint:` and
    `az:` agent spec (read as its factory reads it) and an AlphaZero `init:`."""
    files = {}
    for _, spec in config.agent_specs():
        path = spec_file(spec)
        if path is not None:
            files[spec] = path
    init = getattr(config, "init", "")
    if init:
        files[f"init:{init}"] = resolve(init)
    return files


def _is_digest(value: Any) -> bool:
    return type(value) is str and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


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


class HoldsNetwork(Protocol):
    """A self-play generator, as far as an evaluation on its actor needs it."""

    net: PolicyValueNet


def play_match_games(generator: HoldsNetwork, player: Player, *args: Any) -> Games:
    """`player.play` on a generator's network (the pool runs it on its actors)."""
    return player.play(generator.net, *args)


def play_in_worker(job: tuple[Any, ...]) -> Games:
    """`player.play` in an evaluation process, on a network of `shape` with `weights`: the
    job is `(shape, weights, player, *arguments of player.play)`."""
    player: Player
    shape, weights, player, *args = job
    net = player.network(shape)
    net.load_state_dict(weights)
    return player.play(net.eval(), *args)


def rng_state(rng: np.random.Generator) -> dict:
    """A numpy generator state as plain data (the 128-bit integers as strings)."""
    state = rng.bit_generator.state
    return {
        "bit_generator": state["bit_generator"],
        "state": {k: str(v) for k, v in state["state"].items()},
        "has_uint32": int(state["has_uint32"]),
        "uinteger": int(state["uinteger"]),
    }


def set_rng_state(rng: np.random.Generator, data: dict) -> None:
    if not (isinstance(data, dict) and isinstance(data.get("state"), dict)):
        raise TypeError("a random-stream state must be a mapping")
    rng.bit_generator.state = {
        "bit_generator": data["bit_generator"],
        "state": {k: int(v) for k, v in data["state"].items()},
        "has_uint32": data["has_uint32"],
        "uinteger": data["uinteger"],
    }


class _Interrupt:
    """Ctrl-C (or SIGTERM, SIGHUP: `satellites_env.stops`) during the loop: the first asks it
    to stop after the iteration under way, a second stops at once (KeyboardInterrupt)."""

    def __init__(self, console: Console):
        self.console = console
        self.requested = False
        self.saved = False

    @contextlib.contextmanager
    def deferred(self):
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = signal.getsignal(signal.SIGINT)

        def handler(signum, frame):
            if self.requested:
                raise KeyboardInterrupt
            self.requested = True
            stopped = received()
            self.console.print(
                f"{signal.Signals(stopped).name if stopped else 'Ctrl-C'}: finishing this "
                f"iteration, then saving (Ctrl-C again to stop now)"
            )

        signal.signal(signal.SIGINT, handler)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)


class Trainer(abc.ABC):
    """One run in one folder. `Trainer(config, run_dir)` starts a new run (an error if the
    folder holds an unfinished one); `resume=True` continues the folder's run. Opening a
    finished run, with or without `resume`, restores it with `finished` set: `report()` shows
    its result and `run()` returns it without training (unless `resume` lengthened it).

    A learner sets `Counters` (a [`Counters`][training.common.run.Counters] dataclass), `UNIT` (what
    its progress counts) and `ITERATION` (what one iteration is called), and implements `setup`,
    `iterate`, `progress`, `players`, `learner_payload`, `restore_learner`, `weights` and
    `generator_factory`.

    Self-play runs in a `GeneratorPool` (training/distributed/pool.py) that the trainer holds:
    started on first use (a finished run that is only reported starts none) and stopped by
    `close()`, which keeps the workers' random streams for the next start."""

    Counters: type = Counters
    UNIT = "steps"
    ITERATION = "iteration"

    def __init__(
        self,
        config: Config,
        run_dir: str | Path,
        resume: bool = False,
        console: Console | None = None,
    ):
        self.config = config
        self.run_dir = Path(run_dir)
        check_run_folder(self.run_dir)  # a folder that is not a run's: refused, nothing read
        for name in OUTPUT_FILES:  # a link or special file in the folder: refused before work
            check_output(self.run_dir / name, "run file")
        self.console = console or Console()
        self.counters = self.Counters()
        self.history: list[Evaluation] = []
        self.finished = False
        # the last evaluation's first game against its last opponent
        self.sample_game: GameRecord | None = None
        self.config_changes: list[dict] = []
        self.new_changes: dict[str, list] = {}  # changes accepted when this session resumed
        self._pool: GeneratorPool | None = None  # self-play, started by `generators`
        self._generator_states: list[dict] | None = None  # the workers' streams while none runs
        # evaluation processes (with distributed.workers > 1)
        self._eval_pool: Workers | None = None
        self.files: dict[str, str] = {}  # key -> sha256 of the network file it names
        # what the run is doing, for the progress bar's status (`_run` shows it)
        self.doing: Callable[[str], None] = lambda text: None
        self.net: PolicyValueNet
        self.optimizer: torch.optim.Optimizer
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
        self.files = self._pinned_files(self.files)

    # ------------------------------------------------------------------ the learner's part

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
                f"{self.run_dir} holds an unfinished run ({self._progress_of(payload)}): pass "
                f"--resume to continue it, or choose another --out folder"
            )
        saved = self._saved_config(payload, path)
        changes = differences(saved, self.config)
        fixed = {key: change for key, change in changes.items() if key not in self.config.resumable}
        # Where self-play runs is not what the run learns: opening a run on Ray (or off it)
        # needs no --resume; the change is still recorded when the run trains on.
        if not resume and all(key.startswith("distributed.") for key in changes):
            changes = {}
        if fixed or (changes and not resume):
            listed = "; ".join(
                f"{key}: {old!r} -> {new!r}"
                for key, (old, new) in sorted((fixed or changes).items())
            )
            if fixed:
                advice = (
                    f"only {', '.join(self.config.resumable)} may change when resuming; "
                    f"restore the others or train into another --out folder"
                )
            else:
                advice = "pass --resume to apply these changes to the run"
            raise RunError(
                f"the config differs from the run in {self.run_dir} ({listed}); {advice}"
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
        try:
            saved = build(type(self.config), {**payload["config"], "learner": self.config.learner})
            missing = sorted(
                flatten(saved.to_dict()).keys()
                - flatten({**payload["config"], "learner": ""}).keys()
            )
            if missing:  # a run's config is saved whole
                raise ConfigError(f"it lacks {', '.join(missing[:5])}")
            return saved
        except (ConfigError, KeyError, TypeError) as error:
            if (
                isinstance(payload.get("config"), dict)
                and payload["config"].get("learner", self.config.learner) != self.config.learner
            ):
                raise RunError(
                    f"{self.run_dir} holds a {payload['config'].get('learner')!r} "
                    f"run, not a {self.config.learner!r} one"
                ) from None
            raise CheckpointError(
                f"checkpoint {str(path)!r} holds no valid run config: {error}"
            ) from None

    def _restore(self, payload: dict, path: Path) -> None:
        counters = payload["counters"]
        if not isinstance(counters, dict):
            raise TypeError("counters must be a mapping")
        counters = self.Counters(**counters)
        floats = tuple(f.name for f in dataclasses.fields(counters) if f.type in ("float", float))
        check_counters(asdict(counters), floats=floats)
        history = [Evaluation.checked(e) for e in payload["history"]]
        changes = payload.get("config_changes", [])
        if not (
            isinstance(changes, list)
            and all(
                isinstance(c, dict)
                and isinstance(c.get("changes"), dict)
                and all(
                    isinstance(k, str) and isinstance(v, list) and len(v) == 2
                    for k, v in c["changes"].items()
                )
                for c in changes
            )
        ):
            raise TypeError("config_changes must be a list of {changes: {key: [old, new]}}")
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
        files = payload.get("files", {})
        if not (
            isinstance(files, dict)
            and all(type(k) is str and _is_digest(v) for k, v in files.items())
        ):
            raise TypeError("files must map keys to sha256 digests")
        self.counters, self.history = counters, history
        self.files = dict(files)
        self.config_changes = copy.deepcopy(changes)
        self.finished = payload.get("finished", False)
        self._generator_states = self.check_generator_states(payload.get("generators"), path)

    def _pinned_files(self, pinned: dict[str, str]) -> dict[str, str]:
        """The sha256 of each network file the config names (`named_files`), checked against
        `pinned` (those of the run so far): a RunError naming the first file that changed."""
        digests = {}
        for key, path in named_files(self.config).items():
            try:
                digests[key] = digest_of(path)
            except OSError as error:
                raise RunError(
                    f"{key}: {quoted_path(path)} cannot be read: {error.strerror or error}"
                ) from None
            if key in pinned and pinned[key] != digests[key]:
                raise RunError(
                    f"{key}: {quoted_path(path)} is not the file this run began with (its "
                    f"content changed); put that file back, or train into another --out folder"
                )
        return digests

    def check_generator_states(self, states: Any, path: Path) -> list[dict] | None:
        """The generators' random streams from a checkpoint, checked here so that a damaged
        one fails in the learner rather than later inside an actor (None: fresh)."""
        if states is None:
            return None
        try:
            if not isinstance(states, list) or not states:
                raise TypeError("not a list")
            for state in states:
                np.random.default_rng().bit_generator.state = state["rng"]
                if "torch" in state:
                    torch.Generator().set_state(state["torch"])
        except (TypeError, KeyError, ValueError, OverflowError, RuntimeError) as error:
            raise CheckpointError(
                f"checkpoint {str(path)!r}: generators must be a list of "
                f"random-stream states ({type(error).__name__}: "
                f"{str(error)[:100]})"
            ) from None
        return states

    def _progress_of(self, payload: dict) -> str:
        counters, config = payload.get("counters"), payload.get("config")
        if isinstance(counters, dict) and isinstance(config, dict):
            key = type(self.config).TOTAL
            done, total = counters.get(key.replace("total_", "")), config.get(key)
            if type(done) is int and type(total) is int:
                return f"{done:,} of {total:,} {self.UNIT}"
        return "unknown progress"

    # ------------------------------------------------------------------ evaluation

    def evaluate(
        self, *, final: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> Evaluation:
        """The learner's policy against each evaluation opponent (`eval.games` each), or, at
        the end, each of its players against each final opponent (`eval.final`). The policy's
        first game against the last opponent is kept in `sample_game`. `progress` is called
        as (games played, games in all) as each share of games comes back."""
        self._pinned_files(self.files)  # every opponent is still the one the run began with
        evaluation = Evaluation(self.progress, minutes=self.counters.seconds / 60, final=final)
        self.net.eval()
        ev = self.config.eval
        opponents = ev.final if final else {spec: ev.games for spec in ev.opponents}
        players = self.players(final) if final else self.players(False)[:1]
        matches: list[Match] = [
            (player, spec, self.config.seed + k, games, EVAL_SEED * (j + 1) + self.config.seed)
            for j, player in enumerate(players)
            for k, (spec, games) in enumerate(
                (self.final_games(player) if final else opponents).items()
            )
            if games
        ]
        matches += [] if final else self.matches_along_the_run()
        self.doing(f"evaluating against {', '.join(opponents)}")
        with torch_threads_one():
            if final and self.config.minutes > 0:
                played = self._play_in_rounds(
                    matches, ev.max_moves, self.final_seconds_left(), progress
                )
                if any(len(g) < len(_indices(m[3])) for m, g in zip(matches, played, strict=True)):
                    self.console.print(
                        "the time budget (minutes) ended the final table before all its "
                        "games: the table shows the games played (the first of each match)"
                    )
            else:
                played = self._play_matches(matches, ev.max_moves, progress)
        last = list(opponents)[-1] if opponents else None
        for (player, spec, *_), records in zip(matches, played, strict=True):
            result = self.pair_result(player, spec, records)
            if player is players[0] and spec == last and records and records[0][0] == 0:
                self.sample_game = records[0][1]
            evaluation.results[f"{player.key}:{spec}" if player.key else spec] = result.as_dict()
        return evaluation

    def final_games(self, player: Player) -> dict[str, int]:
        """The final table's opponents of `player` and the games against each: `eval.final`
        here (a learner may give its other players their own)."""
        return self.config.eval.final

    def final_seconds_left(self) -> float:
        """What is left of the time budget (`minutes`) for the final table: the budget less
        the training and the evaluations along the run, at least FINAL_SHARE of it."""
        budget = float(self.config.minutes) * 60
        used = self.counters.seconds + self.counters.other_seconds
        return float(max(budget - used, budget * FINAL_SHARE))

    def _play_in_rounds(
        self,
        matches: list[Match],
        max_moves: int,
        seconds: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Games]:
        """The matches' games in rounds of ROUND_GAMES games of each (colours balanced: game
        pairs 2j, 2j+1 together), round after round while the next round, as long as the
        last one took, fits in `seconds`: the games played are the first ones of each match,
        the same games as without a deadline."""
        played: list[Games] = [[] for _ in matches]
        counts = [len(_indices(match[3])) for match in matches]
        size = max(ROUND_GAMES, 2 * self.config.distributed.workers)
        start, last = time.perf_counter(), 0.0
        for first in range(0, max(counts, default=0), size):
            if first and time.perf_counter() - start + last > seconds:
                break
            tick = time.perf_counter()
            todo: list[tuple[int, Match]] = [
                (m, (player, opponent, opponent_seed, range(first, min(first + size, count)), seed))
                for m, ((player, opponent, opponent_seed, _, seed), count) in enumerate(
                    zip(matches, counts, strict=True)
                )
                if first < count
            ]
            count = None
            if progress is not None:
                count = functools.partial(_offset, progress, sum(map(len, played)), sum(counts))
            rounds = self._play_matches([match for _, match in todo], max_moves, count)
            for (m, _), games in zip(todo, rounds, strict=True):
                played[m] += games
            last = time.perf_counter() - tick
        return played

    def play_matches(self, matches: list[Match], max_moves: int) -> list[Games]:
        """The games of each match (player, opponent, opponent seed, games, seed) as the
        evaluations play them (`_play_matches`): game i of a match is the arena's game i of
        that pairing (`arena.play_pairing_game`), wherever it ran."""
        self.net.eval()
        with torch_threads_one():
            return self._play_matches(matches, max_moves)

    def matches_along_the_run(self) -> list[Match]:
        """Matches besides the policy's that every evaluation along the run plays, in the
        same worker queue, as (player, opponent, opponent seed, games, seed); none here."""
        return []

    def pair_result(self, player: Player, opponent: str, games: Games) -> PairResult:
        """The result of the player's `games` ([(index, record)]) against `opponent`; the
        player is red in the even games."""
        result = PairResult(player.build(self.net).spec, opponent)
        for i, record in games:
            result.add(record, a_is_red=i % 2 == 0)
        return result

    def _play_matches(
        self,
        matches: list[Match],
        max_moves: int,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Games]:
        """The games of each match (player, opponent, opponent seed, games, seed), each
        match's as [(index, record)] in index order: in this process; on Ray over the
        generators' actors; with more than one worker otherwise, in that many processes, every
        match's shares in one queue, so that a worker that finishes its share of one match
        starts on the next instead of waiting for the other's. Each game is a pure function of
        its index, so the results do not depend on where it ran. `progress` is called as
        (games played, games in all) as each share comes back."""
        workers = self.config.distributed.workers
        total, done = sum(len(_indices(match[3])) for match in matches), 0

        def count(games: int) -> None:
            nonlocal done
            done += games
            if progress is not None:
                progress(done, total)

        if self.config.distributed.backend == "ray":
            pool = self.generators
            pool.set_weights(self.weights(), self.counters.iterations)
            played = []
            for player, opponent, opponent_seed, games, seed in matches:
                indices = _indices(games)
                shares = [list(indices[k :: pool.workers]) for k in range(pool.workers)]
                played.append(
                    pool.run(
                        play_match_games,
                        [
                            (player, opponent, opponent_seed, share, seed, max_moves)
                            for share in shares
                        ],
                    )
                )
                count(len(indices))
        elif workers > 1:
            weights = {k: v.detach().cpu() for k, v in self.net.state_dict().items()}
            jobs, owner = [], []
            for m, (player, opponent, opponent_seed, games, seed) in enumerate(matches):
                indices = _indices(games)
                for k in range(min(workers, len(indices))):
                    share = list(indices[k::workers])
                    jobs.append(
                        (
                            self.net.shape,
                            weights,
                            player,
                            opponent,
                            opponent_seed,
                            share,
                            seed,
                            max_moves,
                        )
                    )
                    owner.append(m)
            results = self._evaluators(workers).run(
                jobs, play_in_worker, lambda index, _: count(len(jobs[index][5]))
            )
            played = [[] for _ in matches]
            for m, part in zip(owner, results, strict=True):
                played[m].append(part)
        else:
            played = []
            for player, opponent, opponent_seed, games, seed in matches:
                indices = _indices(games)
                played.append(
                    [player.play(self.net, opponent, opponent_seed, list(indices), seed, max_moves)]
                )
                count(len(indices))
        return [
            sorted((pair for part in parts for pair in part), key=lambda p: p[0])
            for parts in played
        ]

    def _evaluators(self, workers: int) -> Workers:
        """The evaluation processes (started on first use, kept until `close`): fresh
        interpreters, one thread each, that the learner's numba and torch threads do not
        follow into."""
        if self._eval_pool is None:
            from multiprocessing import get_context

            from satellites_env.arena import init_worker
            from satellites_env.jobs import Workers

            self._eval_pool = Workers(workers, init=init_worker, context=get_context("spawn"))
        return self._eval_pool

    @abc.abstractmethod
    def generator_factory(self) -> GeneratorFactory:
        """What builds one of this learner's self-play generators in a worker (picklable: it
        travels to processes and Ray actors)."""

    def _open_pool(self) -> GeneratorPool:
        """A new pool for this learner's self-play, continuing `_generator_states`: None for
        fresh streams, else a checkpoint's."""
        return open_pool(
            self.generator_factory(),
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
        """Each worker's random streams, in worker order (None: not started, fresh)."""
        return self._pool.states() if self._pool is not None else self._generator_states

    def close(self) -> None:
        """Stop the generators (Ray actors) and the evaluation processes; the next use starts
        them again, the generators from their current random streams."""
        if self._pool is not None:
            self._generator_states = self._pool.states()
            self._pool.close()
            self._pool = None
        if self._eval_pool is not None:
            self._eval_pool.close()
            self._eval_pool = None

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
        interrupt = _Interrupt(self.console)
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
                    self.console.print(f"before training: {_rates(evaluation)}", highlight=False)
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
                        status += "  " + _rates(evaluation)
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

    def _progress_line(self, losses: dict[str, float]) -> str:
        c, total, budget = self.counters, self.config.total, self.config.minutes
        cpu_budget = self.config.cpu_minutes
        if budget > 0:
            spent = (c.seconds + c.other_seconds) / 60
            done = (
                f"{self.progress:,} {self.UNIT}, {spent:.1f} of {budget:g} min "
                f"({min(spent / budget, 1):.0%}; the final table gets the rest)"
            )
        elif cpu_budget > 0:
            done = (
                f"{self.progress:,} {self.UNIT}, {c.cpu_seconds / 60:.1f} of {cpu_budget:g} "
                f"CPU min ({min(c.cpu_seconds / 60 / cpu_budget, 1):.0%})"
            )
        else:
            done = f"{self.progress:,}/{total:,} {self.UNIT} ({min(self.progress / total, 1):.0%})"
        line = (
            f"{self.ITERATION} {c.iterations}: {done}, {c.games:,} games, "
            f"{self.describe_throughput()}" + ("" if budget > 0 else f", {c.seconds / 60:.1f} min")
        )
        status = self.status(losses)
        if status:
            line += f", {status}"
        if self.history:
            line += f"; eval at {self.history[-1].progress:,}: {_rates(self.history[-1])}"
        return line

    # ------------------------------------------------------------------ reporting

    def _log(self, writer: SummaryWriter, losses: dict[str, float]) -> None:
        step = self.progress
        for key, value in losses.items():
            writer.add_scalar(f"loss/{key}", value, step)
        for key, value in self.throughput().items():
            writer.add_scalar(f"throughput/{key}", value, step)
        for key, value in self.log_scalars().items():
            writer.add_scalar(key, value, step)
        log_pool(writer, self._pool, step)

    def _log_evaluation(self, writer: SummaryWriter, evaluation: Evaluation) -> None:
        for key in evaluation.results:
            writer.add_scalar(
                f"eval/win_rate_vs_{key}", evaluation.win_rate(key), evaluation.progress
            )
        rating = evaluation.elo()
        if rating is not None:
            for name, value in zip(("elo", "elo_low", "elo_high"), rating, strict=False):
                writer.add_scalar(f"eval/{name}", value, evaluation.progress)
        if self.sample_game is not None:  # how the policy plays now, as an animation
            log_game(
                writer,
                f"eval/game_vs_{self.config.eval.opponents[-1]}",
                self.sample_game,
                evaluation.progress,
            )
            self.sample_game = None

    def _write_summary(
        self,
        final: Evaluation,
        session_progress: int,
        session_seconds: float,
        eval_seconds: float | None,
        write: bool = True,
    ) -> None:
        c = self.counters
        table = Table(
            title=f"Final evaluation after {self.progress:,} {self.UNIT} "
            f"({c.games:,} self-play games)"
        )
        for column in (
            "player",
            "opponent",
            "games",
            "wins",
            "draws",
            "losses",
            "win rate (95% CI)",
        ):
            table.add_column(
                column, justify="left" if column in ("player", "opponent") else "right"
            )
        keys = {p.key for p in self.players(True) if p.key}
        for key, r in final.results.items():
            player, _, opponent = key.partition(":")
            if player not in keys:  # the policy's results are keyed by the opponent alone
                player, opponent = "", key
            table.add_row(
                plain(player or "policy"),
                plain(opponent),
                str(r["games"]),
                str(r["a_wins"]),
                str(r["draws"]),
                str(r["b_wins"]),
                rate_with_interval(r["a_wins"], r["games"]),
            )
        if final.results:  # none when another command plays the final games (sweep)
            self.console.print(table)
        rating = final.elo()
        elo = (
            f"policy Elo {rating[0]:+.0f} [{rating[1]:+.0f}, {rating[2]:+.0f}] "
            f"({SCALE_ANCHOR[0]} = {SCALE_ANCHOR[1]:+.0f}); "
            if rating
            else ""
        )
        self.console.print(
            f"{elo}self-play: {self.describe_throughput()} "
            f"({c.seconds / 60:.1f} min training)"
            + (f"; final evaluation {eval_seconds:.0f} s" if eval_seconds is not None else "")
        )
        if not write:
            return
        summary = {
            "final": asdict(final),
            "counters": asdict(c),
            "throughput": self.throughput(),
            "session": {
                "progress": session_progress,
                "seconds": session_seconds,
                "final_eval_seconds": eval_seconds,
                # batches delivered, dropped with a dead actor, refused; actors
                # replaced
                "generators": vars(self._pool.stats) if self._pool else None,
            },
            "config": self.config.to_dict(),
            "config_changes": self.config_changes,
        }
        write_output(self.run_dir / "summary.json", json.dumps(summary, indent=1), "run file")

    def curve_keys(self) -> list[str]:
        """The evaluation results whose win rates the learning curve draws."""
        return list(self.config.eval.opponents)

    def plot(self) -> Path | None:
        return plot_learning_curve(
            self.history, self.curve_keys(), self.run_dir / "learning_curve.png", self.UNIT
        )


@contextlib.contextmanager
def torch_threads_one():
    """Evaluation games run a batch of one: one torch thread (see PolicyAgent)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _offset(
    progress: Callable[[int, int], None], before: int, total: int, done: int, _: int
) -> None:
    """`progress` of a round's games counted after the `before` played in earlier rounds."""
    progress(before + done, total)


def _indices(games: int | range) -> range:
    """The game indices of a match: its first `games` games, or that range of them."""
    return range(games) if isinstance(games, int) else games


def _rates(evaluation: Evaluation) -> str:
    """Each opponent's win rate, as rich markup (a name from a config is escaped, and its
    control characters shown escaped)."""
    return "  ".join(
        f"{escape(printable(o))} {evaluation.win_rate(o):.0%}" for o in evaluation.results
    )


def plot_learning_curve(
    history: list[Evaluation], opponents: list[str], path: str | Path, unit: str = "steps"
) -> Path | None:
    """learning_curve.png: the policy's Elo with its 95% band (left) and its win rate against
    each opponent with 95% Wilson bands (right), over the run's progress; None without
    evaluations."""
    if not history:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    figure, (elo_axis, rate_axis) = plt.subplots(1, 2, figsize=(11, 4))
    rated = [(e.progress, elo) for e in history if (elo := e.elo()) is not None]
    if rated:
        xs = [x for x, _ in rated]
        elo_axis.plot(xs, [r[0] for _, r in rated], marker="o", color="tab:purple")
        elo_axis.fill_between(
            xs,
            [r[1] for _, r in rated],
            [r[2] for _, r in rated],
            color="tab:purple",
            alpha=0.2,
            label="95% interval",
        )
        rated_opponents = {o for e in history for o in e.results if o in SCALE}
        for name, rating in SCALE.items():
            if name not in rated_opponents:
                continue
            elo_axis.axhline(rating, color="grey", linewidth=0.8, linestyle="--")
            elo_axis.annotate(
                name,
                (xs[0], rating),
                fontsize=8,
                color="grey",
                textcoords="offset points",
                xytext=(2, 2),
            )
        elo_axis.legend(loc="lower right")
    elo_axis.set(
        xlabel=unit,
        ylabel=f"Elo ({SCALE_ANCHOR[0]} = {SCALE_ANCHOR[1]:+.0f})",
        title="policy (no search): Elo on the shipped scale",
    )
    for opponent in opponents:
        points = [
            (e.progress, e.results[opponent])
            for e in history
            if opponent in e.results and e.results[opponent]["games"]
        ]
        if not points:
            continue
        xs = [x for x, _ in points]
        bands = [wilson_interval(r["a_wins"], r["games"]) for _, r in points]
        player, _, against = (
            opponent.partition(":")
            if opponent.startswith("search:")
            else (
                "policy",
                "",
                opponent,
            )
        )
        (line,) = rate_axis.plot(
            xs,
            [r["a_wins"] / r["games"] for _, r in points],
            marker="o",
            label=f"{player} vs {against}",
        )
        rate_axis.fill_between(
            xs, [b[0] for b in bands], [b[1] for b in bands], color=line.get_color(), alpha=0.15
        )
    rate_axis.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    rate_axis.set(
        xlabel=unit,
        ylabel="win rate",
        ylim=(-0.02, 1.02),
        title="win rate (95% Wilson bands)",
    )
    rate_axis.legend(loc="lower right")
    thousands = FuncFormatter(lambda x, _: f"{x / 1e6:g} M" if x >= 1e6 else f"{x / 1e3:g} k")
    for axis in (elo_axis, rate_axis):
        axis.xaxis.set_major_formatter(thousands)
    figure.tight_layout()
    with open_output(path, "learning curve") as file:
        figure.savefig(file, dpi=110, format="png")
    plt.close(figure)
    return Path(path)
