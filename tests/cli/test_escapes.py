"""Text from data reaches the terminal escaped (`satellites_env.terminal.printable`): names,
specs and reasons from records, databases and configs are printed without control characters
(ANSI and OSC escapes, C0 and C1 controls, bidirectional overrides) and never read as rich
markup, in plain lines, rich tables, CSV and error lines."""

from __future__ import annotations

import contextlib
import io
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from satellites_env import cli, terminal_game, tournament_view
from satellites_env.arena import tournament_result
from satellites_env.core.game import Game
from satellites_env.ladder_view import head_to_head_table, standings_table
from satellites_env.record import GameRecord
from satellites_env.terminal import UNPRINTABLE, printable

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
HOSTILE = [
    "\x1b]0;PWNED\x07",  # OSC: retitle the terminal
    "\x1b[2J\x1b[H",  # CSI: clear the screen
    "\x9b31m",  # C1 CSI
    "\x1bP+q\x1b\\",  # DCS
    "[bold red]x[/]",  # rich markup
    "\u202eevil",  # bidi override
    "a\rb\nc\x08\x7f\x00",
]
#: names from a record or a database: printable text, controls, escapes and markup mixed
names = st.lists(
    st.sampled_from(HOSTILE) | st.text(alphabet=st.characters(), max_size=8), max_size=4
).map("".join)


def unsafe(text: str) -> list[str]:
    """The characters of printed `text` that could drive a terminal (a newline between lines
    is the printer's own)."""
    return [
        c
        for line in text.split("\n")
        for c in line
        if unicodedata.category(c) == "Cc" or c in BIDI or c in "\u2028\u2029"
    ]


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.characters(), max_size=40))
def test_printable_leaves_nothing_that_drives_a_terminal(text):
    shown = printable(text)
    assert not unsafe(shown) and "\n" not in shown
    assert not UNPRINTABLE.search(shown)
    if not UNPRINTABLE.search(text):
        assert shown == text  # ordinary text is unchanged


def test_each_kind_is_shown_as_an_escape():
    assert printable("\x1b]0;t\x07") == "\\x1b]0;t\\x07"
    assert printable("\x9b\u202e\x00") == "\\x9b\\u202e\\x00"


def rendered(table) -> str:
    out = io.StringIO()
    Console(file=out, width=400, color_system=None, force_terminal=False).print(table)
    return out.getvalue()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(names, min_size=2, max_size=3, unique=True))
def test_tournament_and_ladder_tables_escape_names(agents):
    result = tournament_result(agents, 1, 0, 30, [None] * (len(agents) * (len(agents) - 1)))
    for table in (
        tournament_view.results_table(result, "t"),
        tournament_view.elo_table(result),
    ):
        assert not unsafe(rendered(table))
    rows = [
        {
            "rank": k + 1,
            "name": name,
            "elo": 1.0,
            "low": 0.0,
            "high": 2.0,
            "games": 1,
            "score": 0.5,
            "los_next": None,
        }
        for k, name in enumerate(agents)
    ]
    table = {"games": 1, "anchor": agents[0], "anchor_elo": 0.0, "agents": rows, "matrix": {}}
    for shown in (standings_table(table, "db"), head_to_head_table(table)):
        text = rendered(shown)
        assert not unsafe(text)
        for name in agents:
            if "[" in name and not UNPRINTABLE.search(name):
                assert name in text  # markup is shown, never applied


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(red=names, blue=names)
def test_a_records_players_are_printed_escaped_while_stepping(red, blue):
    game = Game.new(seed=0, max_moves=10)
    start = game.to_spn()
    game.play(game.legal_actions()[0])
    game_record = GameRecord.of(start, game, {"red": red, "blue": blue})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # the console writes to sys.stdout of the moment
        terminal_game.step_through(game_record.replay("test"), game_record, lambda: "q")
    assert not unsafe(out.getvalue())


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=names)
def test_error_lines_escape_what_they_quote(name, capsys):
    status = cli.main(["evaluate", "--agents", f"mcts:{name}x", "random", "--games", "1"])
    err = capsys.readouterr().err
    assert status == 2 and not unsafe(err), err
