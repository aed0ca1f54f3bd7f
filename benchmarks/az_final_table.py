"""How long an AlphaZero run's final table takes, and one evaluation along the way.

    PYTHONPATH=. .venv/bin/python benchmarks/az_final_table.py --network runs/az_quick/final.pt
        [--config az_quick]

Builds the config's trainer in a temporary folder with the network of `--network` (a run's
`final.pt`) and times its final evaluation (`eval.final`: the raw policy and the search agent
against each opponent, in `distributed.workers` processes, as at the end of `satellites
train`), then one evaluation of the kind the run plays every `eval.every` iterations. It
prints the wall seconds of each, the CPU seconds of the evaluation processes (both
evaluations), the load average and the table.

`training` is imported from the Python path, so `PYTHONPATH=OTHER_CHECKOUT` times another
commit's evaluation with this script, taking turns with this one.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--network", required=True, help="a run's final.pt")
    parser.add_argument("--config", default="az_quick")
    args = parser.parse_args()

    import training
    from training.alphazero.agent import load_network
    from training.alphazero.trainer import AZTrainer
    from training.common.config import load_config

    config = load_config(args.config)
    print(f"training from {Path(training.__file__).parent.parent}")
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    with tempfile.TemporaryDirectory() as folder:
        trainer = AZTrainer(config, Path(folder) / "run")
        try:
            trainer.net.load_state_dict(load_network(args.network).state_dict())
            tick = time.perf_counter()
            final = trainer.evaluate(final=True)
            final_seconds = time.perf_counter() - tick
            tick = time.perf_counter()
            trainer.evaluate()
            along_seconds = time.perf_counter() - tick
        finally:
            trainer.close()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"final table {final_seconds:.1f} s, one evaluation along the way {along_seconds:.1f} s "
        f"(wall); evaluation processes {used.ru_utime + used.ru_stime:.1f} CPU s"
    )
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    for key, result in final.results.items():
        print(f"{key}: {result['a_wins']} / {result['draws']} / {result['b_wins']} (W / D / L)")


if __name__ == "__main__":
    main()
