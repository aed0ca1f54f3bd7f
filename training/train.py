"""`satellites train`: run the learner a config names (`learner: ppo` or `alphazero`) into a
run folder.

What the command does with the run folder (`--out`, default runs/<config name>):

* no run there: start one;
* a finished run with the same config: print its final table and stop (exit 0), so the
  command can be run again at no cost (`make train` twice trains once);
* an unfinished run: an error unless `--resume` is given (then it continues);
* `--resume` with a changed config: only RESUMABLE_KEYS may differ (extend `total_steps`,
  evaluation and checkpoint cadence, threads, the `distributed` keys), each change recorded in
  the run folder; a finished run resumed with a larger `total_steps` trains on and is
  evaluated again;
* `--ray [ADDRESS]` (either learner): self-play in Ray actors, on a local Ray or the cluster
  at ADDRESS, in place of the config's `distributed.backend` and `address`;
* another `satellites train` holding the folder's run.lock: an error, nothing touched.

Every refusal is a ValueError (ConfigError, CheckpointError, RunError, RunLockedError) with a
message that says what to do; the CLI prints it as one `error:` line.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from .common.config import ConfigError, load_config, read_yaml
from .common.runlock import RunLock

LEARNERS = ("ppo", "alphazero")


def learner_of(config_path: Path) -> str:
    """The `learner:` a YAML config names ("ppo" when it names none)."""
    data = read_yaml(config_path)
    learner = data.get("learner", "ppo") if isinstance(data, dict) else "ppo"
    if learner not in LEARNERS:
        raise ConfigError(f"{config_path}: learner must be one of {', '.join(LEARNERS)}, "
                          f"got {learner!r}")
    return learner


def train_alphazero(config_path: Path, out: Path | None, resume: bool, console: Console,
                    ray: str | None = None) -> None:
    """Gumbel AlphaZero (training/alphazero) from its YAML config; `ray` as for `train`."""
    from .alphazero.config import az_config_from_dict
    from .alphazero.trainer import AZTrainer

    try:
        config = az_config_from_dict(read_yaml(config_path))
    except ValueError as error:
        raise ConfigError(f"{config_path}: {error}") from None
    if ray is not None:
        config.distributed.backend, config.distributed.address = "ray", ray
    run_dir = Path(out) if out else Path("runs") / config_path.stem
    with RunLock(run_dir):
        console.print(f"training (Gumbel AlphaZero) with {config_path} -> {run_dir}/")
        try:
            AZTrainer(config, run_dir, resume=resume, console=console).run()
        except KeyboardInterrupt:
            raise SystemExit(130) from None
    console.print(f"network: {run_dir / 'final.pt'} (search agent az:{run_dir / 'final.pt'}:32, "
                  f"raw policy checkpoint:{run_dir / 'final.pt'}); "
                  f"learning curve: {run_dir / 'learning_curve.png'}")


def train(config_path: Path, out: Path | None, resume: bool, console: Console,
          ray: str | None = None) -> None:
    """Train from the YAML config at `config_path` into `out` (default runs/<config name>).

    `ray` (from `--ray [ADDRESS]`): run self-play on Ray, a local one ("") or the cluster at
    that address, in place of the config's `distributed.backend` and `address`."""
    config_path = Path(config_path)
    if learner_of(config_path) == "alphazero":
        train_alphazero(config_path, out, resume, console, ray=ray)
        return
    from .ppo.trainer import Trainer

    config = load_config(config_path)  # everything checked before anything runs
    if ray is not None:
        config.distributed.backend, config.distributed.address = "ray", ray
    run_dir = Path(out) if out else Path("runs") / config_path.stem
    with RunLock(run_dir):
        trainer = Trainer(config, run_dir, resume=resume, console=console)
        if trainer.finished:
            console.print(f"{run_dir} holds a finished run ({trainer.counters.steps:,} learner "
                          f"steps): nothing to train. Its final evaluation:")
            trainer.report()
        else:
            if trainer.resumed:
                console.print(f"resuming {run_dir}/ at {trainer.counters.steps:,} of "
                              f"{config.total_steps:,} learner steps")
                if trainer.new_changes:
                    console.print("config changes, recorded in config_changes.json: " + ", ".join(
                        f"{key} {old!r} -> {new!r}"
                        for key, (old, new) in trainer.new_changes.items()))
            else:
                console.print(f"training with {config_path} -> {run_dir}/")
            try:
                trainer.run()
            except KeyboardInterrupt:
                raise SystemExit(130) from None
    console.print(f"policy: {run_dir / 'final.pt'} (use it as checkpoint:{run_dir / 'final.pt'}); "
                  f"learning curve: {run_dir / 'learning_curve.png'}")
