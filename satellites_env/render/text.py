"""The text board: plain (the envs' "ansi" mode), with ANSI colors, or as rich `Text`.

One layout, three outputs: `_lines` builds the board as lines of styled segments;
[`render_text`][satellites_env.render.text.render_text] joins them as plain text (or with ANSI
codes) and [`render_rich`][satellites_env.render.text.render_rich] returns a `rich.text.Text` that
the `satellites` command prints, so a terminal shows colors (red and blue satellites, connection
links, colonies tinted by controller) and a pipe or a file gets the same characters without codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from satellites_env.core.board import COLOR_NAMES, END_CONNECTED, RED, SIZE
from satellites_env.core.game import Game
from satellites_env.core.notation import FILES, square_name

from .facts import (
    GRACE_SYMBOL,
    BoardFacts,
    board_facts,
    colonies_summary,
    colony_notes,
    colony_squares,
    owner_name,
    pending_text,
    piece_name,
    result_text,
    turn_text,
)

if TYPE_CHECKING:  # rich is imported when a text is drawn
    from rich.text import Text

# style name -> (rich style, ANSI SGR parameters)
_FOREGROUND: dict[str | None, tuple[str | None, str | None]] = {
    "red": ("bold bright_red", "1;91"),
    "blue": ("bold bright_blue", "1;94"),
    "push": ("bold dark_orange", "1;38;5;208"),
    "dim": ("bright_black", "90"),
    "link": ("bold bright_white", "1;97"),
    "gold": ("bold gold1", "1;38;5;220"),
    "head": ("bold", "1"),
}
# colony tints by controller (a background), "tied" for equal sums
_BACKGROUND: dict[str | None, tuple[str | None, str | None]] = {
    "red": ("on #4a1a22", "48;5;52"),
    "blue": ("on #17285a", "48;5;17"),
    "tied": ("on grey27", "48;5;238"),
}
H_LINK = "\u2500"  # ─ between two connected satellites of one row
V_LINK = "\u2502"  # │ between two connected satellites of one column
CROWN = "\u265b"  # ♛

Segment = tuple[str, str | None, str | None]  # text, foreground style, background tint


def _tints(f: BoardFacts) -> dict[int, str]:
    """cell -> background tint of the colony it belongs to."""
    tints = {}
    for group in f.score.colonies:
        tint = (
            "tied" if group.controller is None else ("red" if group.controller == RED else "blue")
        )
        for cell in group.cells:
            tints[cell] = tint
    return tints


def _board_lines(f: BoardFacts) -> list[list[Segment]]:
    files = ("    " + " ".join(f" {letter} " for letter in FILES)).rstrip()
    tints = _tints(f)
    linked = set(f.links)
    push_set = set(f.push_cells)
    lines: list[list[Segment]] = [[(files, "dim", None)]]
    for row in range(SIZE):
        rank = SIZE - row
        line: list[Segment] = [(f"{rank:>2}  ", "dim", None)]
        for col in range(SIZE):
            cell = row * SIZE + col
            code = int(f.board[cell])
            tint = tints.get(cell)
            if code != 0:
                text = piece_name(code) + ("*" if f.connected[cell] else " ")
                line.append((text, "red" if code > 0 else "blue", tint))
            elif cell in push_set:
                line.append((" o ", "push", None))
            else:
                line.append((" . ", "dim", None))
            if col < SIZE - 1:
                joined = (cell, cell + 1) in linked
                same = tint is not None and tints.get(cell + 1) == tint
                line.append(
                    (H_LINK if joined else " ", "link" if joined else None, tint if same else None)
                )
        line.append((f" {rank}", "dim", None))
        lines.append(line)
        below = [
            (cell, cell + SIZE)
            for cell in range(row * SIZE, (row + 1) * SIZE)
            if (cell, cell + SIZE) in linked
        ]
        if row < SIZE - 1 and below:  # a line of vertical links under this row
            under: list[Segment] = [("    ", None, None)]
            for col in range(SIZE):
                cell = row * SIZE + col
                tint = tints.get(cell)
                shared = tint if tint is not None and tints.get(cell + SIZE) == tint else None
                if (cell, cell + SIZE) in linked:
                    under += [(" ", None, shared), (V_LINK, "link", shared), (" ", None, shared)]
                else:
                    under.append(("   ", None, shared))
                if col < SIZE - 1:
                    under.append((" ", None, None))
            lines.append(_rstrip(under))
    lines.append([(files, "dim", None)])
    return lines


def _rstrip(line: list[Segment]) -> list[Segment]:
    while line and not line[-1][0].strip() and line[-1][2] is None:
        line = line[:-1]
    return line


def _lines(game: Game, last_move: str | None) -> list[list[Segment]]:
    f = board_facts(game, last_move)
    red_c, blue_c = game.connected_counts
    header = (
        f"Satellites - {turn_text(game)} | passes {game.passes} | "
        f"connected: red {red_c}, blue {blue_c} ({red_c + blue_c}/{END_CONNECTED})"
    )
    lines: list[list[Segment]] = [[(header, "head", None)]]
    if game.grace is not None:
        done = COLOR_NAMES[1 - game.to_move]
        lines[0].append((f" | grace {GRACE_SYMBOL} {game.grace} ({done} is done)", "gold", None))
    lines.append([(colonies_summary(f.score), None, None)])
    if f.pending is not None:
        came = f" (by {pending_text(f)})" if f.pending_from is not None else ""
        pushes = ", ".join(square_name(c) for c in f.push_cells) or "none"
        lines.append(
            [
                (
                    f"displacement{came}: {owner_name(f.pending_piece)} "
                    f"{piece_name(f.pending_piece)} waits to be pushed from "
                    f"{square_name(f.pending)}; push squares (o): {pushes}",
                    "push",
                    None,
                )
            ]
        )
    if f.last_text:
        lines.append([(f"last move: {f.last_text}", None, None)])
    lines += _board_lines(f)
    lines.append(
        [
            (
                f"legend: R1-R4 red / B1-B4 blue satellite (value), * connected (locked), "
                f"{H_LINK} {V_LINK} connection, o push square, {GRACE_SYMBOL} grace moves "
                f"left",
                "dim",
                None,
            )
        ]
    )
    if game.is_over:
        lines.append([(result_text(game, f.score), "head", None)])
        for group, note in colony_notes(f.score):
            owner = group.controller
            crown = f" {CROWN}" if group.crowned else ""
            lines.append(
                [
                    ("  colony ", None, None),
                    (
                        colony_squares(group) + crown,
                        None if owner is None else ("red" if owner == RED else "blue"),
                        None,
                    ),
                    (f" (red {group.red_sum}, blue {group.blue_sum}): {note}", None, None),
                ]
            )
    return lines


def render_text(game: Game, last_move: str | None = None, color: bool = False) -> str:
    """A readable text board with a header, a legend and (at the end) the result.

    Each satellite shows color and value (`R3` red 3, `B2` blue 2); a `*` marks a connected
    one, `─` and `│` the connections between two; `o` marks a legal landing square of a
    pending push. At the end, each colony is listed with what it did for the result.
    `last_move` is the move to report (default: the game's last move; `""` for none).
    `color=True` adds ANSI colors (colonies tinted by controller).
    """
    out = []
    for line in _lines(game, last_move):
        parts = []
        for text, fg, bg in line:
            codes = ";".join(
                code
                for code in (
                    _FOREGROUND.get(fg, (None, None))[1],
                    _BACKGROUND.get(bg, (None, None))[1],
                )
                if code
            )
            parts.append(f"\x1b[{codes}m{text}\x1b[0m" if color and codes else text)
        out.append("".join(parts) if color else "".join(parts).rstrip())
    return "\n".join(out)


def render_rich(game: Game, last_move: str | None = None) -> Text:
    """The text board as a `rich.text.Text` with colors: rich prints it in color on
    a terminal and as the plain [`render_text`][satellites_env.render.text.render_text] characters
    elsewhere."""
    from rich.text import Text

    text = Text()
    for number, line in enumerate(_lines(game, last_move)):
        if number:
            text.append("\n")
        for part, fg, bg in line:
            style = " ".join(
                s for s in (_FOREGROUND.get(fg, ("", ""))[0], _BACKGROUND.get(bg, ("", ""))[0]) if s
            )
            text.append(part, style=style or None)
    return text
