"""`satellites_env.tournament` from Python, without the command line: a tournament stopped by
Ctrl-C keeps its games in its outputs, and the same call continues it to the results of an
uninterrupted run."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from satellites_env import arena, tournament
from satellites_env.arena import TournamentInterrupted
from satellites_env.pairing import pairing_game
from satellites_env.placement import Placement

AGENTS, GAMES, SEED, MAX_MOVES = ["random", "greedy", "mcts:2"], 4, 3, 40


class StopAt(tournament.Reporter):
    """Ctrl-C once `at` games are finished; keeps the messages."""

    def __init__(self, at: int | None = None):
        self.at, self.messages, self.ended_with = at, [], None

    def games(self, done, total):
        if done == self.at:
            raise KeyboardInterrupt

    def ended(self, result):
        self.ended_with = result

    def message(self, text):
        self.messages.append(text)


def play(tmp_path, reporter=None, **options):
    return tournament.play(
        AGENTS,
        GAMES,
        SEED,
        Placement(),
        MAX_MOVES,
        out=tmp_path / "out.json",
        records=tmp_path / "games",
        reporter=reporter,
        **options,
    )


def test_play_saves_stops_on_ctrl_c_and_continues(tmp_path, monkeypatch):
    full = play(tmp_path / "full")
    expected = json.loads((tmp_path / "full" / "out.json").read_text())
    assert full.complete and expected == full.as_dict()
    assert (tmp_path / "full" / "games" / tournament.INDEX).is_file()

    stop = StopAt(5)
    with pytest.raises(TournamentInterrupted) as interrupted:
        play(tmp_path, stop)
    assert interrupted.value.result.finished == [0, 1, 2, 3, 4]
    assert stop.ended_with is not None and not stop.ended_with.complete
    kept = json.loads((tmp_path / "out.json").read_text())
    assert kept["complete"] is False and len(kept["games"]) == 5
    assert len(list((tmp_path / "games").glob("game_*.json"))) == 5

    calls = []
    real = arena.run_job
    monkeypatch.setattr(arena, "run_job", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    again = StopAt()
    result = play(tmp_path, again)
    assert len(calls) == 3 * GAMES - 5
    assert any("5 of 12 games finished, 7 to play" in m for m in again.messages)
    assert result.as_dict() == expected == json.loads((tmp_path / "out.json").read_text())
    manifest = json.loads((tmp_path / "games" / tournament.MANIFEST).read_text())
    assert manifest["complete"] is True


def test_finished_games_can_be_handed_over_in_memory(tmp_path):
    with pytest.raises(TournamentInterrupted) as interrupted:
        tournament.play(AGENTS, GAMES, SEED, Placement(), MAX_MOVES, reporter=StopAt(3))
    partial = interrupted.value.result
    finished = {k: partial.records[k] for k in partial.finished}
    result = tournament.play(
        AGENTS, GAMES, SEED, Placement(), MAX_MOVES, finished=finished, out=tmp_path / "out.json"
    )
    assert (
        result.as_dict()
        == arena.run_tournament(AGENTS, GAMES, SEED, Placement(), MAX_MOVES).as_dict()
    )


def test_outputs_of_another_tournament_are_refused_before_any_game(tmp_path, monkeypatch):
    with pytest.raises(TournamentInterrupted):
        play(tmp_path, StopAt(2))
    monkeypatch.setattr(
        tournament, "run_tournament", lambda *a, **k: pytest.fail("a game was played")
    )
    with pytest.raises(tournament.TournamentError, match="other settings"):
        tournament.play(AGENTS, GAMES, SEED + 1, Placement(), MAX_MOVES, records=tmp_path / "games")


@given(st.integers(0, 10_000), st.integers(0, 2**31 - 1))
def test_the_pairing_rule_shares_each_setup_between_two_games_colours_swapped(j, seed):
    """Games 2j and 2j+1 of a pairing start from one set-up with the colours swapped, and
    every game reseeds its two agents differently from any other game of the pairing."""
    even, odd = pairing_game(2 * j, seed), pairing_game(2 * j + 1, seed)
    assert even.setup_seed == odd.setup_seed == seed + j
    assert even.a_is_red and not odd.a_is_red
    assert even.colors("x", "y") == {"red": "x", "blue": "y"} == odd.colors("y", "x")
    seeds = {even.seed_a, even.seed_b, odd.seed_a, odd.seed_b}
    assert len(seeds) == 4 and seeds.isdisjoint(
        {pairing_game(2 * j + 2, seed).seed_a, pairing_game(2 * j + 2, seed).seed_b}
    )


def test_a_pairing_game_is_the_pairing_rule_s_game():
    """`play_pairing_game` plays the rule's set-up and colours, and its agents play as if
    reset with the rule's seeds."""
    from satellites_env.agents import make_agent
    from satellites_env.arena import play_game, play_pairing_game

    for i in range(3):
        rule = pairing_game(i, 9)
        record = play_pairing_game(make_agent("random"), make_agent("mcts:2"), i, 9, 30)
        a, b = make_agent("random"), make_agent("mcts:2")
        a.reset(seed=rule.seed_a)
        b.reset(seed=rule.seed_b)
        red, blue = (a, b) if rule.a_is_red else (b, a)
        assert record.as_dict() == play_game(red, blue, rule.setup_seed, 30).as_dict()
        assert record.players == rule.colors("random", "mcts:2")
