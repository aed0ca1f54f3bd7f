"""Illegal actions are explained in words, naming the rule that forbids them."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from play_helpers import purposeful_action

from satellites_env.core import Game
from satellites_env.core.board import N_ACTIONS
from satellites_env.core.explain import explain_illegal

# Every explanation names a rule, except the plain facts of the board.
NAMES_A_RULE = re.compile(
    r"\(R\d+(\.\d)?(, R\d+)*\)|there is no satellite on [a-j]\d+|"
    r"no displacement is waiting"
)


def _positions(seed: int, plies: int):
    """Positions along one purposeful game (connections, colonies and displacements happen)."""
    rng = np.random.default_rng(seed)
    game = Game.new(seed=seed)
    for _ in range(plies):
        if game.is_over:
            break
        yield game
        game.play(purposeful_action(game, rng))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), plies=st.integers(1, 120), sample=st.integers(0, 2**31 - 1))
def test_every_illegal_action_gets_a_reason(seed, plies, sample):
    rng = np.random.default_rng(sample)
    for game in _positions(seed, plies):
        illegal = np.flatnonzero(game.legal_mask() == 0)
        for action in rng.choice(illegal, size=min(30, len(illegal)), replace=False):
            before = game.state.copy()
            reason = explain_illegal(game.state, int(action))
            assert NAMES_A_RULE.search(reason), (game.to_spn(), int(action), reason)
            assert np.array_equal(game.state, before)  # explaining changes nothing


def test_messages_name_the_rule_for_common_mistakes():
    game = Game.new(seed=0)  # red to move; b4 holds a blue 1, c10 a red 4 on the north edge
    assert "red moves only its own satellites (R6)" in explain_illegal(game.state, 1960)
    assert "no satellite on a10" in explain_illegal(game.state, 5)
    too_far = next(
        a
        for a in range(N_ACTIONS - 17)
        if not game.legal_mask()[a] and game.board[a // 32] == 1 and a % 4 >= 1
    )
    assert "a satellite of value 1 moves 1 cell, not" in explain_illegal(game.state, too_far)


def test_game_api_outcome_repr_eq_and_action_ids():
    from satellites_env.core.board import Player
    from satellites_env.core.outcome import Termination

    game = Game.new(seed=3)
    assert repr(game) == f"Game({game.to_spn()!r}, max_moves=400)"
    twin = Game.from_spn(game.to_spn())
    assert twin == game and twin is not game and game.outcome() is None
    assert game.turn is Player.RED and game.turn.other is Player.BLUE and game.turn.sign == 1
    rng = np.random.default_rng(3)
    while not game.is_over:
        game.play(purposeful_action(game, rng))
    assert twin != game
    assert len(game.actions) >= len(game.history)
    replayed = Game.from_spn(twin.to_spn())
    for action in game.actions:
        replayed.play(action)
    assert replayed == game and replayed.history == game.history
    outcome = game.outcome()
    assert outcome.termination in (Termination.CONNECTED, Termination.GRACE, Termination.PASSES)
    assert outcome.winner_name == {0: "red", 1: "blue", None: None}[game.score().winner]
    assert outcome.reason.endswith(game.score().reason)
