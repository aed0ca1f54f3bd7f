"""Replaying a record costs time and memory linear in its moves (issue 58): each replayed
position is a light copy holding its last move, not the whole history before it, so a legal
game of thousands of moves replays in about a second, not in O(n^2)."""

from __future__ import annotations

import time

from satellites_env.core import Game
from satellites_env.core.board import MAX_MOVES_LIMIT
from satellites_env.record import GameRecord


def shuttle() -> tuple[Game, list[str]]:
    """A start and four moves that make no connection and undo each other (red there and
    back, blue there and back): repeated, a legal game of any length."""
    game = Game.new(seed=0, max_moves=MAX_MOVES_LIMIT)

    def quiet(position: Game, text: str) -> Game | None:
        after = position.clone()
        try:
            after.play_move(text)
        except ValueError:
            return None
        same = after.connected_counts == position.connected_counts and not after.is_over
        return after if same else None

    for red in game.legal_moves():
        a, _, b = red.partition("-")
        after_red = quiet(game, red)
        if ">" in red or after_red is None:
            continue
        for blue in after_red.legal_moves():
            c, _, d = blue.partition("-")
            after_blue = quiet(after_red, blue)
            if ">" in blue or after_blue is None:
                continue
            back = quiet(after_blue, f"{b}-{a}")
            if back is not None and quiet(back, f"{d}-{c}") is not None:
                return game, [red, blue, f"{b}-{a}", f"{d}-{c}"]
    raise AssertionError("no shuttle found")


def test_a_long_legal_game_replays_in_linear_time_and_memory():
    start, cycle = shuttle()
    record = GameRecord(start.to_spn(), cycle * 2_000, MAX_MOVES_LIMIT)  # 8,000 moves
    began = time.perf_counter()
    positions = record.replay()
    assert time.perf_counter() - began < 20  # O(n^2) history copies: 32 million
    assert len(positions) == 8_001
    assert positions[0].history == [] and positions[0].to_spn() == start.to_spn()
    assert all(len(game.history) <= 1 for game in positions)
    assert [positions[k].history[-1] for k in (1, 2, 7_999, 8_000)] == [
        cycle[0],
        cycle[1],
        cycle[2],
        cycle[3],
    ]
    assert positions[4].to_spn() != positions[0].to_spn()  # the move counter moved on
    assert positions[4].board.tolist() == positions[0].board.tolist()


def test_a_light_copy_is_independent_of_the_game_it_copies():
    game = Game.new(seed=1)
    for text in game.legal_moves()[:1]:
        game.play_move(text)
    light = game.clone(light=True)
    assert light.history == game.history[-1:] and light.to_spn() == game.to_spn()
    move = light.legal_moves()[0]
    light.play_move(move)
    assert game.to_spn() != light.to_spn() and len(game.history) == 1
    assert light.history[-1] == move
