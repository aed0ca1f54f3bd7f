"""Bots both ways: OpenSpiel's MCTS bot as the agent `openspiel-mcts:N` (in `satellites
evaluate` too), and our agents as `pyspiel.Bot`s in OpenSpiel's own evaluation loop."""

from __future__ import annotations

import json

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
from open_spiel.python.algorithms.mcts import MCTSBot, RandomRolloutEvaluator

from satellites_env.agents import AgentSpecError, make_agent
from satellites_env.cli import main
from satellites_env.core import Game
from satellites_env.openspiel.bots import AgentBot
from satellites_env.openspiel.game import GAME_NAME


@pytest.mark.parametrize("spec", ["openspiel-mcts:8", "openspiel-mcts:8:heuristic"])
def test_the_openspiel_mcts_spec_plays_legal_actions_and_is_seeded(spec):
    game = Game.new(seed=4, max_moves=40)
    first = make_agent(spec, seed=1)
    assert first.spec == spec
    actions = []
    while not game.is_over and len(actions) < 6:
        action = first.act(game)
        assert game.legal_mask()[action]
        actions.append(action)
        game.play(action)
    again = make_agent(spec, seed=1)
    replay = Game.new(seed=4, max_moves=40)
    for action in actions:
        assert again.act(replay) == action
        replay.play(action)


@pytest.mark.parametrize(
    "spec",
    ["openspiel-mcts:0", "openspiel-mcts:x", "openspiel-mcts:-3", "openspiel-mcts:8:greedy"],
)
def test_bad_openspiel_mcts_specs_are_refused(spec):
    with pytest.raises(AgentSpecError, match="openspiel-mcts"):
        make_agent(spec)


def test_the_heuristic_evaluator_values_a_leaf_as_mcts_does():
    """`openspiel-mcts:N:heuristic`'s leaf value is `mcts:N`'s: the same seeded rollout and
    heuristic, for both players (zero-sum), with uniform priors."""
    from satellites_env.agents.lookahead import seed_rollouts
    from satellites_env.agents.mcts import HeuristicEvaluator
    from satellites_env.openspiel.game import state_from_game
    from satellites_env.openspiel.mcts import HeuristicRollout

    game = Game.new(seed=7, max_moves=200)
    players = make_agent("random", seed=0), make_agent("greedy", seed=0)
    for _ in range(30):  # far enough into a lopsided game for the heuristic to see colonies
        game.play(players[game.to_move].act(game))
    spiel_game = pyspiel.load_game(GAME_NAME, {"max_moves": 200})
    state = state_from_game(spiel_game, game)
    seed_rollouts(11)
    red, blue = HeuristicRollout().evaluate(state)
    seed_rollouts(11)
    ours = HeuristicEvaluator().evaluate(game.state.copy(), game.legal_actions(), 200)
    sign = 1 - 2 * game.to_move  # ours is the player to move's
    assert red != 0 and red == pytest.approx(ours.value * sign) and blue == -red
    prior = HeuristicRollout().prior(state)
    assert [a for a, _ in prior] == [int(a) for a in game.legal_actions()]
    assert sum(p for _, p in prior) == pytest.approx(1.0)


def test_the_default_is_200_simulations():
    assert make_agent("openspiel-mcts").simulations == 200


def test_openspiel_mcts_plays_in_satellites_evaluate(tmp_path, capsys):
    out = tmp_path / "results.json"
    argv = ["evaluate", "--agents", "openspiel-mcts:3", "random", "--games", "2"]
    status = main([*argv, "--max-moves", "30", "--seed", "1", "--out", str(out)])
    assert status == 0, capsys.readouterr()
    results = json.loads(out.read_text())
    assert "openspiel-mcts:3" in json.dumps(results)
    assert "openspiel-mcts:3" in capsys.readouterr().out


def test_our_agents_as_openspiel_bots_in_openspiels_evaluation_loop():
    game = pyspiel.load_game(GAME_NAME, {"max_moves": 80})
    bots = [AgentBot("greedy", seed=0), AgentBot(make_agent("random", seed=1))]
    returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))
    assert returns[0] == -returns[1] and returns[0] in (-1.0, 0.0, 1.0)


def test_openspiels_mcts_bot_against_our_agent_bot():
    game = pyspiel.load_game(GAME_NAME, {"max_moves": 20})
    rng = np.random.RandomState(0)
    theirs = MCTSBot(game, 2.0, 4, RandomRolloutEvaluator(1, rng), random_state=rng)
    returns = evaluate_bots(game.new_initial_state(), [theirs, AgentBot("mcts:4", seed=0)], rng)
    assert returns[0] == -returns[1]


def test_an_agent_bot_refuses_states_of_other_games():
    bot = AgentBot("random")
    other = pyspiel.load_game("tic_tac_toe").new_initial_state()
    with pytest.raises(TypeError, match="python_satellites"):
        bot.step(other)
