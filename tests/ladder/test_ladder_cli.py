"""`satellites ladder`: add, run, rate and show through the command line, its outputs (table,
JSON, CSV, HTML) agreeing with the database, and every bad argument one `error:` line."""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satellites_env import cli
from satellites_env.ladder import Ladder


def run(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "ladder.db")


def test_add_run_show_agree_with_the_database(capsys, db):
    assert (
        run(
            capsys,
            "ladder",
            "add",
            "random",
            "greedy",
            "mcts:1",
            "--db",
            db,
            "--max-moves",
            "60",
            "--seed",
            "5",
        )[0]
        == 0
    )
    status, out, _ = run(capsys, "ladder", "run", "--games-per-pair", "4", "--db", db)
    assert status == 0 and "12 games played" in out
    assert run(capsys, "ladder", "run", "--games-per-pair", "4", "--db", db)[1].startswith(
        "0 games played"
    )  # nothing left to play
    status, out, _ = run(capsys, "ladder", "show", "--json", "--db", db)
    table = json.loads(out)
    assert status == 0 and table["games"] == 12 and table["seed"] == 5
    assert table["max_moves"] == 60 and table["anchor"] == "greedy"
    assert table["anchor_elo"] == 400.0
    assert sorted(r["name"] for r in table["agents"]) == ["greedy", "mcts:1", "random"]
    assert all(r["games"] == 8 and r["low"] <= r["elo"] <= r["high"] for r in table["agents"])
    assert [r["rank"] for r in table["agents"]] == [1, 2, 3]
    with Ladder(db, create=False) as ladder:
        ratings = ladder.ratings()
        for row in table["agents"]:
            assert row["elo"] == pytest.approx(ratings.rating(row["name"]), abs=0.06)
    status, out, _ = run(capsys, "ladder", "show", "--csv", "--db", db)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["name"] for r in rows] == [r["name"] for r in table["agents"]]
    assert [float(r["elo"]) for r in rows] == [r["elo"] for r in table["agents"]]
    status, out, _ = run(capsys, "ladder", "show", "--db", db)
    assert status == 0 and "12 games" in out and "mcts:1" in out
    assert "greedy = +400 (the shipped scale)" in out
    # the head-to-head matrix: each row's score against each column, in %
    assert "Head to head" in out
    first = table["agents"][0]["name"]
    cells = table["matrix"][first]
    line = next(line for line in out.splitlines() if f"1 {first}" in line)
    for column, other in enumerate(r["name"] for r in table["agents"]):
        if other in cells:
            shown = f"{100 * cells[other]['score'] / cells[other]['games']:.0f}"
            assert shown in line.split("│")[column + 2]


def test_settings_of_a_ladder_are_fixed_once_made(capsys, db):
    assert run(capsys, "ladder", "add", "random", "--db", db, "--max-moves", "60")[0] == 0
    status, _, err = run(capsys, "ladder", "add", "greedy", "--db", db, "--max-moves", "80")
    assert status == 2 and "made with --max-moves 60" in err
    assert run(capsys, "ladder", "add", "greedy", "--db", db, "--max-moves", "60")[0] == 0


def test_rate_keeps_the_roster_and_reports_an_interval(capsys, db):
    run(capsys, "ladder", "add", "random", "greedy", "--db", db, "--max-moves", "40")
    run(capsys, "ladder", "run", "--games-per-pair", "6", "--db", db)
    before = json.loads(run(capsys, "ladder", "show", "--json", "--db", db)[1])
    status, out, _ = run(capsys, "ladder", "rate", "mcts:1", "--games", "12", "--db", db)
    assert status == 0 and "mcts:1: Elo" in out and "95%" in out
    after = json.loads(run(capsys, "ladder", "show", "--json", "--db", db)[1])
    assert after["agents"] == before["agents"]  # the rated agent is not on the roster
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 6 + 12


@pytest.mark.parametrize(
    "argv, message",
    [
        (["ladder", "run", "--db", "{db}"], "does not exist"),
        (["ladder", "show", "--db", "{tmp}"], "is a directory"),
        (["ladder", "show", "--db", "{foreign}"], "not a ladder database"),
        (["ladder", "show", "--db", "{text}"], "not a ladder database"),
        (["ladder", "add", "random", "greedy", "--name", "x", "--db", "{db}"], "--name names one"),
        (["ladder", "add", "minimax", "--db", "{db}"], "minimax"),
        (["ladder", "add", "checkpoint:{tmp}/missing.pt", "--db", "{db}"], "missing.pt"),
        (["ladder", "add", "random", "--name", "a\nb", "--db", "{db}"], "printable"),
        (["ladder", "add", "random", "--name", "", "--db", "{db}"], "printable"),
        (["ladder", "run", "--games-per-pair", "0", "--db", "{db}"], "--games-per-pair"),
        (["ladder", "rate", "greedy", "--games", "1", "--db", "{db}"], "--games"),
        (["ladder", "show", "--json", "--csv", "--db", "{db}"], "choose one"),
        (["ladder", "run", "--workers", "0", "--db", "{db}"], "--workers"),
    ],
)
def test_bad_arguments_are_one_error_line(capsys, tmp_path, argv, message):
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    (tmp_path / "text.db").write_text("not a database at all, just some text " * 20)
    paths = {
        "db": str(tmp_path / "ladder.db"),
        "tmp": str(tmp_path),
        "foreign": str(foreign),
        "text": str(tmp_path / "text.db"),
    }
    status, _, err = run(capsys, *[a.format(**paths) for a in argv])
    assert status == 2 and message in err
    assert err.count("error:") == 1 and "Traceback" not in err


def test_rating_an_agent_already_on_the_roster_is_an_error(capsys, db):
    run(capsys, "ladder", "add", "random", "greedy", "--db", db)
    status, _, err = run(capsys, "ladder", "rate", "greedy", "--games", "4", "--db", db)
    assert status == 2 and "on the ladder already" in err


SPECS = st.sampled_from(
    ["random", "greedy", "mcts:1", "mcts:x", "", "random:3", "checkpoint:", "[b]x", "az:", "mcts:0"]
)
NUMBERS = st.sampled_from(["1", "2", "0", "-1", "x", "2.0", "100001", "1e3"])
NAMES = st.one_of(st.text(max_size=6), st.sampled_from(["agent", "random", "x" * 101]))


@st.composite
def ladder_argv(draw) -> list[str]:
    step = draw(st.sampled_from(["add", "run", "rate", "show"]))
    argv = ["ladder", step]
    if step in ("add", "rate"):
        argv += draw(
            st.lists(SPECS, min_size=0 if step == "add" else 1, max_size=3 if step == "add" else 1)
        )
        if draw(st.booleans()):
            argv += ["--name", draw(NAMES)]
    if step == "add" and draw(st.booleans()):
        argv += ["--max-moves", draw(st.sampled_from(["30", "0", "x", "401"]))]
    if step == "run":
        argv += ["--games-per-pair", draw(NUMBERS)]
    if step == "rate":
        argv += ["--games", draw(NUMBERS)]
    if step == "show":
        argv += draw(st.lists(st.sampled_from(["--json", "--csv", "--html"]), max_size=2))
    return argv


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(ladder_argv(), min_size=1, max_size=4))
def test_fuzz_ladder_commands(steps, capsys, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    db = str(folder / "ladder.db")
    cli.main(["ladder", "add", "random", "--db", db, "--max-moves", "30"])
    capsys.readouterr()
    for argv in steps:
        if argv[-1] == "--html":
            argv = [*argv, str(folder / "page")]
        status = cli.main([*argv, "--db", db])
        _out, err = capsys.readouterr()
        assert status in (0, 2), (argv, err)
        assert "Traceback" not in err and "internal error" not in err
        if status == 2:
            assert "error" in err
    with Ladder(db, create=False) as ladder:  # whatever happened, the database is whole
        assert ladder.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert (
            ladder.games_count()
            == ladder.db.execute(
                "SELECT COUNT(DISTINCT a || '-' || b || '-' || game) FROM games"
            ).fetchone()[0]
        )
