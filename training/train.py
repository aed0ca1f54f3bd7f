"""`satellites train`: run the learner a config names (`learner: alphazero` or `ppo`) into a
run folder.

`--config` is a YAML file or the name of a shipped config (`az_quick`, `az_standard`,
`quick`, `standard`: configs/). What the command does with the run folder (`--out`,
default runs/<config name>):

* no run there: start one;
* a finished run with the same config: print its final table and stop (exit 0), so the
  command can be run again at no cost (`make train` twice trains once);
* an unfinished run: an error unless `--resume` is given (then it continues);
* `--resume` with a changed config: only the config's resumable keys may differ (the run's
  length, evaluation and checkpoint cadence, threads, the `distributed` keys), each change
  recorded in the run folder; a finished run resumed with a larger length trains on and is
  evaluated again;
* `--ray [ADDRESS]`: this session's self-play in Ray actors, on a local Ray or the cluster at
  ADDRESS, in place of the config's `distributed.backend` and `address` (a placement of the
  session: the run's config is not changed, and a resumed run may use it or not);
* another `satellites train` holding the folder's run.lock: an error, nothing touched;
* a folder that is not empty and not a run folder (no `satellites-run.json`): an error,
  nothing in it read or replaced (training.common.run_folder).

Every refusal is a ValueError (ConfigError, CheckpointError, RunError, RunLockedError), or a
FileKindError (an OSError) for a link or special file where a run file or run.lock goes, with
a message that says what to do; the CLI prints it as one `error:` line.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from satellites_env.placement import Placement
from satellites_env.stops import exit_status, stop_reason
from satellites_env.terminal import printable

from .common.config import Config, config_path, load_config
from .common.run import Trainer
from .common.run_folder import claim_run_folder
from .common.runlock import RunLock


def trainer_class(config: Config) -> type[Trainer]:
    """The learner of a config."""
    if config.learner == "alphazero":
        from .alphazero.trainer import AZTrainer

        return AZTrainer
    from .ppo.trainer import PPOTrainer

    return PPOTrainer


def train(
    config: str | Path,
    out: Path | None,
    resume: bool,
    console: Console,
    ray: str | None = None,
    allow_pickle: bool = False,
) -> Trainer:
    """Train from the config `config` (a YAML path or a shipped config's name) into `out`
    (default runs/<config name>); returns the trainer, finished.

    `ray` (from `--ray [ADDRESS]`): run self-play on Ray, a local one ("") or the cluster at
    that address, in place of the config's `distributed.backend` and `address`.
    `allow_pickle` (`--allow-pickle`): the config's agent specs may unpickle files."""
    path = config_path(config)
    # everything checked before anything runs
    settings = load_config(config, allow_pickle=allow_pickle)
    run_dir = Path(out) if out else Path("runs") / path.stem
    return run(
        settings, path, run_dir, resume, console, Placement.of_config(settings.distributed, ray)
    )


def _line(console: Console, text: str) -> None:
    """Print a line holding paths and config values: never read as markup, control
    characters escaped (`satellites_env.terminal.printable`)."""
    console.print(printable(text), markup=False, highlight=False)


def run(
    settings: Config,
    path: Path,
    run_dir: Path,
    resume: bool,
    console: Console,
    placement: Placement | None = None,
) -> Trainer:
    """Train the checked config `settings` (read from `path`) into `run_dir`, as
    `train` says, its self-play at `placement` (default: the config's `distributed:`);
    returns the trainer, finished."""
    placement = placement or Placement.of_config(settings.distributed)
    settings.check_placement(placement)  # what holds with the config's backend may not on Ray
    claim_run_folder(run_dir)  # recognised as a run's (or new) before the lock touches it
    with RunLock(run_dir):
        trainer = trainer_class(settings)(
            settings, run_dir, resume=resume, console=console, placement=placement
        )
        if trainer.finished:
            _line(
                console,
                f"{run_dir} holds a finished run ({trainer.progress:,} "
                f"{trainer.UNIT}): nothing to train. Its final evaluation:",
            )
            trainer.report()
        else:
            if trainer.resumed:
                _line(
                    console,
                    f"resuming {run_dir}/ at {trainer.progress:,} of "
                    f"{settings.total:,} {trainer.UNIT} (self-play in {placement.describe()})",
                )
                if trainer.new_changes:
                    _line(
                        console,
                        "config changes, recorded in config_changes.json: "
                        + ", ".join(
                            f"{key} {old!r} -> {new!r}"
                            for key, (old, new) in trainer.new_changes.items()
                        ),
                    )
            else:
                _line(
                    console,
                    f"training ({settings.learner}) with {path} -> {run_dir}/ (self-play in "
                    f"{placement.describe()})",
                )
            try:
                trainer.run()
            except KeyboardInterrupt:  # the run said what it kept; then what stopped it
                if stop_reason() != "interrupted":
                    _line(console, stop_reason())
                raise SystemExit(exit_status()) from None
    final = run_dir / "final.pt"
    agents = f"checkpoint:{final}" + (
        f", search agent az:{final}:32" if settings.learner == "alphazero" else ""
    )
    _line(
        console,
        f"network: {final} (policy {agents}); learning curve: {run_dir / 'learning_curve.png'}",
    )
    return trainer
