"""A ladder database is data from whoever wrote it: every row is checked where it is read
(one LadderError naming the database and the row, exit 2), specs that may unpickle need
--allow-pickle, a changed file does not play under its old identity, claims are leases, a
read-only command writes nothing (nor beside the file), and the output is clean CSV and JSON
and ends quietly when its reader leaves."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satellites_env import cli
from satellites_env.agents import RandomAgent
from satellites_env.ladder import CLAIM_LEASE, Ladder, LadderError, play_job
from satellites_env.ladder.claims import Heartbeat, missing, process_start
from satellites_env.ladder.rows import pairs

ROOT = Path(__file__).resolve().parents[2]
SCALE = ROOT / "ladders" / "scale.db"


def run(capsys, *argv) -> tuple[int, str, str]:
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """A ladder of three quick agents, two games per pair."""
    path = tmp_path_factory.mktemp("small") / "ladder.db"
    with Ladder(path, max_moves=30) as ladder:
        for spec in ("random", "greedy", "mcts:1"):
            ladder.add(spec)
        ladder.run(2)
    return path


@pytest.fixture
def copy(small, tmp_path) -> Path:
    path = tmp_path / "ladder.db"
    shutil.copy(small, path)
    return path


def sql(path: Path, *statements, loose: bool = False) -> None:
    """Run statements on the file as another program would (no checks, no constraints
    when `loose`: each table recreated without them, so any value fits any column)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        if loose:
            for table in ("meta", "agents", "games", "claims"):
                db.execute(f"CREATE TABLE loose_{table} AS SELECT * FROM {table}")
                db.execute(f"DROP TABLE {table}")
                db.execute(f"ALTER TABLE loose_{table} RENAME TO {table}")
        for statement in statements:
            db.execute(statement[0], statement[1:]) if isinstance(statement, tuple) else db.execute(
                statement
            )
    finally:
        db.close()


# ------------------------------------------------------------------ output


def test_csv_is_csv_and_json_has_no_infinity(capsys, copy):
    sql(copy, "UPDATE agents SET name = 'a, \"quoted\" one' WHERE spec = 'greedy'")
    status, out, _ = run(capsys, "ladder", "show", "--csv", "--db", copy)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert status == 0 and 'a, "quoted" one' in [r["name"] for r in rows]
    status, out, _ = run(capsys, "ladder", "show", "--json", "--db", copy)
    assert status == 0 and "Infinity" not in out and "NaN" not in out
    assert all(math.isfinite(r["elo"]) for r in json.loads(out)["agents"])


def test_output_to_a_reader_that_left_ends_quietly(small):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "satellites_env.cli",
            "ladder",
            "show",
            "--json",
            "--db",
            str(small),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    process.stdout.close()  # as `| head` does once it has its lines
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == cli.EXIT_BROKEN_PIPE
    assert err == "", err


# ------------------------------------------------------------------ read-only


def test_reading_the_shipped_scale_leaves_nothing_beside_it(capsys):
    before = digest(SCALE)
    siblings = set(SCALE.parent.iterdir())
    status, out, _ = run(capsys, "ladder", "show", "--db", SCALE)
    assert status == 0 and "Head to head" in out
    assert set(SCALE.parent.iterdir()) == siblings and digest(SCALE) == before
    if shutil.which("git") and (ROOT / ".git").exists():
        status = subprocess.run(
            ["git", "status", "--porcelain", "--ignored", "ladders"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert status.returncode != 0 or status.stdout == ""


def test_the_shipped_scale_is_one_whole_file(capsys, tmp_path):
    # A -wal or -shm file shipped beside it would make readers open it `mode=ro` (and touch the
    # -shm) instead of alone; everything must be in the file itself, so a copy reads the same.
    assert [p for p in SCALE.parent.iterdir() if p.name != SCALE.name] == []
    status, shipped, _ = run(capsys, "ladder", "show", "--db", SCALE)
    alone = tmp_path / "scale.db"
    shutil.copy(SCALE, alone)
    status_alone, copied, _ = run(capsys, "ladder", "show", "--db", alone)
    assert status == status_alone == 0
    assert copied.replace(str(alone), "DB") == shipped.replace(str(SCALE), "DB")


def test_reading_a_ladder_in_wal_mode_writes_nothing(capsys, copy):
    sql(copy, "UPDATE agents SET name = 'G' WHERE spec = 'greedy'")
    assert copy.read_bytes()[18] == 2  # WAL mode, as every ladder run leaves it
    before = digest(copy)
    for argv in (["show"], ["show", "--json"], ["show", "--csv"]):
        status, out, _ = run(capsys, "ladder", *argv, "--db", copy)
        assert status == 0
    assert digest(copy) == before and [p.name for p in copy.parent.iterdir()] == ["ladder.db"]
    status, out, _ = run(capsys, "ladder", "show", "--db", copy)
    assert "G = +400 (the shipped scale)" in out  # greedy by its spec, whatever its name


def test_a_file_that_is_no_ladder_is_never_written(capsys, tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    status, _, err = run(capsys, "ladder", "show", "--db", empty)
    assert status == 2 and "empty file" in err and empty.stat().st_size == 0
    status, _, err = run(capsys, "ladder", "run", "--db", empty)
    assert status == 2 and empty.stat().st_size == 0
    foreign = tmp_path / "foreign.db"
    sql(foreign, "CREATE TABLE notes (text)", "INSERT INTO notes VALUES ('mine')")
    before = digest(foreign)
    for argv in (["show"], ["run"], ["add", "random"], ["rate", "random"]):
        status, _, err = run(capsys, "ladder", *argv, "--db", foreign)
        assert status == 2 and "not a ladder database" in err, (argv, err)
    assert digest(foreign) == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "empty.db",
        "foreign.db",
    ]


# ------------------------------------------------------------------ rows


def first_game(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT MIN(id) FROM games").fetchone()[0]


@pytest.mark.parametrize(
    "statement, message",
    [
        ("UPDATE games SET score = 2 WHERE id = {g}", "score"),
        ("UPDATE games SET score = -5 WHERE id = {g}", "score"),
        ("UPDATE games SET score = 1e300 WHERE id = {g}", "score"),
        ("UPDATE games SET score = NULL WHERE id = {g}", "score"),
        ("UPDATE games SET winner = 'purple' WHERE id = {g}", "winner"),
        (
            "UPDATE games SET winner = CASE winner WHEN 'red' THEN 'blue' ELSE 'red' END, "
            "score = 1 - score WHERE id = {g} AND winner IS NOT NULL",
            "record's winner",
        ),
        ("UPDATE games SET record = 'not json' WHERE id = {g}", "not JSON"),
        ("UPDATE games SET record = NULL WHERE id = {g}", "record"),
        ("UPDATE games SET a = 999 WHERE id = {g}", "no agent"),
        ("UPDATE games SET game = -1 WHERE id = {g}", "index"),
        ("UPDATE games SET seed = seed + 1 WHERE id = {g}", "seed"),
        ("UPDATE games SET moves = moves + 1 WHERE id = {g}", "moves"),
        ("UPDATE agents SET name = X'00ff' WHERE id = 1", "name"),
        ("UPDATE agents SET roster = 7 WHERE id = 1", "roster"),
        ("UPDATE meta SET value = X'3030' WHERE key = 'seed'", "seed"),
        ("UPDATE meta SET value = '1e3' WHERE key = 'max_moves'", "max_moves"),
        ("DELETE FROM meta WHERE key = 'format'", "format"),
        ("DROP TABLE claims", "claims"),
    ],
)
def test_a_bad_row_is_one_error_naming_the_database_and_the_row(capsys, copy, statement, message):
    sql(copy, statement.format(g=first_game(copy)), loose=True)
    for argv in (["show"], ["show", "--json"], ["run", "--games-per-pair", "2"]):
        status, _out, err = run(capsys, "ladder", *argv, "--db", copy)
        assert status == 2 and message in err and str(copy) in err, (argv, err)
        assert err.count("error:") == 1 and "internal error" not in err


@pytest.mark.parametrize(
    "values, message",
    [
        ((1, 99999999999999, "time"), "pid"),
        ((1, 1, "NaN"), "at must be"),
        ((1, 1, 1e300), "at must be"),
        (("x", 1, "time"), "index"),
    ],
)
def test_absurd_claims_are_errors(capsys, copy, values, message):
    game, pid, at = values
    at = time.time() if at == "time" else at
    with sqlite3.connect(copy) as db:
        a, b = db.execute("SELECT a, b FROM games LIMIT 1").fetchone()
    sql(
        copy,
        (
            "INSERT INTO claims VALUES (?, ?, ?, 'x', ?, ?, ?)",
            a,
            b,
            game,
            socket.gethostname(),
            pid,
            at,
        ),
        loose=True,
    )
    status, _, err = run(capsys, "ladder", "run", "--games-per-pair", "3", "--db", copy)
    assert status == 2 and message in err and "claims row" in err, err


# ------------------------------------------------------------------ claims are leases


def test_a_claim_is_a_lease_that_a_live_unrelated_process_cannot_hold(copy):
    with Ladder(copy) as ladder:
        a, b = pairs(ladder.agents())[0]
        now = time.time()
        for at in (now - CLAIM_LEASE - 1, now):  # pid 1 lives, and is no ladder
            ladder.db.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, 2, 'other', ?, 1, ?)",
                (a.id, b.id, socket.gethostname(), at),
            )
            lacking = missing(ladder.database, [(a, b)], 3, time.time(), 10)
            assert [j.game for j in lacking] == ([2] if at < now else [])
        # on this host, a live pid that started at another time than the claim's is stale
        started = process_start(os.getpid())
        for owner, kept in ((f"run/{started}", True), ("run/1", started is None), ("run", True)):
            ladder.db.execute(
                "UPDATE claims SET pid = ?, owner = ?, at = ?", (os.getpid(), owner, time.time())
            )
            lacking = missing(ladder.database, [(a, b)], 3, time.time(), 10)
            assert [j.game for j in lacking] == ([] if kept else [2]), owner
        # on another host, only the lease counts
        ladder.db.execute("UPDATE claims SET host = 'elsewhere', at = ?", (now - CLAIM_LEASE - 1,))
        assert [j.game for j in missing(ladder.database, [(a, b)], 3, time.time(), 10)] == [2]
        # a run renews its claims while it plays
        ladder.db.execute("UPDATE claims SET owner = 'mine', at = 0")
        beat = Heartbeat(copy, "mine", every=0.05)
        beat.start()
        try:
            deadline = time.monotonic() + 30
            while ladder.db.execute("SELECT at FROM claims").fetchone()[0] == 0:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        finally:
            beat.stop()
        assert ladder.db.execute("SELECT at FROM claims").fetchone()[0] > now - 1


# ------------------------------------------------------------------ code from data


def test_a_spec_that_may_unpickle_needs_allow_pickle(capsys, copy, monkeypatch):
    from satellites_env import agents

    built = []

    class Stand(RandomAgent):
        def identity(self) -> str:
            return "rllib:/some/folder"

    def factory(argument, seed):
        built.append(argument)
        return Stand(seed)

    monkeypatch.setitem(agents._registered, "rllib", factory)
    sql(
        copy,
        "INSERT INTO agents (key, name, spec, roster, added) VALUES "
        "('rllib:/some/folder', 'sent', 'rllib:/some/folder', 1, 'now')",
    )
    for argv in (["run", "--games-per-pair", "2"], ["rate", "mcts:2", "--games", "2"]):
        status, _, err = run(capsys, "ladder", *argv, "--db", copy)
        assert status == 2 and "--allow-pickle" in err and "'sent'" in err, err
        assert built == []  # refused before it was built
    status, _, err = run(
        capsys, "ladder", "run", "--games-per-pair", "2", "--allow-pickle", "--db", copy
    )
    assert status == 0 and built, err


def test_a_changed_file_does_not_play_under_its_old_identity(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    pretrained = ROOT / "training" / "alphazero" / "pretrained.pt"
    if not pretrained.exists():
        pytest.skip("no trainer here")
    network = tmp_path / "a.pt"
    shutil.copy(pretrained, network)
    db = tmp_path / "l.db"
    assert (
        run(
            capsys,
            "ladder",
            "add",
            "random",
            f"checkpoint:{network}",
            "--db",
            db,
            "--max-moves",
            "20",
        )[0]
        == 0
    )
    other = torch.load(pretrained, map_location="cpu", weights_only=True)
    name, weight = next((k, v) for k, v in other["model"].items() if v.is_floating_point())
    other["model"][name] = weight + 0.01  # another network of the same shape
    torch.save(other, network)
    status, _, err = run(capsys, "ladder", "run", "--games-per-pair", "2", "--db", db)
    assert status == 2 and "no longer the player" in err and "--name" in err, err
    with Ladder(db, create=False, readonly=True) as ladder:
        assert ladder.games_count() == 0


def test_a_worker_checks_each_agents_identity_before_its_first_game():
    record = play_job("random", "greedy", 0, 1, 20, "random", "greedy")
    assert record["players"] == {"red": "random", "blue": "greedy"}
    with pytest.raises(LadderError, match="no longer the player"):
        play_job("random", "greedy", 1, 1, 20, "random", "checkpoint:sha256=00")


# ------------------------------------------------------------------ fuzz

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.binary(max_size=8),
    st.sampled_from(["red", "blue", "0.5", "{}", "[]", '{"moves": [], "result": {}}']),
)
TABLES = {
    "meta": ["key", "value"],
    "agents": ["id", "key", "name", "spec", "roster"],
    "games": [
        "id",
        "a",
        "b",
        "game",
        "seed",
        "a_red",
        "score",
        "winner",
        "reason",
        "moves",
        "record",
    ],
    "claims": ["a", "b", "game", "owner", "host", "pid", "at"],
}


@st.composite
def corruption(draw):
    if draw(st.integers(0, 9)) == 0:
        return f"DROP TABLE {draw(st.sampled_from(sorted(TABLES)))}", ()
    table = draw(st.sampled_from(sorted(TABLES)))
    column = draw(st.sampled_from(TABLES[table]))
    value = draw(VALUES)
    if table == "claims":
        return (
            (
                "INSERT INTO claims (a, b, game, owner, host, pid, at) VALUES (1, 2, 0, 'o', "
                "'h', 1, 0)"
            ),
            (),
            f"UPDATE claims SET {column} = ?",
            (value,),
        )
    row = draw(st.integers(1, 8))
    return f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (value, row)


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(damage=st.lists(corruption(), min_size=1, max_size=3))
def test_fuzz_a_damaged_database_gives_a_result_or_one_ladder_error(
    damage, small, tmp_path_factory
):
    path = tmp_path_factory.mktemp("fuzz") / "ladder.db"
    shutil.copy(small, path)
    statements = []
    for item in damage:
        statements += [(item[k], *item[k + 1]) for k in range(0, len(item), 2)]
    try:
        sql(path, *statements, loose=True)
    except sqlite3.Error:
        return  # the damage itself did not apply (a table dropped before its update)
    from satellites_env.web.leaderboard import standings

    try:
        with Ladder(path, create=False, readonly=True) as ladder:
            table = standings(ladder)
            json.dumps(table, allow_nan=False)
            ladder.records()
        with Ladder(path, create=False) as ladder:
            ladder.run(2)  # every pair is complete unless the damage says otherwise
    except LadderError as error:
        assert str(path) in str(error)
