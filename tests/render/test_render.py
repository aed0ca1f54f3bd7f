"""Rendering: text board, RGB frames, the human window and GIF/PNG files."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bad_arguments import NUMBERS, integer_in
from hypothesis import HealthCheck, given, settings
from PIL import Image

from satellites_env.core import Game, engine, parse_square, square_name
from satellites_env.core.board import (
    PUSH_BASE,
    RAY,
    decode_push_action,
    direction_between,
    move_action,
)
from satellites_env.render import (
    PUSH_COLOR,
    HumanWindow,
    render_rgb,
    render_rich,
    render_text,
    save_gif,
    save_png,
)
from satellites_env.render.raster import MAX_FRAME_SIZE, MIN_FRAME_SIZE

# Positions found by seeded self-play games (biased towards connecting moves).
# Red to move; f1-f5 displaces the unconnected blue 2 on f5.
DISPLACEMENT_SPN = (
    "D..B.D.c../C..A....../...b...ac./.......B../........dC/.b..db..../"
    "d...A...../..aB...a../....c..A../C....D.... r - 0 72"
)
# Red has all 12 connected: blue plays its 3 grace moves.
GRACE_SPN = (
    "DaC...Ab../........c./........../..CbB...../...C...d../a.....dD../"
    "...cB.Ba../....dD..../.bA.A...../....c..... b 3 0 59"
)
# 23 satellites connected: the game is over (blue wins on the R23 tie-break).
FINAL_SPN = (
    "........../C..A....../dB.b...a../.b..c.cB.c/CD..D...dC/.b..dD..../"
    "....A...../..aB...a../.......A../.......... r - 0 88"
)

SIZE = 240  # small frames keep the tests fast


def displacement_game() -> Game:
    """DISPLACEMENT_SPN after f1-f5: the blue 2 waits to be pushed from f5."""
    game = Game.from_spn(DISPLACEMENT_SPN)
    source, target = parse_square("f1"), parse_square("f5")
    direction, k = direction_between(source, target)
    game.play(move_action(source, direction, k))
    assert game.pending_push == target
    return game


def push_cells(game: Game) -> set[int]:
    cells = set()
    for action in game.legal_actions():
        assert action >= PUSH_BASE  # only pushes are legal while one is pending
        direction, distance = decode_push_action(int(action))
        cells.add(int(RAY[game.pending_push, direction, distance - 1]))
    return cells


def orange_pixels(frame: np.ndarray) -> int:
    return int(np.all(frame == np.array(PUSH_COLOR, dtype=np.uint8), axis=-1).sum())


# --------------------------------------------------------------------------- text


def test_text_board_has_coordinates_values_and_turn():
    game = Game.new(seed=0)
    text = render_text(game)
    lines = text.splitlines()
    files = [line.split() for line in lines if line.split() == list("abcdefghij")]
    assert len(files) == 2  # files on top and bottom
    board_rows = [line for line in lines if line.split() and line.split()[0].isdigit()]
    assert [int(line.split()[0]) for line in board_rows] == list(range(10, 0, -1))
    assert all(int(line.split()[-1]) == int(line.split()[0]) for line in board_rows)
    # Every satellite is shown with color and value at its square.
    for cell, code in enumerate(game.board):
        if code:
            row, col = divmod(cell, 10)
            token = ("R" if code > 0 else "B") + str(abs(int(code)))
            assert board_rows[row][4 + 4 * col : 6 + 4 * col] == token
    assert "move 1" in text and "red to move" in text
    assert "legend" in text
    assert "*" not in "\n".join(board_rows)  # nothing connected at the start
    assert "\x1b" not in text  # plain by default


def test_text_marks_connected_and_colors_on_request():
    game = Game.from_spn(GRACE_SPN)
    text = render_text(game)
    assert "R4*" in text and "B1*" in text  # a10 and b10 are connected
    assert "blue to move" in text
    colored = render_text(game, color=True)
    assert "\x1b[" in colored


def test_text_shows_grace_counter():
    game = Game.from_spn(GRACE_SPN)
    assert game.grace == 3
    assert "\u26a1 3" in render_text(game)
    assert "\u26a1 3" not in render_text(Game.new(seed=0))


def test_text_shows_pending_push():
    game = displacement_game()
    text = render_text(game)
    assert "B2 waits to be pushed from f5" in text
    cells = push_cells(game)
    assert cells
    listed = text.split("push squares (o): ")[1].splitlines()[0].split(", ")
    assert sorted(listed) == sorted(square_name(c) for c in cells)
    board_rows = [line for line in text.splitlines() if line.split() and line.split()[0].isdigit()]
    assert sum(line.split().count("o") for line in board_rows) == len(cells)
    assert "waits to be pushed" not in render_text(Game.from_spn(DISPLACEMENT_SPN))


def test_text_shows_result_and_last_move():
    game = Game.from_spn(FINAL_SPN)
    assert game.is_over
    text = render_text(game)
    score = game.score()
    assert "blue wins" in text and score.reason in text
    assert "game over" not in render_text(Game.new(seed=0))
    played = Game.new(seed=0)
    played.play(int(played.legal_actions()[0]))
    assert f"last move: {played.history[-1]}" in render_text(played)
    assert "last move" not in render_text(played, last_move="")


def board_lines(text: str) -> list[str]:
    """The lines between the two file-letter lines: ranks and link lines."""
    lines = text.splitlines()
    files = [i for i, line in enumerate(lines) if line.split() == list("abcdefghij")]
    return lines[files[0] + 1 : files[1]]


def test_text_draws_every_connection():
    game = Game.from_spn(FINAL_SPN)
    lines = board_lines(render_text(game))
    ranks = [i for i, line in enumerate(lines) if line.split() and line.split()[0].isdigit()]
    drawn = set()
    for k, i in enumerate(ranks):
        row = lines[i]
        for col in range(9):  # a horizontal link stands in the gap after the cell
            if row[4 + 4 * col + 3] == "\u2500":
                drawn.add((k * 10 + col, k * 10 + col + 1))
        below = lines[i + 1] if i + 1 < len(lines) and i + 1 not in ranks else ""
        for col in range(10):
            if len(below) > 4 + 4 * col + 1 and below[4 + 4 * col + 1] == "\u2502":
                drawn.add((k * 10 + col, k * 10 + col + 10))
    assert drawn == set(engine.links(np.asarray(game.board))) and drawn


def test_rich_text_is_the_text_board_in_color():
    game = Game.from_spn(FINAL_SPN)
    rich = render_rich(game)
    assert [line.rstrip() for line in rich.plain.splitlines()] == render_text(game).splitlines()
    styles = {str(span.style) for span in rich.spans}
    assert any("red" in style for style in styles) and any("blue" in style for style in styles)
    assert any(" on " in style for style in styles)  # colonies tinted by controller
    colored = render_text(game, color=True)
    assert "\x1b[" in colored and "48;5;" in colored  # background tints in ANSI too


def test_text_lists_the_colonies_that_decided_the_result():
    game = Game.from_spn(FINAL_SPN)
    text = render_text(game)
    colonies = game.score().colonies
    listed = [line for line in text.splitlines() if line.startswith("  colony ")]
    assert len(listed) == len(colonies) > 0
    red, blue = game.score().controlled
    if red == blue:  # R23 decided it: the lowest-total colonies are named
        assert sum("tie-break (R23)" in line for line in listed) == 2
    assert "colony" not in render_text(Game.new(seed=0)).split("legend")[1]


# --------------------------------------------------------------------------- rgb


def test_rgb_shape_dtype_and_differs_between_positions():
    game = Game.new(seed=0)
    frame = render_rgb(game, size=SIZE)
    assert frame.shape == (SIZE, SIZE, 3) and frame.dtype == np.uint8
    assert render_rgb(game, size=333).shape == (333, 333, 3)
    after = game.clone()
    after.play(int(after.legal_actions()[0]))
    assert not np.array_equal(frame, render_rgb(after, size=SIZE))
    assert not np.array_equal(frame, render_rgb(Game.new(seed=1), size=SIZE))
    # Same position, same picture.
    assert np.array_equal(frame, render_rgb(game.clone(), size=SIZE))


def test_rgb_orange_push_cells_only_during_displacement():
    game = displacement_game()
    frame = render_rgb(game, size=SIZE)
    assert orange_pixels(frame) > 20 * len(push_cells(game))
    for other in (
        Game.new(seed=0),
        Game.from_spn(DISPLACEMENT_SPN),
        Game.from_spn(GRACE_SPN),
        Game.from_spn(FINAL_SPN),
    ):
        assert orange_pixels(render_rgb(other, size=SIZE)) == 0
    after = game.clone()
    after.play(int(after.legal_actions()[0]))
    assert orange_pixels(render_rgb(after, size=SIZE)) == 0


def test_rgb_grace_result_and_last_move_change_the_picture():
    grace = Game.from_spn(GRACE_SPN)
    no_grace = Game.from_spn(GRACE_SPN.replace(" b 3 0 59", " b 2 0 59"))
    assert not np.array_equal(render_rgb(grace, size=SIZE), render_rgb(no_grace, size=SIZE))
    played = Game.new(seed=0)
    played.play(int(played.legal_actions()[0]))
    assert not np.array_equal(
        render_rgb(played, size=SIZE), render_rgb(played, size=SIZE, last_move="")
    )


def test_rgb_smoke_over_a_whole_game():
    rng = np.random.default_rng(7)
    game = Game.new(seed=7)
    while not game.is_over and game.moves < 120:
        game.play(int(rng.choice(game.legal_actions())))
        if game.moves % 15 == 0 or game.pending_push is not None:
            assert render_rgb(game, size=128).shape == (128, 128, 3)
            assert "legend" in render_text(game)
    assert render_rgb(game, size=128).shape == (128, 128, 3)


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(NUMBERS)
def test_rgb_sizes_near_and_beyond_the_ceilings(size):
    """64 .. 4096 pixels; anything else (10, 4097, 1e300, 2.5, "640") is a ValueError naming
    size, before any surface is allocated (valid sizes above 128 are drawn at 128 here)."""
    game = Game.new(seed=0)
    if integer_in(size, MIN_FRAME_SIZE, MAX_FRAME_SIZE):
        small = min(int(size), 128)
        assert render_rgb(game, size=small).shape == (small, small, 3)
        return
    with pytest.raises(ValueError, match=r"^size must be an integer from 64 to 4096") as error:
        render_rgb(game, size=size)
    assert len(str(error.value)) < 200


# --------------------------------------------------------------------------- window, files


def test_human_window_headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    window = HumanWindow()
    assert not window.is_open
    frame = render_rgb(Game.new(seed=0), size=SIZE)
    assert window.show(frame) is True
    assert window.is_open
    assert window.show(render_rgb(displacement_game(), size=SIZE)) is True
    window.close()
    assert not window.is_open
    window.close()  # closing twice is fine


def test_save_gif_and_png(tmp_path):
    game = Game.new(seed=3)
    frames = [render_rgb(game, size=SIZE)]
    for _ in range(2):
        game.play(int(game.legal_actions()[0]))
        frames.append(render_rgb(game, size=SIZE))
    gif = save_gif(frames, tmp_path / "sub" / "game.gif", fps=4)
    with Image.open(gif) as image:
        assert image.format == "GIF"
        assert image.n_frames == 3
        assert image.size == (SIZE, SIZE)
        assert image.info.get("duration") == 250
    png = save_png(frames[0], tmp_path / "board.png")
    with Image.open(png) as image:
        assert np.array_equal(np.asarray(image.convert("RGB")), frames[0])
    with pytest.raises(ValueError):
        save_gif([], tmp_path / "empty.gif")


def test_engine_and_text_render_need_no_pygame():
    code = (
        "import sys\n"
        "import satellites_env.core\n"
        "assert 'pygame' not in sys.modules\n"
        "from satellites_env.render import render_text\n"
        "render_text(satellites_env.core.Game.new(seed=0))\n"
        "assert 'pygame' not in sys.modules\n"
    )
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
    forbidden = re.compile(
        r"^\s*(from|import)\s+(\S*render|pygame|gymnasium|pettingzoo|torch)\b", re.M
    )
    for module in (root / "satellites_env" / "core").glob("*.py"):  # the engine stays pure
        assert not forbidden.search(module.read_text()), module.name
