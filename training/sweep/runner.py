"""Running a sweep: its trials one after another here, or as Ray Tune trials; and
`satellites sweep` itself."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from satellites_env.placement import Placement

from ..common.config import (
    Config,
)
from .grid import DEFAULT_PLAYER, EVAL_SEED, Arm, Sweep, SweepError, make_sweep
from .report import report
from .trials import claim_sweep_folder, load_result, run_trial, save_result, trial_name


def run_local(
    sweep: Sweep,
    todo: list[tuple[Arm, int]],
    out: Path,
    console: Console,
    keep: Callable[[tuple[int, int], dict[str, Any]], None],
) -> None:
    """The trials one after another, a bar over them above each trial's own bar."""
    columns = (
        TextColumn("[bold]trials"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("trials", total=len(todo), status="")
        for k, (arm, seed) in enumerate(todo):
            progress.update(task, status=f"{trial_name(arm, seed)}: {arm.name}")
            if not console.is_terminal:
                console.print(f"trial {k + 1} of {len(todo)}: {trial_name(arm, seed)} ({arm.name})")
            keep((arm.index, seed), run_trial(sweep, arm, seed, out, console))
            progress.advance(task)


def tune_trial(settings: dict[str, Any]) -> None:
    """A Ray Tune trainable: one trial, its result reported as JSON."""
    from ray import tune

    sweep, out = settings["sweep"], Path(settings["out"])
    arm = sweep.arms[settings["arm"]]
    console = Console(force_terminal=False)
    result = run_trial(sweep, arm, settings["seed"], out, console, in_tune=True)
    tune.report({"result": json.dumps(result)})


def tune_resources(config: Config) -> dict[str, float]:
    """What a trial of `config` asks Ray Tune for: the cores it uses, its gradient threads
    or its generators (playing side by side), the more."""
    return {"cpu": max(config.threads, config.distributed.workers)}


def run_ray(
    sweep: Sweep,
    todo: list[tuple[Arm, int]],
    out: Path,
    address: str | None,
    console: Console,
    keep: Callable[[tuple[int, int], dict[str, Any]], None],
) -> None:
    """The trials as Ray Tune trials, each asking for the cores its config uses; the results
    come back through Tune (the trials' run folders stay where they ran)."""
    from satellites_env.distributed import connect, import_ray

    import_ray()
    from ray import tune

    started = connect(address)
    sigint = signal.getsignal(signal.SIGINT)  # Tune installs its own and leaves it
    try:
        for arm in sweep.arms:  # one resource request per arm
            need = tune_resources(sweep.trial_config(arm, sweep.seeds[0]))
            todo_arm = [seed for a, seed in todo if a.index == arm.index]
            if not todo_arm:
                continue
            tuner = tune.Tuner(
                tune.with_resources(tune_trial, need),
                param_space={
                    "sweep": sweep,
                    "out": str(out.absolute()),
                    "arm": arm.index,
                    "seed": tune.grid_search(todo_arm),
                },
                run_config=tune.RunConfig(
                    name=f"arm{arm.index}",
                    storage_path=str((out / "tune").absolute()),
                    verbose=0,
                ),
            )
            console.print(
                f"arm {arm.index} ({arm.name}): {len(todo_arm)} Ray Tune trials, "
                f"{need['cpu']:g} CPUs each"
            )
            grid = tuner.fit()
            for k in range(len(grid)):
                trial = grid[k]
                metrics = trial.metrics or {}
                if trial.error is not None or "result" not in metrics:
                    raise SweepError(
                        f"a Ray Tune trial of arm {arm.index} failed: {str(trial.error)[:500]}"
                    )
                result = json.loads(metrics["result"])
                save_result(out, trial_name(arm, result["seed"]), result)
                keep((arm.index, result["seed"]), result)
    finally:
        signal.signal(signal.SIGINT, sigint)
        if started:
            import ray

            ray.shutdown()


# --------------------------------------------------------------------------- the command


def sweep_command(
    config: str,
    sets: list[str],
    seeds: str | list[str],
    out: Path,
    console: Console,
    positions: int | None = None,
    cpu_minutes: float | None = None,
    player: str = DEFAULT_PLAYER,
    against: list[str] | None = None,
    eval_seed: int = EVAL_SEED,
    max_moves: int = 400,
    placement: Placement | None = None,
) -> list[dict[str, Any]]:
    """`satellites sweep`: check everything, claim `out`, run the trials that have no
    result yet (one after another, or as Ray Tune trials with a `placement` on Ray: its
    address), then print and save the table; returns its rows."""
    sweep = make_sweep(
        config, sets, seeds, positions, cpu_minutes, player, against, eval_seed, max_moves
    )
    out = Path(out)
    claim_sweep_folder(out, sweep.command())
    results: dict[tuple[int, int], dict[str, Any]] = {}
    todo = []
    for arm, seed in sweep.trials():
        saved = load_result(out, trial_name(arm, seed), sweep)
        if saved is None:
            todo.append((arm, seed))
        else:
            results[arm.index, seed] = saved
    console.print(
        f"sweep: {len(sweep.arms)} arms x {len(sweep.seeds)} seeds into {out}/ "
        f"({len(results)} {'trial' if len(results) == 1 else 'trials'} done, {len(todo)} to run)"
    )

    def keep(key: tuple[int, int], result: dict[str, Any]) -> None:
        results[key] = result

    if todo and placement is not None and placement.on_ray:
        run_ray(sweep, todo, out, placement.address, console, keep)
    elif todo:
        run_local(sweep, todo, out, console, keep)
    return report(sweep, results, out, console)
