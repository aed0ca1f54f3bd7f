"""`satellites train`: run the learner a config names (PPO today) into a run folder."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from .common.config import load_config
from .ppo.trainer import Trainer


def train(config_path: Path, out: Path | None, resume: bool, console: Console) -> None:
    """Train from the YAML config at `config_path` into `out` (default runs/<config name>)."""
    config = load_config(config_path)
    run_dir = out or Path("runs") / config_path.stem
    console.print(f"training with {config_path} -> {run_dir}/")
    try:
        Trainer(config, run_dir, resume=resume, console=console).run()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    console.print(f"policy: {run_dir / 'final.pt'} (use it as checkpoint:{run_dir / 'final.pt'}); "
                  f"learning curve: {run_dir / 'learning_curve.png'}")
