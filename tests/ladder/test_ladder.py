"""The rating ladder: games kept in SQLite, played once each (also by two runs at once, and
after a run was killed), identities by content, a new agent plays only its own games, and
ratings of one agent against fixed anchors."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from satellites_env.ladder import Ladder, LadderError, pair_seed

ROOT = Path(__file__).resolve().parents[2]
FAST = ["random", "greedy", "mcts:1", "mcts:2", "mcts:3", "mcts:4"]


def ladder_of(path: Path, specs=FAST) -> Ladder:
    ladder = Ladder(path, max_moves=60)
    for spec in specs:
        ladder.add(spec)
    return ladder


def pair_counts(ladder: Ladder) -> dict:
    return {
        (a, b): n for a, b, n in ladder.db.execute("SELECT a, b, COUNT(*) FROM games GROUP BY a, b")
    }


def test_a_run_plays_each_missing_game_once_and_every_game_replays(tmp_path):
    with ladder_of(tmp_path / "l.db", FAST[:3]) as ladder:
        assert ladder.run(4) == 12
        assert set(pair_counts(ladder).values()) == {4} and len(pair_counts(ladder)) == 3
        assert ladder.run(4) == 0  # nothing missing
        assert ladder.run(6) == 6
        for game_id, record in ladder.records():
            record.replay(f"game {game_id}")  # the stored moves replay to the stored result
        names = [e.name for e in ladder.agents()]
        assert names == FAST[:3]


def test_adding_one_agent_to_a_ladder_of_six_plays_only_its_games(tmp_path):
    with ladder_of(tmp_path / "l.db") as ladder:
        ladder.run(2)
        before = ladder.games_count()
        assert before == 15 * 2
        new = ladder.add("mcts:5")
        assert ladder.run(2) == 6 * 2
        rows = ladder.db.execute(
            "SELECT a, b FROM games WHERE id > (SELECT MAX(id) - 12 FROM games)"
        ).fetchall()
        assert all(new.id in row for row in rows)
        assert ladder.games_count() == before + 12


def test_two_ladders_fed_the_same_agents_hold_the_same_games(tmp_path):
    first = ladder_of(tmp_path / "a.db", ["greedy", "random", "mcts:2"])
    second = ladder_of(tmp_path / "b.db", ["mcts:2", "greedy", "random"])
    first.run(2)
    second.run(2)
    games = [
        sorted((r.start_spn, tuple(r.moves)) for _, r in ladder.records())
        for ladder in (first, second)
    ]
    assert games[0] == games[1]
    assert pair_seed(0, "a", "b") == pair_seed(0, "a", "b") != pair_seed(1, "a", "b")


def test_an_agent_is_its_files_content(tmp_path):
    pretrained = ROOT / "training" / "alphazero" / "pretrained.pt"
    if not pretrained.exists():
        pytest.skip("no trainer here")
    pytest.importorskip("torch")
    copy = tmp_path / "copy.pt"
    shutil.copy(pretrained, copy)
    with Ladder(tmp_path / "l.db") as ladder:
        one = ladder.add(f"checkpoint:{copy}", name="net")
        renamed = tmp_path / "renamed.pt"
        copy.rename(renamed)
        again = ladder.add(f"checkpoint:{renamed}")
        assert again.id == one.id and again.spec == f"checkpoint:{renamed}"
        assert ladder.add("checkpoint:pretrained").id == one.id  # the same bytes
        with open(renamed, "ab") as handle:  # a changed file is another player
            handle.write(b"\0")
        changed = ladder.add(f"checkpoint:{renamed}", name="changed")
        assert changed.id != one.id and changed.key != one.key
        assert ladder.add(f"az:{pretrained}:4").key != one.key  # its search is another player


def test_foreign_damaged_and_odd_files_are_clear_errors(tmp_path):
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE x (y)").connection.commit()
    with pytest.raises(LadderError, match="not a ladder database"):
        Ladder(foreign)
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\0" + os.urandom(4000))
    with pytest.raises(LadderError, match=r"damaged|not a ladder"):
        Ladder(damaged)
    text = tmp_path / "text.db"
    text.write_text("hello, not a database " * 100)
    with pytest.raises(LadderError):
        Ladder(text)
    with pytest.raises(LadderError, match="is a directory"):
        Ladder(tmp_path)
    with pytest.raises(LadderError, match="does not exist"):
        Ladder(tmp_path / "missing.db", create=False)
    with Ladder(tmp_path / "ok.db") as ladder:
        ladder.add("random")
        with pytest.raises(LadderError, match="name"):
            ladder.add("greedy", name="random")  # taken
        with pytest.raises(LadderError, match="name"):
            ladder.add("greedy", name="\x00bad")
        with pytest.raises(ValueError, match="unknown agent spec"):
            ladder.add("grandmaster")


RUNNER = """
import sys
from satellites_env.ladder import Ladder
ladder = Ladder(sys.argv[1])
print(ladder.run(int(sys.argv[2])), flush=True)
"""


def test_two_runs_at_once_share_the_games_and_play_none_twice(tmp_path):
    path = tmp_path / "l.db"
    ladder_of(path, FAST[:4]).close()
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", RUNNER, str(path), "6"], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    stored = [int(run.communicate(timeout=600)[0].split()[-1]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    with Ladder(path) as ladder:
        assert sum(stored) == ladder.games_count() == 6 * 6
        assert set(pair_counts(ladder).values()) == {6}
        assert ladder.db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0


def test_a_killed_run_loses_only_its_game_in_flight(tmp_path):
    path = tmp_path / "l.db"
    ladder_of(path, FAST[:4]).close()
    run = subprocess.Popen([sys.executable, "-c", RUNNER, str(path), "30"])
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        with sqlite3.connect(path) as db:
            if db.execute("SELECT COUNT(*) FROM games").fetchone()[0] >= 5:
                break
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()
    with Ladder(path) as ladder:
        assert ladder.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        kept = ladder.games_count()
        assert kept >= 5
        assert ladder.db.execute("SELECT COUNT(*) FROM claims").fetchone()[0] <= 1
        assert ladder.run(30) == 6 * 30 - kept  # the dead run's claim is taken over
        assert set(pair_counts(ladder).values()) == {30}


def test_rating_one_agent_leaves_the_ladder_as_it_was(tmp_path):
    with ladder_of(tmp_path / "l.db", ["random", "greedy", "mcts:2"]) as ladder:
        ladder.run(10)
        before = ladder.ratings().as_dict()
        result = ladder.rate("mcts:4", games=24)
        assert sum(result.games.values()) >= 20
        assert result.low < result.elo < result.high
        assert ladder.ratings().as_dict() == before  # the roster's ratings stay
        assert "mcts:4" not in [e.name for e in ladder.agents()]
        with pytest.raises(LadderError, match="already"):
            ladder.rate("greedy", games=4)


def test_rating_reports_one_count_of_one_known_total(tmp_path):
    """`ladder rate`'s bar: the games it will play as its total from the first game, and a
    count that never starts again at each opponent."""
    with ladder_of(tmp_path / "l.db", ["random", "greedy", "mcts:2"]) as ladder:
        ladder.run(2)
        seen: list[tuple[int, int]] = []
        result = ladder.rate("mcts:1", games=14, progress=lambda *step: seen.append(step))
    played = sum(result.games.values())
    assert [done for done, _ in seen] == list(range(1, played + 1))
    assert {total for _, total in seen} == {played}
