"""Output and input paths of every command: a FIFO, a socket, a device node, a symbolic link to
a file or a dangling one is refused with one `error:` line before any game, and is left as it
was (never replaced by a regular file, never written through); inputs are never waited on or
read without a limit."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path

import pytest
from special_files import SPECIAL, fifo, finishes, unchanged

from satellites_env import cli
from satellites_env import tournament as tournaments
from satellites_env.core import Game
from satellites_env.record import GameRecord

KIND_WORDS = {
    "fifo": "FIFO",
    "socket": "socket",
    "device": "character device",
    "link": "symbolic link",
    "dangling link": "dangling symbolic link",
}


def short_record(path: Path) -> Path:
    game = Game.new(seed=1)
    start = game.to_spn()
    game.play_move(game.legal_moves()[0])
    return GameRecord.of(start, game).save(path)


def no_input(prompt: str) -> str:
    raise EOFError


COMMANDS = {
    "play --save": lambda path, tmp: [
        "play",
        "--opponent",
        "random",
        "--max-moves",
        "4",
        "--save",
        str(path),
    ],
    "evaluate --out": lambda path, tmp: [
        "evaluate",
        "--agents",
        "random",
        "greedy",
        "--games",
        "1",
        "--max-moves",
        "4",
        "--out",
        str(path),
    ],
    "replay --html": lambda path, tmp: ["replay", str(tmp / "good.json"), "--html", str(path)],
    "replay --gif": lambda path, tmp: [
        "replay",
        str(tmp / "good.json"),
        "--gif",
        str(path),
        "--frame-size",
        "64",
    ],
    "demo --gif": lambda path, tmp: [
        "demo",
        "--max-moves",
        "4",
        "--gif",
        str(path),
        "--frame-size",
        "64",
    ],
}


@pytest.mark.parametrize("kind, make", SPECIAL, ids=[name for name, _ in SPECIAL])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_outputs_refuse_special_files_and_links(command, kind, make, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(builtins, "input", no_input)
    monkeypatch.chdir(tmp_path)
    short_record(tmp_path / "good.json")
    path = make(tmp_path / "output")
    before = os.lstat(path)
    argv = COMMANDS[command](path, tmp_path)
    outcome = finishes(lambda: cli.main(argv), seconds=120)
    err = capsys.readouterr().err
    assert outcome.get("value") == 2, (outcome, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    option = command.split()[1]
    assert option in lines[0] and KIND_WORDS[kind] in lines[0], lines[0]
    assert unchanged(path, before)
    assert not list(tmp_path.glob("satellites-*")), "no fallback file: refused before the game"


@pytest.mark.parametrize("kind, make", SPECIAL, ids=[name for name, _ in SPECIAL])
def test_records_folder_refuses_special_files_and_dangling_links(kind, make, tmp_path, capsys):
    path = make(tmp_path / "records")
    before = os.lstat(path)
    status = cli.main(
        [
            "evaluate",
            "--agents",
            "random",
            "greedy",
            "--games",
            "1",
            "--max-moves",
            "4",
            "--records",
            str(path),
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: --records") and "folder" in err, err
    assert unchanged(path, before)


def test_records_written_into_a_linked_folder(tmp_path, capsys):
    """A link to an (empty) folder is a folder: the records go into its target."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "records").symlink_to(real)
    status = cli.main(
        [
            "evaluate",
            "--agents",
            "random",
            "greedy",
            "--games",
            "1",
            "--max-moves",
            "4",
            "--records",
            str(tmp_path / "records"),
        ]
    )
    assert status == 0, capsys.readouterr().err
    assert (real / "tournament.json").is_file() and (real / "game_0000.json").is_file()


@pytest.mark.parametrize("kind, make", SPECIAL, ids=[name for name, _ in SPECIAL])
def test_records_files_inside_the_folder_are_not_written_through(
    kind, make, tmp_path, capsys, monkeypatch
):
    """A special file or link appearing inside --records while the games are played: the
    rest is written, that file is not, and the error says which."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "records"
    tournament = tournaments.run_tournament
    made = {}

    def run_then_plant(*args, **kwargs):
        result = tournament(*args, **kwargs)
        folder.mkdir(exist_ok=True)
        made["path"] = make(folder / "game_0000.json")
        made["before"] = os.lstat(made["path"])
        return result

    monkeypatch.setattr(tournaments, "run_tournament", run_then_plant)
    status = cli.main(
        [
            "evaluate",
            "--agents",
            "random",
            "greedy",
            "--games",
            "1",
            "--max-moves",
            "4",
            "--records",
            str(folder),
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and "could not write --records" in err and "saved the records" in err
    assert unchanged(made["path"], made["before"])
    (fallback,) = tmp_path.glob("satellites-records-*")
    assert (fallback / "game_0000.json").is_file()


@pytest.mark.parametrize("kind, make", SPECIAL, ids=[name for name, _ in SPECIAL])
def test_ladder_show_html_refuses_special_files(kind, make, tmp_path, capsys):
    db = str(tmp_path / "ladder.db")
    assert cli.main(["ladder", "add", "random", "greedy", "--db", db, "--max-moves", "8"]) == 0
    assert cli.main(["ladder", "run", "--games-per-pair", "2", "--db", db]) == 0
    page = tmp_path / "board"
    page.mkdir()
    index = make(page / "index.html")
    before = os.lstat(index)
    capsys.readouterr()
    status = cli.main(["ladder", "show", "--html", str(page), "--db", db])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: --html") and KIND_WORDS[kind] in err, err
    assert unchanged(index, before) and not (page / "games").exists()


def test_ladder_show_html_writes_the_page(tmp_path, capsys):
    db = str(tmp_path / "ladder.db")
    assert cli.main(["ladder", "add", "random", "greedy", "--db", db, "--max-moves", "8"]) == 0
    assert cli.main(["ladder", "run", "--games-per-pair", "2", "--db", db]) == 0
    assert cli.main(["ladder", "show", "--html", str(tmp_path / "board"), "--db", db]) == 0
    assert "<html" in (tmp_path / "board" / "index.html").read_text()
    assert len(list((tmp_path / "board" / "games").glob("*.html"))) == 2


def test_outputs_replace_a_regular_file_keeping_its_mode(tmp_path, capsys):
    """A file satellites did not write is replaced with --force only (tests/cli/test_ours.py)."""
    out = tmp_path / "results.json"
    out.write_text("old")
    os.chmod(out, 0o640)
    argv = ["evaluate", "--agents", "random", "greedy", "--games", "1", "--max-moves", "4"]
    assert cli.main([*argv, "--out", str(out)]) == 2
    assert out.read_text() == "old"
    assert cli.main([*argv, "--out", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["agents"] == ["random", "greedy"]
    assert out.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_a_fifo_appearing_at_out_during_the_games_is_not_replaced(tmp_path, capsys, monkeypatch):
    """Checked again when written: the results go to a fallback file instead."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results.json"
    tournament = tournaments.run_tournament

    def run_then_plant(*args, **kwargs):
        result = tournament(*args, **kwargs)
        fifo(out)
        return result

    monkeypatch.setattr(tournaments, "run_tournament", run_then_plant)
    outcome = finishes(
        lambda: cli.main(
            [
                "evaluate",
                "--agents",
                "random",
                "greedy",
                "--games",
                "1",
                "--max-moves",
                "4",
                "--out",
                str(out),
            ]
        ),
        120,
    )
    err = capsys.readouterr().err
    assert outcome.get("value") == 2 and "FIFO" in err and "saved it to" in err, (outcome, err)
    (saved,) = tmp_path.glob("satellites-results-*.json")
    assert json.loads(saved.read_text())["pairs"][0]["games"] == 1
    assert os.path.exists(out) and not os.path.isfile(out)


# --------------------------------------------------------------------------- inputs


@pytest.mark.parametrize("record", ["/dev/zero", "/dev/urandom", "/dev/null", "fifo", "socket"])
def test_replay_refuses_special_files_at_once(record, tmp_path, capsys):
    from special_files import unix_socket

    if record == "fifo":
        record = str(fifo(tmp_path / "pipe.json"))
    elif record == "socket":
        record = str(unix_socket(tmp_path / "socket.json"))
    outcome = finishes(lambda: cli.main(["replay", record, "--boards"]), seconds=30)
    err = capsys.readouterr().err
    assert outcome.get("value") == 2, (outcome, err)
    lines = err.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith("error: game record")
        and "not a regular file" in lines[0]
    ), err


def test_replay_reads_a_record_through_a_link(tmp_path, capsys):
    short_record(tmp_path / "good.json")
    (tmp_path / "link.json").symlink_to(tmp_path / "good.json")
    assert cli.main(["replay", str(tmp_path / "link.json"), "--boards"]) == 0


@pytest.mark.parametrize("extra, refused", [(1, True), (0, False)])
def test_a_record_over_the_size_limit_is_refused_unread(extra, refused, tmp_path, capsys):
    from satellites_env.record import MAX_RECORD_BYTES

    path = tmp_path / "huge.json"
    with open(path, "wb") as file:
        file.truncate(MAX_RECORD_BYTES + extra)  # sparse: no disk used
    status = cli.main(["replay", str(path), "--boards"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    if refused:
        assert f"larger than {MAX_RECORD_BYTES:,} bytes" in err
    else:
        assert "not valid JSON" in err


def test_game_record_load_refuses_devices_with_a_record_error():
    from satellites_env.record import RecordError

    outcome = finishes(lambda: GameRecord.load("/dev/zero"))
    assert isinstance(outcome.get("error"), RecordError)
    assert "character device" in str(outcome["error"])


def test_ladder_database_through_a_dangling_link_is_refused(tmp_path, capsys):
    link = tmp_path / "ladder.db"
    link.symlink_to(tmp_path / "elsewhere.db")
    assert cli.main(["ladder", "add", "random", "--db", str(link)]) == 2
    err = capsys.readouterr().err
    assert "dangling symbolic link" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "elsewhere.db").exists() and link.is_symlink()


@pytest.mark.parametrize("make", [fifo, lambda p: p.mkdir()])
def test_ladder_database_that_is_no_file_is_refused_at_once(make, tmp_path, capsys):
    path = make(tmp_path / "ladder.db") or tmp_path / "ladder.db"
    outcome = finishes(lambda: cli.main(["ladder", "show", "--db", str(path)]))
    assert outcome.get("value") == 2 and "ladder database" in capsys.readouterr().err


# --------------------------------------------------------------------------- deep and long paths


def deep(root: Path, depth: int, name: str = "d") -> Path:
    return root.joinpath(*[name] * depth)


def remove_deep(root: Path, bottom: Path) -> None:
    """Remove the chain of nested folders from `root` down to `bottom`, bottom up
    (shutil.rmtree, and pytest's clean-up with it, recurse once per level and would fail)."""
    for path in [bottom, *bottom.parents]:
        if path == root:
            break
        if path.is_dir():
            for child in path.iterdir():
                if not child.is_dir():
                    child.unlink()
            path.rmdir()


def test_evaluate_writes_outputs_1100_folders_deep(tmp_path, capsys):
    """A path too deep for a recursive `mkdir -p` (Python's recursion limit is 1,000)."""
    out = deep(tmp_path / "o", 1100) / "results.json"
    records = deep(tmp_path / "r", 1100) / "games"
    try:
        status = cli.main(
            [
                "evaluate",
                "--agents",
                "random",
                "greedy",
                "--games",
                "2",
                "--max-moves",
                "20",
                "--out",
                str(out),
                "--records",
                str(records),
            ]
        )
        captured = capsys.readouterr()
        assert status == 0, captured.err
        assert json.loads(out.read_text())["complete"] is True
        assert (records / "tournament.json").is_file() and (records / "index.html").is_file()
    finally:
        remove_deep(tmp_path, out.parent)
        remove_deep(tmp_path, records)


@pytest.mark.parametrize(
    "path",
    [
        lambda root: deep(root, 1500, "dd") / "results.json",
        lambda root: root / ("x" * 300) / "results.json",
        lambda root: root / ("x" * 300 + ".json"),
    ],
    ids=["5000 characters", "a folder name of 300", "a file name of 300"],
)
def test_an_out_path_too_long_is_one_error_line_before_any_game(
    path, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(
        tournaments, "run_tournament", lambda *a, **k: pytest.fail("a game was played")
    )
    status = cli.main(
        ["evaluate", "--agents", "random", "greedy", "--games", "2", "--out", str(path(tmp_path))]
    )
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert "cannot be written: File name too long" in err and len(err) < 1300, err


def test_a_result_that_cannot_be_written_reaches_a_fallback_file(tmp_path, monkeypatch):
    """Whatever stops the write at the end (here a name too long), the result goes to a new
    file in the current folder and the error says where."""
    from satellites_env.files import OutputError, write_or_fallback

    monkeypatch.chdir(tmp_path)
    for target in (
        deep(tmp_path, 1500, "dd") / "results.json",
        tmp_path / ("x" * 300) / "results.json",
        tmp_path / ("x" * 300 + ".json"),
    ):
        with pytest.raises(OutputError, match="saved it to") as error:
            write_or_fallback(lambda path: path.write_text("the result"), target, "--out")
        (saved,) = [p for p in tmp_path.glob("satellites-*") if p.read_text() == "the result"]
        assert str(saved.name) in str(error.value)
        saved.unlink()
