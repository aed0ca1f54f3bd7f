"""Fuzzing `satellites_env.cli.main(argv)` with random argument lists for the cheap commands
(replay, evaluate, play, demo): the status is 0 or 2, a status 2 says `error:` (argparse's
usage error or our one line), and no exception other than what `main` turns into a status
escapes. Moves and games are kept short; junk tokens land anywhere."""

from __future__ import annotations

import builtins
import contextlib
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satellites_env import cli
from satellites_env.core import Game
from satellites_env.record import GameRecord

# Junk without '/': a junk path stays inside the example's own folder.
JUNK = st.text(alphabet=st.characters(blacklist_characters="/\\\x00",
                                      blacklist_categories=("Cs",)), max_size=8)


def mostly(valid: list[str], invalid: list[str]) -> st.SearchStrategy[str]:
    """Valid values three times as likely as invalid ones, so most runs get past argparse."""
    return st.sampled_from(valid * max(1, 3 * len(invalid) // len(valid)) + invalid)


AGENTS = mostly(["random", "greedy", "mcts:1", "random", "greedy"],
                ["mcts:x", "mcts:-1", "minimax", "", "random:3", "checkpoint:",
                 "checkpoint:{tmp}", "checkpoint:missing.pt", "[red]x[/red]"])
SMALL_MOVES = mostly(["1", "3", "12"], ["0", "-3", "x", "1e3", "０"])
GAMES = mostly(["1", "2"], ["0", "-1", "x", "2.0"])
SEEDS = mostly(["0", "7", "4294967295"], ["-5", "4294967296", "s", "+3", " 2"])
WORKERS = mostly(["1"], ["0", "-2", "x"])
FILES = mostly(["{tmp}/out.json", "{tmp}/new/deep/x.json", "rel.json", "{tmp}/records"],
               ["{tmp}", "{tmp}/file/x.json", "", ".", "{tmp}/file"])
GIFS = mostly(["{tmp}/x.gif", "{tmp}/new/x.gif"], ["{tmp}", "{tmp}/file/x.gif"])
HTMLS = mostly(["{tmp}/x.html", "{tmp}/new/x.html"], ["{tmp}", "{tmp}/file/x.html", ""])
RECORDS = mostly(["{tmp}/good.json"], ["{tmp}/bad.json", "{tmp}/types.json", "{tmp}",
                                       "{tmp}/missing.json", "{tmp}/file", ""])
LINES = st.one_of(JUNK, st.sampled_from(["moves", "quit", "pass", "a1-a2", "c10-c7>f9", "?"]))


def option(name: str, values) -> st.SearchStrategy[list[str]]:
    return values.map(lambda value: [name, value])


def command(name: str, *options, positional=None) -> st.SearchStrategy[list[str]]:
    parts = [st.lists(st.one_of(*options), max_size=3).map(lambda chosen: sum(chosen, []))]
    if positional is not None:
        parts.insert(0, positional.map(lambda value: [value]))
    return st.tuples(*parts).map(lambda groups: [name] + sum(groups, []))


EVALUATE = st.tuples(
    command("evaluate", option("--games", GAMES), option("--seed", SEEDS),
            option("--workers", WORKERS), option("--out", FILES), option("--records", FILES)),
    st.lists(AGENTS, min_size=1, max_size=3, unique=True), SMALL_MOVES,
).map(lambda parts: parts[0] + ["--agents", *parts[1], "--max-moves", parts[2]])
PLAY = st.tuples(
    command("play", option("--opponent", AGENTS), option("--color", st.sampled_from(
        ["red", "blue", "green"])), option("--seed", SEEDS), option("--save", FILES),
        option("--render", st.sampled_from(["ansi", "x"]))),
    SMALL_MOVES,
).map(lambda parts: parts[0] + ["--max-moves", parts[1]])
REPLAY = command("replay", option("--gif", GIFS), option("--html", HTMLS),
                 option("--frame-size", mostly(["64"], ["10", "x", "-64"])),
                 option("--fps", mostly(["1", "100"], ["0", "nan", "101", "-1"])),
                 st.just(["--boards"]), positional=RECORDS)
DEMO = st.tuples(
    command("demo", option("--seed", SEEDS), option("--gif", GIFS), option("--red", AGENTS),
            option("--blue", AGENTS), option("--frame-size", mostly(["64"], ["1", "y"]))),
    SMALL_MOVES,
).map(lambda parts: parts[0] + ["--max-moves", parts[1]])


@st.composite
def argv(draw) -> list[str]:
    tokens = draw(st.one_of(EVALUATE, PLAY, REPLAY, DEMO, st.lists(JUNK, max_size=4)))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):  # sometimes junk, anywhere
        tokens.insert(draw(st.integers(0, len(tokens))), draw(JUNK))
    return tokens


@contextlib.contextmanager
def example_folder():
    """A fresh folder with a good record, bad ones and a plain file; also the cwd."""
    before = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        game = Game.new(seed=1)
        start = game.to_spn()
        game.play_move(game.legal_moves()[0])
        GameRecord.of(start, game).save(folder / "good.json")
        (folder / "bad.json").write_text("{not json")
        (folder / "types.json").write_text('{"start_spn": null, "moves": [1, null]}')
        (folder / "file").write_text("a plain file")
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(before)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(args=argv(), lines=st.lists(LINES, max_size=4))
def test_fuzz_cli_arguments(args, lines, capsys, monkeypatch):
    answers = iter(lines)

    def scripted_input(prompt: str) -> str:
        line = next(answers, None)
        if line is None:
            raise EOFError
        return line

    monkeypatch.setattr(builtins, "input", scripted_input)
    with example_folder() as folder:
        args = [token.replace("{tmp}", str(folder)) for token in args]
        status = cli.main(args)
    captured = capsys.readouterr()
    assert status in (0, 2), (args, captured.err)
    assert "Traceback" not in captured.err + captured.out
    if status == 2:
        assert "error: " in captured.err, (args, captured.err)
