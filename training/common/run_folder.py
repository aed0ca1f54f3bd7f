"""The run folder: the marker that makes a folder a run's, the files a run writes there, and
the check that refuses any other folder before anything is read or replaced.

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

A folder is a run folder when it holds `satellites-run.json` (or, written by a version before
that file, a satellites `checkpoint.pt`). A run starts only in a new or empty folder (a
`run.lock` alone counts as empty); nothing in any other folder is read or replaced, so a
user's own `config.json` or `summary.json` is never taken for the run's. A path that cannot
be a folder (too long, too deep, under a file) is one RunError.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from satellites_env.core.checks import quoted_path
from satellites_env.files import (
    FileKindError,
    check_output,
    kind_of,
    make_folders,
    read_input,
    write_output,
)

from .checkpoint import load_checkpoint
from .runlock import LOCK_NAME

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
#: the file that marks a folder as a run folder, and what it holds
RUN_MARKER = "satellites-run.json"
RUN_FORMAT = {"format": "satellites-run", "version": 1}


class RunError(ValueError):
    """A run folder that cannot be used as asked (wrong config, nothing to resume, ...)."""


class RunExistsError(RunError, FileExistsError):
    """The run folder holds an unfinished run and `--resume` was not given."""


def read_marker(
    marker: Path, format: dict[str, Any], what: str, limit: int, error: type[Exception]
) -> dict[str, Any]:
    """The mapping a folder's marker file holds (JSON, at most `limit` bytes), of the same
    `format` as the marker `format` writes; anything else (not JSON, a link, another format)
    is an `error` naming the marker as not a satellites `what` marker."""
    try:
        data = json.loads(read_input(marker, limit, f"{what} marker"))
    except (ValueError, FileKindError) as caught:
        raise error(
            f"{quoted_path(marker)} is not a satellites {what} marker "
            f"({str(caught)[:120]}); choose another --out folder"
        ) from None
    if not (isinstance(data, dict) and data.get("format") == format["format"]):
        raise error(
            f"{quoted_path(marker)} is not a satellites {what} marker; choose another --out folder"
        )
    return data


def write_marker(marker: Path, data: dict[str, Any], what: str) -> None:
    """Create the marker's folder (and those above it) and write `data` to the marker."""
    make_folders(marker.parent)
    write_output(marker, json.dumps(data, indent=1) + "\n", f"{what} marker")


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
            read_marker(marker, RUN_FORMAT, "run", 4096, RunError)
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
    training.common.run_folder.check_run_folder], created (with the folders above it) and
    marked when it is new or empty, or holds a checkpoint of an earlier version that loads as
    one. Returns the folder; RunError (or CheckpointError) when it cannot be a run's."""
    run_dir = Path(run_dir)
    ours = check_run_folder(run_dir)
    marker = run_dir / RUN_MARKER
    if ours and marker.exists():
        return run_dir
    if ours:
        load_checkpoint(run_dir / "checkpoint.pt")  # a CheckpointError unless it is ours
    try:
        write_marker(marker, RUN_FORMAT, "run")
    except OSError as error:
        raise RunError(
            f"run folder {quoted_path(run_dir)} cannot be created: {error.strerror or error}"[:1300]
        ) from None
    return run_dir
