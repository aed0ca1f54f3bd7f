"""Long commands show a bar with a total and the time left until they end (`evaluate`,
`ladder rate`), and `evaluate`'s tables never cut an agent's name."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.progress import Progress, TimeRemainingColumn

from satellites_env import cli, ladder_view, terminal, tournament_view
from satellites_env.arena import PairResult, TournamentResult
from satellites_env.ladder import Ladder


@pytest.fixture
def bars(monkeypatch):
    """Every progress bar the views open, with each update's (completed, total)."""
    made: list[Progress] = []
    steps: list[tuple[float, float | None]] = []

    def recording(*args, **options):
        bar = terminal.progress_bar(*args, **options)
        update = bar.update

        def update_and_note(task, **fields):
            update(task, **fields)
            steps.append((bar.tasks[0].completed, bar.tasks[0].total))

        bar.update = update_and_note  # type: ignore[method-assign]
        made.append(bar)
        return bar

    for view in (tournament_view, ladder_view):
        monkeypatch.setattr(view, "progress_bar", recording)
    return made, steps


def test_the_bar_shows_the_time_left():
    columns = terminal.progress_bar().columns
    assert any(isinstance(c, TimeRemainingColumn) for c in columns)


def test_evaluate_counts_its_games_against_their_total(bars, capsys):
    made, steps = bars
    status = cli.main(
        ["evaluate", "--agents", "random", "greedy", "--games", "4", "--max-moves", "60"]
    )
    capsys.readouterr()
    assert status == 0 and made
    assert steps[-1] == (4, 4)
    assert {total for _, total in steps} == {4}


def test_ladder_rate_counts_its_games_once_against_their_total(bars, tmp_path, capsys):
    _, steps = bars
    db = tmp_path / "l.db"
    with Ladder(db, max_moves=60) as ladder:
        for spec in ("random", "greedy"):
            ladder.add(spec)
        ladder.run(2)
    status = cli.main(["ladder", "rate", "mcts:1", "--db", str(db), "--games", "8"])
    text = capsys.readouterr().out
    assert status == 0 and "Elo" in text
    done = [completed for completed, _ in steps]
    assert done == sorted(done) and done[-1] == steps[-1][1] >= 8
    assert {total for _, total in steps} == {done[-1]}  # known from the first game, no `?`


def test_evaluate_tables_keep_whole_agent_names():
    names = [f"az:runs/a_long_folder_name_for_a_run/seed_{k}/final.pt:32" for k in (1, 2)]
    result = TournamentResult(
        agents=names,
        pairs=[PairResult(names[0], names[1], games=2, a_wins=1, b_wins=1)],
        elo=dict.fromkeys(names, 0.0),
    )
    out = Console(file=io.StringIO(), width=80)
    out.print(tournament_view.results_table(result, "t"))
    out.print(tournament_view.elo_table(result))
    text = out.file.getvalue()
    assert "…" not in text
    first_cells = "".join(
        line.split("│")[1].strip() for line in text.splitlines() if line.count("│") > 2
    )
    assert all(name in first_cells for name in names)
