"""Baseline agents, the heuristic, tournaments, Wilson intervals and Elo."""

from __future__ import annotations

import numpy as np
import pytest
from bad_arguments import NUMBERS, is_seed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from play_helpers import find_game, purposeful_action

from satellites_env.agents import AgentSpecError, GreedyAgent, MCTSAgent, RandomAgent, make_agent
from satellites_env.agents.heuristic import final_result, heuristic_value
from satellites_env.arena import (
    PairResult,
    fit_elo,
    match,
    run_tournament,
    schedule,
    wilson_interval,
)
from satellites_env.core import Game
from satellites_env.core.rules import new_scratch
from satellites_env.placement import Placement


def play(agents, seed, max_moves=400):
    game = Game.new(seed=seed, max_moves=max_moves)
    while not game.is_over:
        action = agents[game.to_move].act(game)
        assert game.legal_mask()[action], f"{agents[game.to_move]} chose illegal {action}"
        game.play(action)
    return game


@pytest.mark.parametrize("spec", ["random", "greedy", "mcts:8"])
def test_agents_only_play_legal_actions(spec):
    for seed in range(3):
        agent = make_agent(spec, seed=seed)
        game = play([agent, make_agent("random", seed=seed + 100)], seed, max_moves=150)
        assert game.is_over


def test_agents_handle_displacement_and_grace_positions():
    positions = [
        find_game(lambda g: g.pending_push is not None, seeds=range(60)),
        find_game(lambda g: g.grace is not None, seeds=range(60)),
    ]
    for game in positions:
        for spec in ("random", "greedy", "mcts:16"):
            action = make_agent(spec, seed=0).act(game)
            assert game.legal_mask()[action]


@pytest.mark.parametrize("spec", ["random", "greedy", "mcts:16"])
def test_agents_are_deterministic_for_a_seed(spec):
    games = [
        play([make_agent(spec, seed=5), make_agent(spec, seed=6)], seed=2, max_moves=80)
        for _ in range(2)
    ]
    assert games[0].history == games[1].history


def test_agent_reset_reseeds():
    agent = RandomAgent(seed=1)
    game = Game.new(seed=0)
    first = [agent.act(game) for _ in range(5)]
    agent.reset(seed=1)
    assert [agent.act(game) for _ in range(5)] == first


def test_make_agent_specs_and_errors():
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("greedy"), GreedyAgent)
    mcts = make_agent("mcts:37")
    assert isinstance(mcts, MCTSAgent) and mcts.simulations == 37 and mcts.spec == "mcts:37"
    assert make_agent("mcts").simulations == 200
    for bad, message in [
        ("alphazero", "unknown agent spec 'alphazero'"),
        ("mcts:lots", "must be a positive integer"),
        ("mcts:0", "must be >= 1"),
        ("random:3", "unknown agent spec"),
        ("checkpoint:/no/such/file.pt", "does not exist"),
    ]:
        with pytest.raises(
            AgentSpecError if "checkpoint" not in bad else ValueError, match=message
        ):
            make_agent(bad)


SPEC_TAILS = st.one_of(
    st.text(max_size=12),
    st.integers(-(10**6), 10**12).map(str),
    st.sampled_from(
        [
            "0",
            "100000",
            "100001",
            "4096",
            "4097",
            "9" * 4301,
            "9" * 10**5,
            "-" + "9" * 5000,
            "x" * 10**6,
            "/tmp/" + "y" * 5000,
            "a/" * 3000,
            ":sample=" + "9" * 5000,
            "pretrained:" + "9" * 5000,
            "\x00",
            "\n",
        ]
    ),
)


@settings(
    max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.sampled_from(
        [
            "mcts:",
            "az:",
            "az:pretrained:",
            "checkpoint:",
            "rllib:",
            "random:",
            "greedy:",
            "",
            "zz:",
            "mcts:1:",
        ]
    ),
    SPEC_TAILS,
)
def test_fuzz_specs_raise_a_bounded_spec_error(head, tail):
    """Any spec, huge ones included: an agent or a one-line error of a documented type (all
    ValueErrors) that quotes a bounded prefix of the spec."""
    spec = head + tail
    try:
        make_agent(spec, seed=0)
    except ValueError as error:
        assert type(error).__name__ in ("AgentSpecError", "CheckpointError"), repr(error)[:300]
        message = str(error)
        assert len(message) < 1500 and "\n" not in message, message[:500]  # a path: 1024


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(NUMBERS, st.sampled_from(["random", "greedy", "mcts:2"]))
def test_fuzz_agent_seeds(seed, spec):
    """make_agent(spec, seed) and agent.reset(seed): None or 0 .. 2**64 - 1, else a
    ValueError naming the seed (not numpy's TypeError)."""
    if is_seed(seed):
        make_agent(spec, seed=seed).reset(seed=seed)
        return
    for call in (lambda: make_agent(spec, seed=seed), lambda: make_agent(spec).reset(seed)):
        with pytest.raises(ValueError, match=r"^seed must be an integer from 0 to"):
            call()


def test_final_result_kernel_agrees_with_scoring():
    scratch = new_scratch()
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(30):
        game = Game.new(seed=seed)
        while not game.is_over:
            game.play(purposeful_action(game, rng))
        score = game.score()
        for player, sign in ((0, 1), (1, -1)):
            assert final_result(game.board, sign, scratch) == score.reward(player)
        checked += score.winner is not None
    assert checked > 10


def test_heuristic_is_antisymmetric_and_bounded():
    scratch = new_scratch()
    game = find_game(lambda g: len(g.score().colonies) >= 2 and g.pending_push is None)
    red = heuristic_value(game.board, 1, scratch)
    blue = heuristic_value(game.board, -1, scratch)
    assert red == pytest.approx(-blue) and -1 < red < 1 and red != 0


def test_greedy_takes_an_immediate_win():
    """From positions one move from the end, greedy picks a winning move whenever one exists."""
    rng = np.random.default_rng(3)
    found = 0
    for seed in range(40):
        game = Game.new(seed=seed)
        while not game.is_over and found < 5:
            winning = []
            if game.pending_push is None:
                for action in game.legal_actions():
                    child = game.clone()
                    child.play(int(action))
                    if child.is_over and child.score().winner == game.to_move:
                        winning.append(int(action))
            if winning:
                choice = GreedyAgent(seed=0).act(game)
                child = game.clone()
                child.play(choice)
                assert child.is_over and child.score().winner == game.to_move
                found += 1
                break
            game.play(purposeful_action(game, rng))
    assert found >= 3


def test_wilson_interval():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_schedule_balances_colors_and_covers_pairs():
    jobs = schedule(["a", "b", "c"], games=4, seed=0)
    assert len(jobs) == 3 * 4
    assert sorted({(a, b) for _, _, a, b in jobs}) == [("a", "b"), ("a", "c"), ("b", "c")]
    with pytest.raises(ValueError, match="games per pairing"):
        schedule(["a", "b"], games=0, seed=0)


def test_tournament_accounting():
    result = run_tournament(["random", "greedy"], games=6, seed=1, max_moves=120)
    (pair,) = result.pairs
    assert pair.games == 6 and pair.a_as_red == 3
    assert pair.a_wins + pair.b_wins + pair.draws == 6
    assert len(result.records) == 6
    reds = [r.players["red"] for r in result.records]
    assert reds.count("random") == reds.count("greedy") == 3
    assert result.elo["greedy"] == 400.0  # the shipped scale's anchor
    data = result.as_dict()
    assert set(data) == {
        "agents",
        "games_per_pairing",
        "seed",
        "max_moves",
        "complete",
        "pairs",
        "elo",
        "elo_anchor",
        "games",
    }
    assert data["elo_anchor"] == "greedy" and data["games_per_pairing"] == 6
    assert data["complete"] is True
    # One vocabulary with the game records: "red", "blue", or None (null) for a draw.
    assert [g["winner"] for g in data["games"]] == [r.result["winner"] for r in result.records]
    assert {g["winner"] for g in data["games"]} <= {"red", "blue", None}
    assert [(g["red"], g["blue"]) for g in data["games"]][:2] == [
        ("random", "greedy"),
        ("greedy", "random"),
    ]
    assert [g["setup_seed"] for g in data["games"]] == [1, 1, 2, 2, 3, 3]
    # Games 2j and 2j+1 share a set-up with colors swapped.
    assert result.records[0].start_spn == result.records[1].start_spn


def test_tournament_is_reproducible_and_parallel_matches_serial():
    serial = run_tournament(["random", "greedy"], games=4, seed=2, max_moves=100)
    parallel = run_tournament(
        ["random", "greedy"], games=4, seed=2, max_moves=100, placement=Placement("processes", 2)
    )
    assert [r.moves for r in serial.records] == [r.moves for r in parallel.records]
    assert serial.as_dict() == parallel.as_dict()


def test_pair_result_counts_null_and_legacy_draw_as_draws():
    from satellites_env.core import Game
    from satellites_env.record import GameRecord

    record = GameRecord(Game.new(seed=0).to_spn(), [])
    pair = PairResult("a", "b")
    for winner, a_is_red in (
        (None, True),
        ("draw", False),
        ("red", True),
        ("red", False),
        ("blue", True),
    ):
        record.result = {"winner": winner}
        pair.add(record, a_is_red)
    assert (pair.a_wins, pair.draws, pair.b_wins) == (1, 2, 2)


def test_elo_anchor_is_the_shipped_scales_best_connected_agent_that_played():
    from satellites_env.arena import elo_anchor

    assert elo_anchor(["random", "mcts:200", "greedy"]) == "greedy"
    assert elo_anchor(["random", "mcts:200"]) == "mcts:200"
    assert elo_anchor(["mcts:2", "mcts:3"]) == "mcts:2"  # none of the scale: the first
    result = run_tournament(["random", "mcts:200"], games=2, seed=0, max_moves=30)
    assert result.elo_anchor == "mcts:200" and result.elo["mcts:200"] == 744.1
    result = run_tournament(["mcts:3", "mcts:2"], games=2, seed=0, max_moves=30)
    assert result.elo_anchor == "mcts:3" and result.elo["mcts:3"] == 0.0


def _numba_threads_then_compile() -> tuple[int, int]:
    """In a worker: numba's threads start without a compile (as when a cached parallel
    kernel is loaded), then a new function compiles (the compiler rereads the environment:
    a changed NUMBA_NUM_THREADS there is a RuntimeError once the threads run)."""
    import numba
    from numba.np.ufunc import parallel

    parallel._launch_threads()
    fresh = numba.njit(lambda x: x + 1)
    return numba.get_num_threads(), fresh(5)


def test_worker_processes_use_one_thread(monkeypatch):
    """--workers N: each worker computes on one thread (variables set before torch is
    imported; torch told directly if it came with the fork)."""
    import os
    import sys
    import types

    import numba

    from satellites_env import arena

    for name in arena.WORKER_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, initializer=arena.init_worker) as pool:
        seen = [pool.submit(os.getenv, name).result() for name in arena.WORKER_THREAD_VARIABLES]
        # numba came with the fork: told directly, and it still compiles once its threads run
        assert pool.submit(_numba_threads_then_compile).result() == (1, 6)
    assert seen == ["1"] * (len(arena.WORKER_THREAD_VARIABLES) - 1) + [None]
    assert arena.WORKER_THREAD_VARIABLES[-1] == "NUMBA_NUM_THREADS"
    assert os.getenv("OMP_NUM_THREADS") is None  # the parent process is left alone
    assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS

    for name in arena.WORKER_THREAD_VARIABLES:  # recorded, so teardown undoes init_worker's
        monkeypatch.setenv(name, "0")  # values (numba refuses a changed NUMBA_NUM_THREADS later)
    threads = []
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(set_num_threads=threads.append))
    monkeypatch.setitem(arena._agents, "stale", None)
    arena.init_worker()
    assert threads == [1] and not arena._agents


def test_tournament_rejects_bad_agent_lists():
    with pytest.raises(ValueError, match="at least 2 agents"):
        run_tournament(["random"], games=2)
    with pytest.raises(ValueError, match="distinct"):
        run_tournament(["random", "random"], games=2)
    with pytest.raises(AgentSpecError, match="unknown agent spec"):
        run_tournament(["random", "grady"], games=2)


def test_elo_of_identical_agents_is_about_equal():
    pairs = [PairResult("random", "copy", games=200, a_wins=98, b_wins=97, draws=5)]
    elo = fit_elo(["random", "copy"], pairs)
    assert elo["random"] == 0.5 and abs(elo["copy"] - 0.5) < 15


def test_elo_orders_and_matches_logistic_expectation():
    # 75% score is +191 Elo under the logistic model.
    pairs = [PairResult("random", "strong", games=400, a_wins=100, b_wins=300)]
    elo = fit_elo(["random", "strong"], pairs, prior_games=0)
    assert elo["strong"] == pytest.approx(400 * np.log10(3), abs=1)
    pairs = [
        PairResult("random", "b", games=100, a_wins=10, b_wins=90),
        PairResult("random", "c", games=100, a_wins=2, b_wins=98),
        PairResult("b", "c", games=100, a_wins=30, b_wins=70),
    ]
    elo = fit_elo(["random", "b", "c"], pairs)
    assert 0 < elo["b"] < elo["c"]


def test_match_between_agent_objects():
    result = match(GreedyAgent(seed=0), RandomAgent(seed=0), games=2, seed=0, max_moves=100)
    assert result.games == 2 and result.a == "greedy" and result.b == "random"


def test_elo_against_known_ratings_matches_the_logistic_model_and_fit_elo():
    from satellites_env.arena import elo_against

    # 75% against a 0-rated opponent is +191 under the logistic model (the half virtual draw
    # moves it a little towards 0).
    elo, low, high = elo_against([(0.0, 3000.0, 4000)])
    assert elo == pytest.approx(400 * np.log10(3), abs=1) and low < elo < high
    assert high - low == pytest.approx(
        2 * 1.96 * 400 / np.log(10) / np.sqrt(4001 * 0.75 * 0.25), rel=0.01
    )
    # the same games as a tournament with the opponent anchored: the same rating
    pairs = [PairResult("random", "x", games=200, a_wins=40, b_wins=150, draws=10)]
    fitted = fit_elo(["random", "x"], pairs)["x"]
    assert elo_against([(0.5, 155.0, 200)])[0] == pytest.approx(fitted, abs=1)
    # more games, a narrower interval; a clean sweep stays finite; the scale shifts with
    # the opponent's rating
    narrow = elo_against([(0.0, 1500.0, 2000)])
    wide = elo_against([(0.0, 15.0, 20)])
    assert narrow[2] - narrow[1] < wide[2] - wide[1]
    assert np.isfinite(elo_against([(0.0, 50.0, 50)])[0])
    assert elo_against([(445.0, 10.0, 20)])[0] == pytest.approx(445.0, abs=1e-6)
    with pytest.raises(ValueError):
        elo_against([(0.0, 0.0, 0)])


def test_the_baseline_tournament_is_stored_on_the_shipped_scale():
    """results/baselines.json holds Elo fitted as `evaluate` fits it today: greedy pinned at
    its shipped rating, and mcts:200 lands near its shipped rating too."""
    import json
    from pathlib import Path

    from satellites_env.arena import BASELINE_ELO
    from satellites_env.rating import SCALE

    data = json.loads((Path(__file__).parents[2] / "results" / "baselines.json").read_text())
    pairs = [
        PairResult(p["a"], p["b"], p["games"], p["a_wins"], p["b_wins"], p["draws"])
        for p in data["pairs"]
    ]
    fitted = fit_elo(data["agents"], pairs)
    assert data["elo_anchor"] == "greedy" and set(BASELINE_ELO) == set(data["agents"])
    for agent in data["agents"]:
        assert data["elo"][agent] == pytest.approx(fitted[agent], abs=0.1)
        assert BASELINE_ELO[agent] == SCALE[agent]
    assert fitted["mcts:200"] == pytest.approx(SCALE["mcts:200"], abs=5)
