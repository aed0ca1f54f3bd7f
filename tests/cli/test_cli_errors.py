"""The CLI never answers with a traceback and never loses a result (issue 12).

Output paths are checked before any game; a write that still fails at the end goes to a
fresh file in the current folder and the error line says where; every documented error is
one `error: ...` line with status 2; Ctrl-C is status 130."""

from __future__ import annotations

import builtins
import json

import pytest

from satellites_env import cli, terminal, terminal_game
from satellites_env import tournament as tournaments
from satellites_env.core import Game
from satellites_env.record import GameRecord

EVALUATE = ["evaluate", "--agents", "random", "greedy", "--games", "2", "--max-moves", "40"]


def run(args, capsys):
    status = cli.main(args)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def no_games(monkeypatch):
    """Fail the test if a tournament starts: errors must come before any game."""

    def refuse(*args, **kwargs):
        raise AssertionError("a game was played before the error")

    monkeypatch.setattr(tournaments, "run_tournament", refuse)
    monkeypatch.setattr(terminal_game, "make_agent", refuse)


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    """A current folder of its own, where fallback files land."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def one_error_line(err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


# =============================================================================== numbers


@pytest.mark.parametrize(
    "args, option",
    [
        (["evaluate", "--agents", "random", "greedy", "--seed", "-5"], "--seed"),
        (["evaluate", "--agents", "random", "greedy", "--seed", "x"], "--seed"),
        (["evaluate", "--agents", "random", "greedy", "--seed", str(2**32)], "--seed"),
        (["evaluate", "--agents", "random", "greedy", "--games", "0"], "--games"),
        (["evaluate", "--agents", "random", "greedy", "--games", "1.5"], "--games"),
        (["evaluate", "--agents", "random", "greedy", "--games", "１"], "--games"),
        (["evaluate", "--agents", "random", "greedy", "--workers", "0"], "--workers"),
        (["evaluate", "--agents", "random", "greedy", "--max-moves", "-1"], "--max-moves"),
        (["play", "--seed", "-1"], "--seed"),
        (["play", "--max-moves", "0"], "--max-moves"),
        (["replay", "x.json", "--frame-size", "10"], "--frame-size"),
        (["replay", "x.json", "--fps", "0"], "--fps"),
        (["replay", "x.json", "--fps", "nan"], "--fps"),
        (["replay", "x.json", "--fps", "inf"], "--fps"),
        (["demo", "--frame-size", "big"], "--frame-size"),
        (["demo", "--seed", "-2"], "--seed"),
    ],
)
def test_numeric_options_name_the_option_and_range(args, option, capsys, no_games):
    status, _out, err = run(args, capsys)
    assert status == 2
    assert f"argument {option}: expected " in err and "Traceback" not in err


def test_help_is_status_0(capsys):
    status, out, _err = run(["evaluate", "--help"], capsys)
    assert status == 0 and "--records" in out and "new or empty" in out


# =============================================================================== evaluate


def test_evaluate_out_is_a_directory(tmp_path, capsys, no_games):
    status, _out, err = run([*EVALUATE, "--out", str(tmp_path)], capsys)
    assert status == 2
    one_error_line(err, "--out", "is a directory", "results.json")


def test_evaluate_out_under_a_file(tmp_path, capsys, no_games):
    (tmp_path / "file").write_text("x")
    status, _out, err = run([*EVALUATE, "--out", str(tmp_path / "file" / "r.json")], capsys)
    assert status == 2
    one_error_line(err, "--out", "is a file, not a folder")


def test_evaluate_out_unwritable(capsys, no_games):
    status, _out, err = run([*EVALUATE, "--out", "/proc/satellites/results.json"], capsys)
    assert status == 2
    one_error_line(err, "--out", "cannot be written")


def test_evaluate_out_missing_folders_are_created(tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "results.json"
    status, _, _err = run([*EVALUATE, "--out", str(out)], capsys)
    assert status == 0 and json.loads(out.read_text())["agents"] == ["random", "greedy"]


def test_evaluate_keeps_the_results_when_the_write_fails_at_the_end(
    tmp_path, capsys, cwd, monkeypatch
):
    """The folder checked before the games turns into a file while they are played."""
    out = tmp_path / "gone" / "results.json"
    records = tmp_path / "gone2" / "games"
    tournament = tournaments.run_tournament

    def run_then_break_the_paths(*args, **kwargs):
        result = tournament(*args, **kwargs)
        (tmp_path / "gone").write_text("not a folder any more")
        (tmp_path / "gone2").write_text("not a folder any more")
        return result

    monkeypatch.setattr(tournaments, "run_tournament", run_then_break_the_paths)
    status, _out_text, err = run([*EVALUATE, "--out", str(out), "--records", str(records)], capsys)
    assert status == 2
    one_error_line(
        err,
        "could not write --out",
        "saved it to",
        "could not write --records",
        "saved the records to",
    )
    (saved,) = cwd.glob("satellites-results-*.json")
    assert json.loads(saved.read_text())["pairs"][0]["games"] == 2
    (folder,) = cwd.glob("satellites-records-*")
    assert sorted(p.name for p in folder.iterdir()) == [
        "game_0000.html",
        "game_0000.json",
        "game_0001.html",
        "game_0001.json",
        "index.html",
        "tournament.json",
    ]
    assert str(saved) in err and str(folder) in err


def test_evaluate_refuses_a_records_folder_of_another_tournament(tmp_path, capsys, no_games):
    records = tmp_path / "games"
    records.mkdir()
    (records / "game_0000.json").write_text("{}")
    status, _out, err = run([*EVALUATE, "--records", str(records)], capsys)
    assert status == 2
    one_error_line(err, "--records folder", "is not empty", "one tournament")
    (tmp_path / "file").write_text("x")
    status, _out, err = run([*EVALUATE, "--records", str(tmp_path / "file")], capsys)
    assert status == 2
    one_error_line(err, "--records", "is a file")


def test_evaluate_into_an_empty_records_folder(tmp_path, capsys):
    records = tmp_path / "games"
    records.mkdir()
    status, _out, _err = run([*EVALUATE, "--records", str(records)], capsys)
    assert status == 0 and len(list(records.iterdir())) == 6  # 2 games: json + html, 2 more


def test_elo_title_names_its_anchor(capsys):
    status, out, _err = run(
        ["evaluate", "--agents", "mcts:3", "mcts:2", "--games", "2", "--max-moves", "20"], capsys
    )
    assert status == 0
    assert "Elo, mcts:3 = +0 (no agent of the shipped scale played)" in out
    status, out, _err = run(
        ["evaluate", "--agents", "greedy", "mcts:2", "--games", "2", "--max-moves", "20"], capsys
    )
    assert status == 0 and "Elo, greedy = +400 (the shipped scale)" in out


# =============================================================================== replay


@pytest.fixture
def record_file(tmp_path):
    game = Game.new(seed=2)
    start = game.to_spn()
    for _ in range(3):
        game.play_move(game.legal_moves()[0])
    path = tmp_path / "record.json"
    GameRecord.of(start, game).save(path)
    return path


def test_replay_gif_to_a_directory(tmp_path, record_file, capsys):
    status, _out, err = run(["replay", str(record_file), "--gif", str(tmp_path)], capsys)
    assert status == 2
    one_error_line(err, "--gif", "is a directory", "game.gif")


def test_replay_of_a_directory(tmp_path, capsys):
    status, _out, err = run(["replay", str(tmp_path)], capsys)
    assert status == 2
    one_error_line(err, "is a directory, not a record file")


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"moves": None}, "field 'moves' must be a list"),
        ({"moves": "c10-c7"}, "field 'moves' must be a list"),
        ({"moves": [1]}, "move 1 must be a string"),
        ({"moves": [None]}, "move 1 must be a string"),
        ({"max_moves": "400"}, "field 'max_moves' must be an integer"),
        ({"start_spn": None}, "field 'start_spn' must be a string"),
    ],
)
def test_replay_of_records_with_wrong_types(record_file, capsys, change, fragment):
    data = {**json.loads(record_file.read_text()), **change}
    record_file.write_text(json.dumps(data))
    status, _out, err = run(["replay", str(record_file)], capsys)
    assert status == 2
    one_error_line(err, fragment, str(record_file))


def test_demo_gif_to_a_directory(tmp_path, capsys, no_games):
    status, _out, err = run(["demo", "--gif", str(tmp_path), "--max-moves", "5"], capsys)
    assert status == 2
    one_error_line(err, "--gif", "is a directory")


# =============================================================================== play


def scripted(answers):
    answers = iter(answers)

    def answer(prompt):
        item = next(answers, EOFError)
        if isinstance(item, type) and issubclass(item, BaseException):
            raise item
        return item

    return answer


@pytest.mark.parametrize(
    "where, fragment",
    [
        ("dir", "is a directory"),
        ("under_file", "is a file, not a folder"),
    ],
)
def test_play_save_checked_before_the_game(
    tmp_path, capsys, no_games, monkeypatch, where, fragment
):
    (tmp_path / "file").write_text("x")
    save = tmp_path if where == "dir" else tmp_path / "file" / "game.json"
    monkeypatch.setattr(builtins, "input", scripted([]))
    status, out, err = run(["play", "--opponent", "random", "--save", str(save)], capsys)
    assert status == 2
    one_error_line(err, "--save", fragment)
    assert "You are" not in out  # no game started


def test_play_save_into_a_missing_folder(tmp_path, capsys, monkeypatch):
    save = tmp_path / "new" / "game.json"
    monkeypatch.setattr(builtins, "input", scripted(["quit"]))
    status, _out, _err = run(["play", "--opponent", "random", "--save", str(save)], capsys)
    assert status == 0
    record = GameRecord.load(save)
    assert record.result["end"] == "resigned" and record.result["winner"] == "blue"


def test_illegal_input_changes_nothing_and_eof_still_saves(tmp_path, capsys, monkeypatch):
    game = Game.new(seed=0)
    first = game.legal_moves()[0]
    source = first.split("-")[0]
    answers = ["hello", "a1-a2", "", "c10-c7>", "[/bold]", f"{source}-{source}", first, "moves"]
    monkeypatch.setattr(builtins, "input", scripted(answers))
    save = tmp_path / "game.json"
    status, out, err = run(
        ["play", "--opponent", "random", "--seed", "0", "--save", str(save)], capsys
    )
    assert status == 0, err
    assert out.count("not played") == 6 and "input closed: game abandoned" in out
    record = GameRecord.load(save)
    assert record.moves[0] == first and len(record.moves) == 2  # our move and the reply
    assert record.result["end"] == "ongoing" and record.result["winner"] is None
    positions = record.replay()
    assert positions[-1].to_spn() == record.result["final_spn"]


def test_ctrl_c_mid_game_saves_and_exits_130(tmp_path, capsys, monkeypatch):
    first = Game.new(seed=0).legal_moves()[0]
    monkeypatch.setattr(builtins, "input", scripted([first, KeyboardInterrupt]))
    save = tmp_path / "game.json"
    status, _out, err = run(["play", "--opponent", "random", "--save", str(save)], capsys)
    assert status == 130 and "interrupted" in err and "Traceback" not in err
    assert GameRecord.load(save).moves[0] == first


def test_play_keeps_the_game_when_the_save_fails_at_the_end(tmp_path, capsys, cwd, monkeypatch):
    first = Game.new(seed=0).legal_moves()[0]
    save = tmp_path / "later" / "game.json"

    def answer(prompt, answers=iter([first])):  # noqa: B008 (the answers, consumed in turn)
        move = next(answers, None)
        if move is None:
            (tmp_path / "later").write_text("the folder became a file")
            return "quit"
        return move

    monkeypatch.setattr(builtins, "input", answer)
    status, _out, err = run(["play", "--opponent", "random", "--save", str(save)], capsys)
    assert status == 2
    one_error_line(err, "could not write --save", "saved it to")
    (saved,) = cwd.glob("satellites-game-*.json")
    assert GameRecord.load(saved).moves[0] == first and str(saved) in err


# =============================================================================== errors


def _project_errors():
    from satellites_env.agents import AgentSpecError
    from satellites_env.core import IllegalActionError, NotationError
    from satellites_env.record import RecordError

    errors = [
        AgentSpecError("bad spec"),
        RecordError("bad record"),
        NotationError("bad spn"),
        IllegalActionError("bad move"),
        FileExistsError(17, "File exists", "runs/x"),
        FileNotFoundError(2, "No such file or directory", "x.yaml"),
        PermissionError(13, "Permission denied", "/root/x"),
        ValueError("plain"),
        terminal.CliError("cli"),
    ]
    try:
        from training.common.checkpoint import CheckpointError
        from training.common.config import ConfigError
    except ImportError:
        pass
    else:
        errors += [ConfigError("bad config"), CheckpointError("bad checkpoint")]
    return errors


@pytest.mark.parametrize("error", _project_errors(), ids=lambda e: type(e).__name__)
def test_every_project_error_is_one_line_and_status_2(error, capsys, monkeypatch):
    def fail(args):
        raise error

    monkeypatch.setattr(cli, "run_command", fail)
    status, _out, err = run(["demo"], capsys)
    assert status == 2
    one_error_line(err)
    if isinstance(error, OSError):
        assert error.strerror in err and error.filename in err


def test_interrupt_and_internal_errors(capsys, monkeypatch):
    def interrupt(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_command", interrupt)
    status, _out, err = run(["demo"], capsys)
    assert status == 130 and err.strip() == "interrupted"

    def bug(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli, "run_command", bug)
    status, _out, err = run(["demo"], capsys)
    assert status == 1 and "internal error: ZeroDivisionError" in err
    assert len(err.strip().splitlines()) == 1
    monkeypatch.setenv("SATELLITES_TRACEBACK", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["demo"])


def test_error_text_is_not_read_as_markup(capsys, monkeypatch):
    def fail(args):
        raise ValueError("unknown keys ['[/red]'] and [bold]")

    monkeypatch.setattr(cli, "run_command", fail)
    status, _out, err = run(["demo"], capsys)
    assert status == 2 and "['[/red]'] and [bold]" in err
