"""`satellites replay`: the HTML page, and stepping through a game in the terminal."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from satellites_env import cli, terminal_game
from satellites_env.agents import make_agent
from satellites_env.arena import play_game

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")


@pytest.fixture(scope="module")
def record_path(tmp_path_factory) -> Path:
    record = play_game(make_agent("greedy", seed=1), make_agent("random", seed=2), 3, max_moves=12)
    return record.save(tmp_path_factory.mktemp("records") / "game.json")


def run(args, capsys):
    status = cli.main(args)
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_replay_html_page(record_path, tmp_path, capsys):
    out = tmp_path / "pages" / "game.html"
    status, text = run(["replay", str(record_path), "--html", str(out)], capsys)
    assert status == 0 and "wrote the replay page" in text
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and 'id="packed-data"' in html
    assert "a   b   c" not in text  # with --html, no boards are printed
    status, text = run(["replay", str(record_path), "--html", str(tmp_path)], capsys)
    assert status == 2 and "is a directory" in text
    status, text = run(["replay", str(record_path), "--html", str(out), "--boards"], capsys)
    assert status == 0 and text.count("a   b   c") == 2 * 13


def test_replay_prints_every_board_when_stdin_is_not_a_terminal(record_path, capsys):
    status, text = run(["replay", str(record_path)], capsys)
    assert status == 0 and text.count("a   b   c") == 2 * 13  # 13 positions, files twice


def test_replay_steps_on_key_presses(record_path, capsys):
    keys = iter(["right", "right", "left", "end", "home", "space", "q"])
    terminal_game.replay(record_path, None, False, 160, 2.0, read_key=lambda: next(keys))
    text = capsys.readouterr().out
    shown = re.findall(r"· (start \(0 of 12\)|move \d+ of 12)", text)
    assert shown == [
        "start (0 of 12)",
        "move 1 of 12",
        "move 2 of 12",
        "move 1 of 12",
        "move 12 of 12",
        "start (0 of 12)",
        "move 1 of 12",
    ]
    keys = iter(["end", "enter"])  # Enter at the end closes
    terminal_game.replay(record_path, None, False, 160, 2.0, read_key=lambda: next(keys))
    assert "move 12 of 12" in capsys.readouterr().out


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal needs POSIX")
def test_replay_in_a_real_terminal(record_path):
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 140, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "PYTHONUNBUFFERED": "1"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "satellites_env", "replay", str(record_path)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    seen = b""

    def until(pattern: str, timeout: float = 20) -> str:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = ANSI.sub("", seen.decode("utf-8", "replace"))
            if re.search(pattern, text):
                return text
            if select.select([master], [], [], 0.2)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        raise AssertionError(f"{pattern!r} not shown; got {seen[-2000:]!r}")

    try:
        text = until(r"start \(0 of 12\)[\s\S]*q: quit")
        assert "\x1b[" in seen.decode("utf-8", "replace")  # colors on a terminal
        assert "Satellites - move 1, red to move" in text
        os.write(master, b"\x1b[C")  # the right arrow
        until(r"move 1 of 12[\s\S]*q: quit")
        os.write(master, b"\x1b[F")  # End
        until(r"move 12 of 12[\s\S]*q: quit")
        os.write(master, b"q")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
