"""`python_satellites` in OpenSpiel: OpenSpiel's own consistency test, and our checks that its
legal actions, observations, strings and returns are the engine's, move for move."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from satellites_env.core import Game, IllegalActionError
from satellites_env.observation import Observer
from satellites_env.openspiel.game import (
    GAME_NAME,
    SETUP_SLOTS,
    position_text,
    setup_outcomes,
    state_from_game,
)


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game(GAME_NAME)


def test_openspiel_random_sim_test_with_serialisation():
    # OpenSpiel's checks: cloning, serialisation, legal-action masks, unique action strings,
    # observation tensors, returns; short games (a 60-move cap) and one full-length game
    pyspiel.random_sim_test(
        pyspiel.load_game(GAME_NAME, {"max_moves": 60}), num_sims=3, serialize=True, verbose=False
    )
    pyspiel.random_sim_test(pyspiel.load_game(GAME_NAME), num_sims=1, serialize=True, verbose=False)


def test_game_type_and_sizes(game):
    kind = game.get_type()
    assert kind.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert game.num_distinct_actions() == 3217
    assert game.max_chance_outcomes() == 4
    assert game.observation_tensor_shape() == [10, 10, 22]
    assert game.max_game_length() == 800
    assert str(pyspiel.load_game("python_satellites(max_moves=50)")) == (
        "python_satellites(max_moves=50)"
    )


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_the_chance_outcomes_of_a_seed_give_its_set_up(game, seed):
    state = game.new_initial_state()
    for outcome in setup_outcomes(seed):
        assert state.is_chance_node()
        probabilities = dict(state.chance_outcomes())
        assert sum(probabilities.values()) == pytest.approx(1.0)
        assert outcome in probabilities
        state.apply_action(outcome)
    assert state.game == Game.new(seed=seed)
    assert str(state) == Game.new(seed=seed).to_spn()


def test_the_set_up_draws_each_players_values_without_replacement(game):
    state = game.new_initial_state()
    for _ in range(3):
        state.apply_action(3)  # red's three 4s
    assert [a for a, _ in state.chance_outcomes()] == [0, 1, 2]
    assert dict(state.chance_outcomes())[0] == pytest.approx(3 / 9)
    with pytest.raises(ValueError, match="not possible"):
        state.apply_action(3)
    for _ in range(9):
        state.apply_action(state.chance_outcomes()[0][0])
    assert len(state.chance_outcomes()) == 4  # blue starts with all 12 of its own
    assert str(state).startswith("set-up DDDAAABBBCCC")


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_legal_actions_observations_and_strings_are_the_engines_move_for_move(game, seed):
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    for outcome in setup_outcomes(seed):
        state.apply_action(outcome)
    ours = Game.new(seed=seed)
    observer = Observer()
    while not ours.is_over:
        player = ours.to_move
        assert state.current_player() == player
        mask = observer.observe(ours, player, to_act=True)["action_mask"]
        assert state.legal_actions() == np.flatnonzero(mask).tolist()
        assert state.legal_actions_mask() == mask.tolist()
        for seat in (0, 1):
            planes = observer.observe(ours, seat, to_act=False)["observation"]
            assert np.array_equal(np.asarray(state.observation_tensor(seat)), planes.ravel())
        if ours.pending_push is None:
            assert str(state) == ours.to_spn()
        else:
            spn, move = str(state).rsplit(" ", 1)
            before = Game.from_spn(spn)
            assert before.is_displacement(ours.actions[-1])
            assert before.describe(ours.actions[-1]) == move
        action = int(rng.choice(np.flatnonzero(mask)))
        assert state.action_to_string(player, action) == ours.describe(action)
        state.apply_action(action)
        ours.play(action)
    assert state.is_terminal()
    red = ours.score().reward(0)
    assert state.returns() == [red, -red]
    assert state.legal_actions() == []


def test_serialisation_is_exact_at_every_kind_of_node(game):
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    seen = set()
    while not state.is_terminal():
        kind = (
            "chance"
            if state.is_chance_node()
            else "pending"
            if state.game.pending_push is not None
            else "move"
        )
        if kind not in seen or rng.random() < 0.05:
            seen.add(kind)
            copy = game.deserialize_state(state.serialize())
            assert str(copy) == str(state)
            assert copy.history() == state.history()
            assert copy.legal_actions() == state.legal_actions()
            if not state.is_chance_node():
                assert copy.game == state.game and copy.game.history == state.game.history
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probabilities)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    copy = game.deserialize_state(state.serialize())
    assert copy.is_terminal() and copy.returns() == state.returns()
    assert {"chance", "move"} <= seen


def test_clone_is_independent(game):
    state = game.new_initial_state()
    for outcome in setup_outcomes(0):
        state.apply_action(outcome)
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[0])
    assert str(state) == Game.new(seed=0).to_spn() != str(clone)


def test_a_state_from_an_spn_position_or_a_game(game):
    position = Game.new(seed=2)
    position.play(int(position.legal_actions()[5]))
    state = game.new_initial_state(position.to_spn())
    assert str(state) == position.to_spn()
    assert state.legal_actions() == position.legal_actions().tolist()
    copy = state_from_game(game, position)
    assert copy.game == position and copy.game is not position
    with pytest.raises(ValueError, match="max_moves"):
        state_from_game(pyspiel.load_game(GAME_NAME, {"max_moves": 10}), position)
    with pytest.raises(ValueError):
        game.new_initial_state("not an spn")


def test_illegal_actions_are_refused_and_change_nothing(game):
    state = game.new_initial_state()
    for outcome in setup_outcomes(0):
        state.apply_action(outcome)
    before = str(state)
    with pytest.raises(IllegalActionError):
        state.apply_action(3216)  # a pass, legal only without a move
    assert str(state) == before


def test_a_pending_displacement_is_written_as_the_position_before_and_the_move():
    rng = np.random.default_rng(11)
    for seed in range(40):
        ours = Game.new(seed=seed)
        while not ours.is_over:
            legal = ours.legal_actions()
            pushes = [a for a in legal if ours.is_displacement(int(a))]
            if pushes:
                before = ours.to_spn()
                ours.play(int(pushes[0]))
                text = position_text(ours)
                assert text == f"{before} {ours.describe(int(pushes[0]))}"
                return
            ours.play(int(rng.choice(legal)))
    pytest.fail("no displacement in 40 random games")


def test_the_set_up_has_24_chance_nodes(game):
    state = game.new_initial_state()
    nodes = 0
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
        nodes += 1
    assert nodes == SETUP_SLOTS == game.max_chance_nodes_in_history()
