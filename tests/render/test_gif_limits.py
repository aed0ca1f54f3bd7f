"""GIF limits that match behaviour: the frame rates a GIF can state (0.1 to 50 fps, whole
centiseconds), a memory budget checked before any frame is drawn, and still frames merged
without overflowing GIF's longest delay."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import satellites_env.render.files as gif_files
from satellites_env import cli
from satellites_env.core import Game
from satellites_env.record import GameRecord
from satellites_env.render.files import (
    GIF_BUDGET,
    MAX_FPS,
    MIN_FPS,
    check_fps,
    check_gif_budget,
    gif_bytes,
)


def delays(data: bytes) -> list[int]:
    """The delay of each frame of a GIF, in milliseconds."""
    with Image.open(io.BytesIO(data)) as image:
        found = []
        for index in range(image.n_frames):
            image.seek(index)
            found.append(image.info["duration"])
        return found


def distinct_frames(n: int, size: int = 64) -> list[np.ndarray]:
    return [np.full((size, size, 3), 3 * i, np.uint8) for i in range(n)]


@settings(max_examples=80, deadline=None)
@given(
    st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([MIN_FPS, MAX_FPS, 0.0999, 50.001, 0.001, 100, 3, 33.4, 40])
)
def test_every_accepted_fps_is_the_rate_the_gif_states(fps):
    if not MIN_FPS <= fps <= MAX_FPS:
        with pytest.raises(ValueError, match=r"fps must be a number from 0.1 to 50"):
            gif_bytes(distinct_frames(2), fps)
        return
    stated = delays(gif_bytes(distinct_frames(2), fps))
    expected = 10 * max(2, round(100 / fps))
    assert stated == [expected, expected]
    assert abs(expected / 10 - 100 / fps) <= 0.5  # the nearest whole centisecond


def test_the_ends_of_the_range():
    assert delays(gif_bytes(distinct_frames(2), MIN_FPS)) == [10_000, 10_000]
    assert delays(gif_bytes(distinct_frames(2), MAX_FPS)) == [20, 20]
    assert check_fps("2") == 2.0
    for bad in ("x", None, math.nan, math.inf, 0, -1):
        with pytest.raises(ValueError):
            check_fps(bad)


def test_many_equal_frames_merge_without_overflowing_the_longest_delay():
    frames = distinct_frames(1) * 150 + distinct_frames(2)[1:]  # 150 still frames of 10 s
    stated = delays(gif_bytes(frames, MIN_FPS))
    assert stated == [655_350, 10_000]  # the still picture: GIF's longest delay


def test_the_budget_is_checked_before_frames_are_drawn(monkeypatch):
    check_gif_budget(401, 480)
    with pytest.raises(
        ValueError,
        match=r"401 frames of 4096x4096 pixels needs .* use "
        r"--frame-size 1\d\d\d or less",
    ):
        check_gif_budget(401, 4096, "--frame-size")
    with pytest.raises(ValueError, match="at any frame size"):
        check_gif_budget(GIF_BUDGET // 4096 + 1, 64)
    drawn = []

    def frames():
        for frame in distinct_frames(50):
            drawn.append(frame)
            yield frame

    monkeypatch.setattr(gif_files, "GIF_BUDGET", 10 * 64 * 64)
    with pytest.raises(ValueError, match="more than"):
        gif_bytes(frames())
    assert len(drawn) == 11  # stopped at the first frame over the budget


def long_record(tmp_path, moves: int = 60):
    game = Game.new(seed=2)
    start = game.to_spn()
    while not game.is_over and game.moves < moves:
        game.play_move(game.legal_moves()[0])
    path = tmp_path / "game.json"
    GameRecord.of(start, game).save(path)
    return path, game.moves


@pytest.mark.parametrize("fps", ["0.001", "0", "100", "50.5", "nan", "inf", "1e309"])
def test_replay_fps_out_of_range_is_one_error(tmp_path, capsys, fps):
    path, _ = long_record(tmp_path, 2)
    assert cli.main(["replay", str(path), "--gif", str(tmp_path / "g.gif"), "--fps", fps]) == 2
    assert "--fps: expected a number from 0.1 to 50" in capsys.readouterr().err
    assert not (tmp_path / "g.gif").exists()


def test_replay_over_the_budget_is_refused_before_rendering(tmp_path, capsys, monkeypatch):
    path, moves = long_record(tmp_path)
    monkeypatch.setattr(gif_files, "GIF_BUDGET", 20 * 64 * 64)
    monkeypatch.setattr(
        "satellites_env.render.render_rgb", lambda *a, **k: pytest.fail("a frame was drawn")
    )
    assert (
        cli.main(["replay", str(path), "--gif", str(tmp_path / "g.gif"), "--frame-size", "64"]) == 2
    )
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("error: a GIF of") and f"{moves + 1} frames" in error
    assert not (tmp_path / "g.gif").exists()


def test_replay_and_demo_write_one_frame_a_move(tmp_path):
    path, moves = long_record(tmp_path, 12)
    assert (
        cli.main(
            [
                "replay",
                str(path),
                "--gif",
                str(tmp_path / "r.gif"),
                "--frame-size",
                "64",
                "--fps",
                "50",
            ]
        )
        == 0
    )
    assert sum(delays((tmp_path / "r.gif").read_bytes())) == 20 * (moves + 1)
    assert (
        cli.main(
            ["demo", "--gif", str(tmp_path / "d.gif"), "--frame-size", "64", "--max-moves", "10"]
        )
        == 0
    )
    with Image.open(tmp_path / "d.gif") as image:
        assert image.n_frames == 11
