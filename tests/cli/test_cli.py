"""The `satellites` command line: evaluate, play, replay, train (errors included)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from PIL import Image

from satellites_env import cli, terminal_game
from satellites_env.record import GameRecord, RecordError


def run(args, capsys):
    status = cli.main(args)
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_evaluate_writes_the_documented_json(tmp_path, capsys):
    out = tmp_path / "results.json"
    records = tmp_path / "games"
    status, text = run(
        [
            "evaluate",
            "--agents",
            "random",
            "greedy",
            "--games",
            "2",
            "--seed",
            "0",
            "--max-moves",
            "80",
            "--out",
            str(out),
            "--records",
            str(records),
        ],
        capsys,
    )
    assert status == 0
    assert "random" in text and "greedy" in text and "Elo" in text
    data = json.loads(out.read_text())
    assert data["agents"] == ["random", "greedy"]
    (pair,) = data["pairs"]
    assert set(pair) == {"a", "b", "games", "a_wins", "b_wins", "draws"}
    assert pair["games"] == pair["a_wins"] + pair["b_wins"] + pair["draws"] == 2
    assert data["elo"]["greedy"] == 400.0 and data["elo_anchor"] == "greedy"
    assert [game["winner"] in ("red", "blue", None) for game in data["games"]] == [True, True]
    assert sorted(path.name for path in records.iterdir()) == [
        "game_0000.html",
        "game_0000.json",
        "game_0001.html",
        "game_0001.json",
        "index.html",
        "tournament.json",
    ]
    manifest = json.loads((records / "tournament.json").read_text())
    assert [game["record"] for game in manifest["games"]] == ["game_0000.json", "game_0001.json"]
    assert [game["replay"] for game in manifest["games"]] == ["game_0000.html", "game_0001.html"]
    index = (records / "index.html").read_text()
    for game in manifest["games"]:
        assert f'href="{game["replay"]}"' in index and f'href="{game["record"]}"' in index
    for game in manifest["games"]:
        record = GameRecord.load(records / game["record"])
        assert record.result["winner"] == game["winner"]
        assert (record.players["red"], record.players["blue"]) == (game["red"], game["blue"])


@pytest.mark.parametrize(
    "agents, message",
    [
        (["random", "minimax"], "unknown agent spec 'minimax'"),
        (["random", "mcts:x"], "positive integer"),
        (["random"], "at least 2 agents"),
    ],
)
def test_evaluate_errors(agents, message, capsys):
    status, text = run(["evaluate", "--agents", *agents, "--games", "2"], capsys)
    assert status == 2 and message in text


def test_play_survives_bad_input_and_saves_the_game(tmp_path, capsys, monkeypatch):
    answers = iter(["hello", "a1-a2", "moves", "z99-a1", "quit"])
    save = tmp_path / "game.json"
    record = terminal_game.play(
        "random",
        "red",
        seed=0,
        render="ansi",
        max_moves=400,
        save=save,
        input_fn=lambda prompt: next(answers),
    )
    text = capsys.readouterr().out
    assert "bad move 'hello'" in text
    assert "not played" in text
    assert "resigned" in text
    assert GameRecord.load(save).start_spn == record.start_spn


def test_play_a_real_move_and_opponent_replies(tmp_path, capsys):
    from satellites_env.core import Game

    first = Game.new(seed=4).legal_moves()[0]
    answers = iter([first, "quit"])
    record = terminal_game.play(
        "greedy",
        "red",
        seed=4,
        render="ansi",
        max_moves=400,
        save=None,
        input_fn=lambda prompt: next(answers),
    )
    assert record.moves[0] == first and len(record.moves) >= 2
    assert "greedy plays" in capsys.readouterr().out


def test_play_as_blue_and_end_of_input(capsys):
    def closed(prompt):
        raise EOFError

    record = terminal_game.play(
        "random", "blue", seed=1, render="ansi", max_moves=400, save=None, input_fn=closed
    )
    assert len(record.moves) == 1  # red (the opponent) moved first
    assert "abandoned" in capsys.readouterr().out


def test_replay_to_gif_and_boards(tmp_path, capsys):
    evaluate = tmp_path / "games"
    cli.main(
        [
            "evaluate",
            "--agents",
            "random",
            "greedy",
            "--games",
            "1",
            "--max-moves",
            "30",
            "--records",
            str(evaluate),
        ]
    )
    (path,) = evaluate.glob("game_*.json")
    gif = tmp_path / "game.gif"
    status, text = run(["replay", str(path), "--gif", str(gif), "--frame-size", "160"], capsys)
    assert status == 0 and "frames" in text
    with Image.open(gif) as image:
        assert image.n_frames > 1
    status, text = run(["replay", str(path), "--boards"], capsys)
    assert status == 0 and text.count("a   b   c") >= 2


def test_replay_errors(tmp_path, capsys):
    status, text = run(["replay", str(tmp_path / "missing.json")], capsys)
    assert status == 2 and "does not exist" in text
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    status, text = run(["replay", str(bad)], capsys)
    assert status == 2 and "not valid JSON" in text
    record = GameRecord("not an spn", ["a1-a2"])
    record.save(bad)
    status, text = run(["replay", str(bad)], capsys)
    assert status == 2 and "SPN" in text
    with pytest.raises(RecordError, match="move 1 'j1-j2' does not apply"):
        from satellites_env.core import Game

        GameRecord(Game.new(seed=0).to_spn(), ["j1-j2"]).replay()


def test_train_config_errors(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("total_stepz: 3\n")
    status, text = run(["train", "--config", str(config), "--out", str(tmp_path / "run")], capsys)
    assert status == 2 and "unknown config key total_stepz" in text
    status, text = run(["train", "--config", str(tmp_path / "none.yaml")], capsys)
    assert status == 2 and "does not exist" in text


def test_console_script_is_installed():
    result = subprocess.run(
        [sys.executable, "-m", "satellites_env", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for command in ("train", "evaluate", "play", "replay"):
        assert command in result.stdout
