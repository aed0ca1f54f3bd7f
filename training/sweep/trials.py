"""The sweep folder and its trials: the folder claimed by one command, each trial trained
into its run folder and evaluated, its result kept in results/."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from satellites_env.core.checks import quoted_path
from satellites_env.files import (
    FileKindError,
    check_output,
    make_folders,
    read_input,
    write_output,
)
from satellites_env.placement import Placement

from ..common.config import (
    config_path,
    flatten,
)
from ..common.evaluation import Match
from ..common.run_folder import read_marker, write_marker
from .grid import OUTPUT_FILES, SWEEP_FORMAT, SWEEP_MARKER, Arm, Sweep, SweepError, parse_player


def claim_sweep_folder(out: Path, command: dict[str, Any]) -> None:
    """Make `out` the folder of this sweep: new or empty (then marked), or marked by the same
    command. SweepError for a file, a folder that is not a sweep's, or another command's."""
    name = quoted_path(out)
    marker = out / SWEEP_MARKER
    try:
        if out.exists() and not out.is_dir():
            raise SweepError(f"--out {name} is a file, not a folder")
        for file in OUTPUT_FILES:
            check_output(out / file, "sweep file")
        if out.is_dir() and marker.exists():
            data = read_marker(marker, SWEEP_FORMAT, "sweep", 1 << 22, SweepError)
            if data.get("command") != command:
                raise SweepError(
                    f"--out {name} holds a sweep of another command (it differs in "
                    f"{', '.join(_changed(data.get('command'), command)) or 'its format'}"
                    f"); rerun that sweep's command to continue it, or give another --out "
                    f"folder"
                )
            return
        if out.is_dir() and any(os.scandir(out)):
            listed = ", ".join(sorted(e.name for e in os.scandir(out))[:3])
            raise SweepError(
                f"--out {name} holds files that are not a satellites sweep ({listed}) and "
                f"no {SWEEP_MARKER}; nothing in it is read or replaced: give a new or "
                f"empty folder"
            )
        write_marker(marker, {**SWEEP_FORMAT, "command": command}, "sweep")
    except FileKindError as error:
        raise SweepError(str(error)) from None
    except OSError as error:
        raise SweepError(
            f"--out {name} cannot be used: {error.strerror or type(error).__name__}"
        ) from None


def _changed(old: Any, new: dict[str, Any]) -> list[str]:
    """The top keys of the command that differ (the config's as config.KEY)."""
    if not isinstance(old, dict):
        return []
    changed = []
    for key in new:
        if key == "config" and isinstance(old.get("config"), dict):
            before, after = flatten(old["config"]), flatten(new["config"])
            changed += [
                f"config {k}"
                for k in sorted(before.keys() | after.keys())
                if before.get(k) != after.get(k)
            ][:5]
        elif old.get(key) != new[key]:
            changed.append(f"--{key.replace('_', '-')}" if key != "budget" else "the budget")
    return changed


def trial_name(arm: Arm, seed: int) -> str:
    return f"arm{arm.index}-seed{seed}"


# --------------------------------------------------------------------------- one trial


def run_trial(
    sweep: Sweep,
    arm: Arm,
    seed: int,
    out: Path,
    console: Console,
    in_tune: bool = False,
) -> dict[str, Any]:
    """Train one trial into its run folder (continuing it when it is there), play its
    evaluation games, and return (and save in results/) its result. `in_tune`: the trial is
    a Ray Tune trial, whose self-play runs in threads where its config says Ray (the trial
    holds the cores Tune gave it; its config is not changed)."""
    from ..train import run

    config = sweep.trial_config(arm, seed)
    placement = Placement.of_config(config.distributed)
    if in_tune and placement.on_ray:
        placement = Placement("threads", placement.workers)
    name = trial_name(arm, seed)
    run_dir = out / "trials" / name
    resume = (run_dir / "checkpoint.pt").exists()
    tick = time.perf_counter()
    trainer = run(config, config_path(sweep.config), run_dir, resume, console, placement)
    try:
        simulations = parse_player(sweep.player, config.learner)
        if simulations is None:
            player = trainer.players(False)[0]
        else:
            player = trainer.search_player(simulations)  # type: ignore[attr-defined]
        matches = [
            Match(player, spec, sweep.eval_seed, games, sweep.eval_seed)
            for spec, games in sweep.against.items()
        ]
        console.print(f"{name}: evaluating {sweep.player} ({arm.name}) ...")
        played = trainer.play_matches(matches, sweep.max_moves)
    finally:
        trainer.close()
    results = {}
    for match, games in zip(matches, played, strict=True):
        pair = trainer.pair_result(match, games)
        results[match.opponent] = {
            "games": pair.games,
            "wins": pair.a_wins,
            "draws": pair.draws,
            "losses": pair.b_wins,
        }
    counters = trainer.counters
    result = {
        "arm": arm.index,
        "seed": seed,
        "results": results,
        "progress": trainer.progress,
        "unit": trainer.UNIT,
        "train_seconds": counters.seconds,
        "train_cpu_seconds": counters.cpu_seconds,
        "seconds": time.perf_counter() - tick,
    }
    save_result(out, name, result)
    return result


def save_result(out: Path, name: str, result: dict[str, Any]) -> None:
    make_folders(out / "results")
    write_output(out / "results" / f"{name}.json", json.dumps(result, indent=1), "trial result")


def load_result(out: Path, name: str, sweep: Sweep) -> dict[str, Any] | None:
    """A trial's saved result (None when it has none yet); SweepError when it is damaged."""
    path = out / "results" / f"{name}.json"
    if not path.exists():
        return None
    try:
        data = json.loads(read_input(path, 1 << 20, "trial result"))
        results = data["results"]
        if set(results) != set(sweep.against):
            raise ValueError("its opponents are not the sweep's")
        for spec, r in results.items():
            counts = [r[k] for k in ("games", "wins", "draws", "losses")]
            if not all(type(c) is int and c >= 0 for c in counts) or (
                counts[0] != sum(counts[1:]) or counts[0] != sweep.against[spec]
            ):
                raise ValueError(f"its counts against {spec} do not add up")
        return dict(data)
    except (ValueError, KeyError, TypeError, OSError) as error:
        raise SweepError(
            f"trial result {quoted_path(path)} is damaged ({str(error)[:100]}); delete it "
            f"to play the trial's evaluation again"
        ) from None
