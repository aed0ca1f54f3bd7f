"""Fuzzing `satellites_env.cli.main(argv)` with random argument lists for the cheap commands
(replay, evaluate, play, demo): the status is 0 or 2, a status 2 says `error:` (argparse's
usage error or our one line), and no exception other than what `main` turns into a status
escapes. Moves and games are kept short; junk tokens land anywhere."""

from __future__ import annotations

import builtins
import contextlib
import functools
import operator
import os
import stat
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_files import dangling_link, fifo, finishes, unchanged, unix_socket

from satellites_env import cli
from satellites_env.core import Game
from satellites_env.record import GameRecord

# Junk without '/': a junk path stays inside the example's own folder.
JUNK = st.text(
    alphabet=st.characters(blacklist_characters="/\\\x00", blacklist_categories=("Cs",)), max_size=8
)


def mostly(valid: list[str], invalid: list[str]) -> st.SearchStrategy[str]:
    """Valid values three times as likely as invalid ones, so most runs get past argparse."""
    return st.sampled_from(valid * max(1, 3 * len(invalid) // len(valid)) + invalid)


AGENTS = mostly(
    ["random", "greedy", "mcts:1", "random", "greedy"],
    [
        "mcts:x",
        "mcts:-1",
        "minimax",
        "",
        "random:3",
        "checkpoint:",
        "checkpoint:{tmp}",
        "checkpoint:missing.pt",
        "[red]x[/red]",
    ],
)
HUGE = "1" + "0" * 5000  # beyond every ceiling, and beyond Python's integer-string limit
SMALL_MOVES = mostly(["1", "3", "12"], ["0", "-3", "x", "1e3", "０", "1000001", HUGE])
GAMES = mostly(["1", "2"], ["0", "-1", "x", "2.0", "1000001", HUGE])
SEEDS = mostly(["0", "7", "4294967295"], ["-5", "4294967296", "s", "+3", " 2", HUGE])
WORKERS = mostly(["1"], ["0", "-2", "x", "257", HUGE])
# Special files and links in the example folder (see example_folder): an output never goes
# into or through them, an input FIFO or device is refused without waiting.
SPECIAL_OUTPUTS = [
    "{tmp}/pipe",
    "{tmp}/link.json",
    "{tmp}/dangling.json",
    "{tmp}/socket",
    "{tmp}/device",
]
FILES = mostly(
    ["{tmp}/out.json", "{tmp}/new/deep/x.json", "rel.json", "{tmp}/records"],
    ["{tmp}", "{tmp}/file/x.json", "", ".", "{tmp}/file", *SPECIAL_OUTPUTS],
)
GIFS = mostly(["{tmp}/x.gif", "{tmp}/new/x.gif"], ["{tmp}", "{tmp}/file/x.gif", *SPECIAL_OUTPUTS])
HTMLS = mostly(
    ["{tmp}/x.html", "{tmp}/new/x.html"], ["{tmp}", "{tmp}/file/x.html", "", *SPECIAL_OUTPUTS]
)
RECORDS = mostly(
    ["{tmp}/good.json", "{tmp}/link.json"],
    [
        "{tmp}/bad.json",
        "{tmp}/types.json",
        "{tmp}",
        "{tmp}/missing.json",
        "{tmp}/file",
        "",
        "{tmp}/pipe",
        "{tmp}/dangling.json",
        "{tmp}/socket",
        "{tmp}/device",
        "/dev/zero",
        "/dev/urandom",
    ],
)
LINES = st.one_of(JUNK, st.sampled_from(["moves", "quit", "pass", "a1-a2", "c10-c7>f9", "?"]))


def option(name: str, values) -> st.SearchStrategy[list[str]]:
    return values.map(lambda value: [name, value])


def command(name: str, *options, positional=None) -> st.SearchStrategy[list[str]]:
    parts = [
        st.lists(st.one_of(*options), max_size=3).map(
            lambda chosen: functools.reduce(operator.iadd, chosen, [])
        )
    ]
    if positional is not None:
        parts.insert(0, positional.map(lambda value: [value]))
    return st.tuples(*parts).map(
        lambda groups: [name, *functools.reduce(operator.iadd, groups, [])]
    )


EVALUATE = st.tuples(
    command(
        "evaluate",
        option("--games", GAMES),
        option("--seed", SEEDS),
        option("--workers", WORKERS),
        option("--out", FILES),
        option("--records", FILES),
    ),
    st.lists(AGENTS, min_size=1, max_size=3, unique=True),
    SMALL_MOVES,
).map(lambda parts: parts[0] + ["--agents", *parts[1], "--max-moves", parts[2]])
PLAY = st.tuples(
    command(
        "play",
        option("--opponent", AGENTS),
        option("--color", st.sampled_from(["red", "blue", "green"])),
        option("--seed", SEEDS),
        option("--save", FILES),
        option("--render", st.sampled_from(["ansi", "x"])),
    ),
    SMALL_MOVES,
).map(lambda parts: parts[0] + ["--max-moves", parts[1]])
REPLAY = command(
    "replay",
    option("--gif", GIFS),
    option("--html", HTMLS),
    option("--frame-size", mostly(["64"], ["10", "x", "-64", "4097", HUGE])),
    option(
        "--fps", mostly(["1", "50", "0.1"], ["0", "nan", "100", "-1", "50.0001", "1e309", HUGE])
    ),
    st.just(["--boards"]),
    positional=RECORDS,
)
DEMO = st.tuples(
    command(
        "demo",
        option("--seed", SEEDS),
        option("--gif", GIFS),
        option("--red", AGENTS),
        option("--blue", AGENTS),
        option("--frame-size", mostly(["64"], ["1", "y"])),
    ),
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
        fifo(folder / "pipe")
        unix_socket(folder / "socket")
        try:  # a node like /dev/null (root only; elsewhere a plain file stands in)
            os.mknod(folder / "device", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            (folder / "device").write_text("a plain file")
        (folder / "link.json").symlink_to(folder / "good.json")
        dangling_link(folder / "dangling.json")
        special = {
            name: os.lstat(folder / name)
            for name in ("pipe", "socket", "device", "link.json", "dangling.json")
        }
        good = (folder / "good.json").read_bytes()
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(before)
            for name, info in special.items():  # never replaced, never written through
                assert unchanged(folder / name, info), name
            assert (folder / "good.json").read_bytes() == good
            assert not (folder / "dangling.json.nowhere").exists()


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
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
        outcome = finishes(lambda: cli.main(args), seconds=120)  # a FIFO never blocks
        assert "error" not in outcome, (args, outcome)
        status = outcome["value"]
    captured = capsys.readouterr()
    assert status in (0, 2), (args, captured.err)
    assert "Traceback" not in captured.err + captured.out
    if status == 2:
        assert "error: " in captured.err, (args, captured.err)


# --------------------------------------------------------------------------- spec numbers

CEILINGS = {"mcts": 100_000, "az:pretrained": 4096}
DEFAULTS = {"mcts": 200, "az:pretrained": 32}
SPEC_NUMBERS = (
    st.one_of(
        st.integers(0, 3),
        st.integers(4090, 4100),
        st.integers(99_990, 100_010),
        st.integers(100_000, 10**30),
    ).map(str)
    | st.integers(0, 300).map(lambda k: "1" + "0" * k)
    | st.integers(4290, 5000).map(lambda k: "9" * k)
    | st.sampled_from(
        ["10**12", "1e12", "1_000", "+5", " 5", "5 ", "５", "-3", "0x10", "inf", "nan", "000007"]
    )
)


def within(text: str, ceiling: int) -> bool:
    """`text` is ASCII digits for a count from 1 to `ceiling`."""
    return text.isascii() and text.isdigit() and len(text) <= 12 and 1 <= int(text) <= ceiling


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(kind=st.sampled_from(list(CEILINGS)), text=SPEC_NUMBERS)
def test_fuzz_simulation_counts_near_and_beyond_the_ceilings(kind, text):
    """A count up to the ceiling builds the agent with it; anything else is one short
    AgentSpecError naming the spec, found when the spec is parsed (nothing is allocated)."""
    from satellites_env.agents import AgentSpecError, make_agent

    spec = f"{kind}:{text}"
    if within(text, CEILINGS[kind]):
        assert make_agent(spec, seed=0).simulations == int(text)
        return
    try:
        make_agent(spec, seed=0)
    except AgentSpecError as error:
        message = str(error)
    else:
        raise AssertionError(f"{spec[:40]!r} was accepted")
    assert message.startswith(f"agent spec '{kind}:") and len(message) < 400, message
    if text.isascii() and text.isdigit() and text.strip("0") and not within(text, CEILINGS[kind]):
        assert f"at most {CEILINGS[kind]:,} simulations" in message


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    kind=st.sampled_from(list(CEILINGS)),
    text=SPEC_NUMBERS.filter(lambda t: not within(t, CEILINGS["mcts"])),
)
def test_fuzz_bad_simulation_counts_are_one_line_before_any_game(kind, text, capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a game was played before the error")

    monkeypatch.setattr("satellites_env.arena.play_pairing_game", refuse)
    spec = f"{kind}:{text}"
    for argv in (
        ["evaluate", "--agents", spec, "random", "--games", "1"],
        ["play", "--opponent", spec],
        ["demo", "--red", spec],
    ):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert (
            len(lines) == 1 and lines[0].startswith("error: agent spec") and len(lines[0]) < 400
        ), err
