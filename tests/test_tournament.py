"""`satellites_env.tournament` from Python, without the command line: a tournament stopped by
Ctrl-C keeps its games in its outputs, and the same call continues it to the results of an
uninterrupted run."""

from __future__ import annotations

import json

import pytest

from satellites_env import arena, tournament
from satellites_env.arena import TournamentInterrupted

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
        1,
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
        tournament.play(AGENTS, GAMES, SEED, 1, MAX_MOVES, reporter=StopAt(3))
    partial = interrupted.value.result
    finished = {k: partial.records[k] for k in partial.finished}
    result = tournament.play(
        AGENTS, GAMES, SEED, 1, MAX_MOVES, finished=finished, out=tmp_path / "out.json"
    )
    assert result.as_dict() == arena.run_tournament(AGENTS, GAMES, SEED, 1, MAX_MOVES).as_dict()


def test_outputs_of_another_tournament_are_refused_before_any_game(tmp_path, monkeypatch):
    with pytest.raises(TournamentInterrupted):
        play(tmp_path, StopAt(2))
    monkeypatch.setattr(
        tournament, "run_tournament", lambda *a, **k: pytest.fail("a game was played")
    )
    with pytest.raises(tournament.TournamentError, match="other settings"):
        tournament.play(AGENTS, GAMES, SEED + 1, 1, MAX_MOVES, records=tmp_path / "games")
