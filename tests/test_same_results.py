"""Same seed, same results: a tournament, a ladder, a tiny AlphaZero run, a tiny PPO run and a
tiny exploit, each with fixed seeds, give the outputs recorded here (a sha256 of each), so a
change meant to keep behaviour (a refactor) shows at once if it changed a game.

Every run is on one thread in this process (the `local` back end), so the hashes do not
depend on the machine's core count or timing. Network weights are hashed rounded to 1e-5
(`rounded`), the evaluation history by its results (not its wall times).

When results change on purpose (a new rule, a changed search), print the new hashes with

    PYTHONPATH=. python tests/test_same_results.py

and paste them into `EXPECTED`, saying in the commit why the games changed.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

TESTS = Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS / "training"), str(TESTS / "training" / "alphazero")]

EXPECTED = {
    "tournament": "c4ca0814378b55be515ac08dc39ad2d2354657febd4f28cc4ab78bfa20df72c0",
    "ladder": "fd4d84a8a2abf43ad5c7a2848e2f8f0867ebad0d6583b34413021d8f3d2853ba",
    "alphazero": "8ca3cb236001dcefee118fde759abed2878b1d8dec39490d9963280f3210d631",
    "ppo": "9006bf470204708d2cd04210092319d81538abfcccb70734cf3655f02cfc5ab7",
    "exploit": "1dba53ed8fee54472795809a0191909e520dc4734cca6f48b2489ac898c24352",
}


def digest(data: Any) -> str:
    """The sha256 of `data` as canonical JSON."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def rounded(net: Any) -> dict[str, list]:
    """A network's weights rounded to 1e-5 (torch's last bits may differ between builds)."""
    return {
        key: [round(float(x), 5) + 0.0 for x in value.detach().flatten().tolist()]
        for key, value in net.state_dict().items()
        if value.is_floating_point()
    }


def history(trainer: Any) -> list:
    """A run's evaluations: progress and results, without their wall times."""
    return [[e.progress, e.final, e.results] for e in trainer.history]


def quiet() -> Any:
    from rich.console import Console

    return Console(file=open("/dev/null", "w"))


def tournament(_: Path) -> str:
    from satellites_env.arena import run_tournament

    result = run_tournament(["random", "greedy", "mcts:2"], games=2, seed=5, max_moves=40)
    records = [r.as_dict() if r is not None else None for r in result.records]
    pairs = [p.as_dict() for p in result.pairs]
    return digest([records, pairs, result.game_summaries()])


def ladder(folder: Path) -> str:
    from satellites_env.ladder import Ladder

    with Ladder(folder / "ladder.db", seed=11, max_moves=40) as lad:
        for spec in ("random", "greedy", "mcts:2"):
            lad.add(spec)
        lad.run(2)
        names = {e.id: e.spec for e in lad.agents()}
        rows = [(names[a], names[b], record.as_dict()) for _, a, b, record in lad.game_rows()]
    return digest(sorted(rows, key=lambda row: json.dumps(row, sort_keys=True)))


def alphazero(folder: Path) -> str:
    from test_az_training import TINY

    from training.alphazero.config import AZConfig
    from training.alphazero.trainer import AZTrainer

    trainer = AZTrainer(AZConfig.from_dict(TINY), folder, console=quiet())
    trainer.run()
    return digest([rounded(trainer.net), history(trainer)])


def ppo(folder: Path) -> str:
    from test_training import tiny_config

    from training.ppo.trainer import PPOTrainer

    trainer = PPOTrainer(tiny_config(), folder, console=quiet())
    trainer.run()
    return digest([rounded(trainer.net), history(trainer)])


def exploit(folder: Path) -> str:
    from test_az_training import TINY

    from training.alphazero.trainer import AZTrainer
    from training.exploit import exploit_config

    # a budget of positions, not of minutes: the same work on any machine
    data = {**TINY, "learner": "alphazero", "total_positions": 100, "positions_per_iteration": 50}
    (folder / "tiny.yaml").write_text(yaml.safe_dump(data))
    config, _ = exploit_config("greedy", 0, folder / "tiny.yaml", seed=7, games=2)
    trainer = AZTrainer(config, folder / "run", console=quiet())
    trainer.run()
    return digest([rounded(trainer.net), history(trainer)])


RUNS = {
    "tournament": tournament,
    "ladder": ladder,
    "alphazero": alphazero,
    "ppo": ppo,
    "exploit": exploit,
}


def test_same_seed_same_results(tmp_path: Path) -> None:
    got = {}
    for name, run in RUNS.items():
        folder = tmp_path / name
        folder.mkdir()
        got[name] = run(folder)
    assert got == EXPECTED


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for name, run in RUNS.items():
            (Path(tmp) / name).mkdir()
            print(f'    "{name}": "{run(Path(tmp) / name)}",')
