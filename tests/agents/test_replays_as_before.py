"""A tournament with fixed seeds replays move for move as it did before the engine API.

`data/tournament_seed7.json` was written by the code of commit 6a36c25 (before the engine
API, the batched engine and the search seam) with
`run_tournament(["random", "greedy", "mcts:8"], 2, seed=7, max_moves=200)`; its
reasons say `1 colony` where the engine of then said `1 colonies`.
"""

from __future__ import annotations

import json
from pathlib import Path

from satellites_env.arena import run_tournament

REFERENCE = Path(__file__).with_name("data") / "tournament_seed7.json"


def test_fixed_seed_tournament_replays_move_for_move():
    reference = json.loads(REFERENCE.read_text())
    result = run_tournament(["random", "greedy", "mcts:8"], 2, 7, max_moves=200)
    assert len(result.records) == len(reference)
    for record, before in zip(result.records, reference, strict=False):
        assert record.players == before["players"]
        assert record.start_spn == before["start_spn"]
        assert record.moves == before["moves"]
        assert record.result["final_spn"] == before["result"]["final_spn"]
        assert record.result["reason"] == before["result"]["reason"]


def test_one_simulation_search_ranks_unvisited_moves_by_their_prior():
    import warnings

    from satellites_env.agents import make_agent
    from satellites_env.core import Game

    game = Game.new(seed=0)
    agent = make_agent("mcts:1", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by zero visits
        for _ in range(20):
            game.play(agent.act(game))


AZ_REFERENCE = Path(__file__).with_name("data") / "tournament_az_seed11.json"


def test_the_shipped_network_replays_move_for_move():
    """`data/tournament_az_seed11.json` was written by the code of commit 8ff50a3 (before the
    search record, the options removed from the learner and the converted pretrained.pt) with
    `run_tournament(["az:pretrained:4", "checkpoint:pretrained", "greedy"], 2, seed=11,
    max_moves=120)`: the search agent and the raw policy play the same moves."""
    reference = json.loads(AZ_REFERENCE.read_text())
    result = run_tournament(
        ["az:pretrained:4", "checkpoint:pretrained", "greedy"], 2, 11, max_moves=120
    )
    assert len(result.records) == len(reference) == 6
    for record, before in zip(result.records, reference, strict=False):
        assert record.start_spn == before["start_spn"]
        assert record.moves == before["moves"]
        assert record.result["final_spn"] == before["result"]["final_spn"]
