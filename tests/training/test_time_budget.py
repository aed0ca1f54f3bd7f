"""`minutes` bounds the whole run, final table included: training and its evaluations stop
with a share left for the final table, whose games stop where the budget runs out; and the
search's own final table (`eval.search_final`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from training.alphazero.config import AZConfig
from training.alphazero.trainer import AZTrainer
from training.common.evaluation import FINAL_SHARE

sys.path.insert(0, str(Path(__file__).parent / "alphazero"))
from test_az_training import TINY, quiet


def timed(method, durations):
    """`method`, each call's duration appended to `durations`."""

    def call(*args, **kwargs):
        tick = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            durations.append(time.perf_counter() - tick)

    return call


def test_a_minutes_run_ends_within_its_budget_final_table_included(tmp_path):
    minutes = 0.25
    config = AZConfig.from_dict(
        {
            **TINY,
            "total_positions": 10**9,
            "minutes": minutes,
            "eval": {**TINY["eval"], "every": 3, "final": {"random": 4000, "greedy": 4000}},
        }
    )
    trainer = AZTrainer(config, tmp_path, console=quiet())
    steps, calls = [], []  # how long each iteration, each call of games.play took
    trainer.iterate = timed(trainer.iterate, steps)
    evaluations, saves, tables, deadlines = [], [], [], []
    trainer.evaluate = timed(trainer.evaluate, evaluations)
    trainer.save = timed(trainer.save, saves)
    trainer.games.play = timed(trainer.games.play, calls)
    play_in_rounds = timed(trainer.games.play_in_rounds, tables)
    before = []  # how many games.play calls the evaluations along the run made

    def in_rounds(matches, net, max_moves, seconds, progress=None):
        before.append(len(calls))
        deadlines.append(seconds)
        return play_in_rounds(matches, net, max_moves, seconds, progress)

    trainer.games.play_in_rounds = in_rounds
    tick = time.perf_counter()
    final = trainer.run()
    wall = time.perf_counter() - tick
    budget, c = minutes * 60, trainer.counters
    # training and its evaluations stopped at their share, one iteration past it at most
    spent = c.seconds + c.other_seconds
    one_more = max(steps) + max(evaluations) + 3 * max(saves)
    assert (1 - FINAL_SHARE) * budget <= spent <= (1 - FINAL_SHARE) * budget + one_more
    # the final table stopped where the rest ran out (a round past it at most), cut short
    # with colours balanced; its rounds are the games.play calls after the run's own
    assert len(tables) == len(deadlines) == 1
    rounds = calls[before[0] :]
    assert deadlines[0] == max(budget - spent, FINAL_SHARE * budget)
    assert sum(rounds) <= tables[0] <= deadlines[0] + max(rounds)
    games = {key: r["games"] for key, r in final.results.items()}
    assert set(games) == {"random", "greedy", "search:random", "search:greedy"}
    assert all(0 < n < 4000 and n % 2 == 0 for n in games.values())
    # the whole run within its budget, but for one iteration, one round and a few seconds
    # for starting and saving
    assert wall <= budget + one_more + max(rounds) + 5


def test_the_search_plays_its_own_final_table(tmp_path):
    config = AZConfig.from_dict(
        {
            **TINY,
            "total_positions": 40,
            "eval": {**TINY["eval"], "final": {"random": 2}, "search_final": {"greedy": 4}},
        }
    )
    final = AZTrainer(config, tmp_path, console=quiet()).run()
    assert {k: r["games"] for k, r in final.results.items()} == {"random": 2, "search:greedy": 4}
