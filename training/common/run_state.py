"""A run's state besides its networks, as its checkpoint holds it: the counters, the
evaluations, random streams, the network files the run pinned and the config changes
`--resume` accepted, each checked as a checkpoint is read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from satellites_env.agents.base import digest_of
from satellites_env.arena import elo_against
from satellites_env.core.checks import quoted_path
from satellites_env.rating import SCALE

from .checkpoint import CheckpointError, check_results, resolve
from .config import Config, ConfigError, build, differences, flatten
from .run_folder import RunError
from .specs import spec_file


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
    """Restore a state `rng_state` gave (TypeError/KeyError/ValueError when damaged)."""
    if not (isinstance(data, dict) and isinstance(data.get("state"), dict)):
        raise TypeError("a random-stream state must be a mapping")
    rng.bit_generator.state = {
        "bit_generator": data["bit_generator"],
        "state": {k: int(v) for k, v in data["state"].items()},
        "has_uint32": data["has_uint32"],
        "uinteger": data["uinteger"],
    }


def check_generator_states(states: Any, path: Path) -> list[dict] | None:
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


def pinned_files(config: Config, pinned: dict[str, str]) -> dict[str, str]:
    """The sha256 of each network file the config names (`named_files`), checked against
    `pinned` (those of the run so far): a RunError naming the first file that changed."""
    digests = {}
    for key, path in named_files(config).items():
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


def check_files(files: Any) -> dict[str, str]:
    """The pinned files of a checkpoint: keys to sha256 digests (TypeError otherwise)."""
    if not (
        isinstance(files, dict) and all(type(k) is str and _is_digest(v) for k, v in files.items())
    ):
        raise TypeError("files must map keys to sha256 digests")
    return dict(files)


def _is_digest(value: Any) -> bool:
    return type(value) is str and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def check_config_changes(changes: Any) -> list[dict]:
    """The config changes of a checkpoint: [{changes: {key: [old, new]}, ...}]."""
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
    return changes


def accepted_changes(
    saved: Config, config: Config, run_dir: Path, resume: bool
) -> dict[str, tuple[Any, Any]]:
    """The settings `config` changes in the run saved with `saved`: those `--resume` may
    change (`Config.resumable`), and only with `resume`; any other is a RunError listing
    the keys. Where self-play runs is not what the run learns: opening a run on Ray (or off
    it) needs no `--resume`, and such changes count only when the run trains on."""
    changes = differences(saved, config)
    fixed = {key: change for key, change in changes.items() if key not in config.resumable}
    if not resume and all(key.startswith("distributed.") for key in changes):
        changes = {}
    if fixed or (changes and not resume):
        listed = "; ".join(
            f"{key}: {old!r} -> {new!r}" for key, (old, new) in sorted((fixed or changes).items())
        )
        if fixed:
            advice = (
                f"only {', '.join(config.resumable)} may change when resuming; "
                f"restore the others or train into another --out folder"
            )
        else:
            advice = "pass --resume to apply these changes to the run"
        raise RunError(f"the config differs from the run in {run_dir} ({listed}); {advice}")
    return changes


def saved_config(payload: dict, config: Config, run_dir: Path, path: Path) -> Config:
    """The run's config as its checkpoint (`path`, in `run_dir`) saved it, built as a config
    of `config`'s learner: a RunError when the run is another learner's, else a
    CheckpointError when it is damaged or not whole."""
    try:
        saved = build(type(config), {**payload["config"], "learner": config.learner})
        missing = sorted(
            flatten(saved.to_dict()).keys() - flatten({**payload["config"], "learner": ""}).keys()
        )
        if missing:  # a run's config is saved whole
            raise ConfigError(f"it lacks {', '.join(missing[:5])}")
        return saved
    except (ConfigError, KeyError, TypeError) as error:
        if (
            isinstance(payload.get("config"), dict)
            and payload["config"].get("learner", config.learner) != config.learner
        ):
            raise RunError(
                f"{run_dir} holds a {payload['config'].get('learner')!r} "
                f"run, not a {config.learner!r} one"
            ) from None
        raise CheckpointError(
            f"checkpoint {str(path)!r} holds no valid run config: {error}"
        ) from None


def progress_of(payload: dict, total_key: str, unit: str) -> str:
    """How far a checkpoint's run went ("N of M unit"), as far as its counters say."""
    counters, config = payload.get("counters"), payload.get("config")
    if isinstance(counters, dict) and isinstance(config, dict):
        done, total = counters.get(total_key.replace("total_", "")), config.get(total_key)
        if type(done) is int and type(total) is int:
            return f"{done:,} of {total:,} {unit}"
    return "unknown progress"
