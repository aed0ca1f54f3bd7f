"""`satellites play` treats a closed standard input (`<&-`) as it treats the end of input:
the game so far is saved, and the command ends cleanly (exit 0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def close_stdin() -> None:
    os.close(0)  # in the child, before Python starts: sys.stdin is None there


@pytest.mark.parametrize("stdin", ["closed", "end of file"])
def test_play_with_stdin_closed_or_at_its_end_saves_and_exits_cleanly(tmp_path, stdin):
    save = tmp_path / "game.json"
    process = subprocess.run(
        [sys.executable, "-m", "satellites_env", "play", "--seed", "1", "--save", str(save)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        stdin=None if stdin == "closed" else subprocess.DEVNULL,
        preexec_fn=close_stdin if stdin == "closed" else None,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.returncode == 0, process.stderr[-500:]
    assert "input closed: game abandoned" in process.stdout
    assert "internal error" not in process.stdout + process.stderr
    record = json.loads(save.read_text())
    assert record["moves"] == [] and record["result"]["end"] == "ongoing"


def test_a_closed_stream_in_process_is_the_end_of_input(monkeypatch, tmp_path, capsys):
    from satellites_env import cli

    class Closed:
        closed = True

    monkeypatch.setattr(sys, "stdin", Closed())
    assert cli.main(["play", "--seed", "2", "--save", str(tmp_path / "g.json")]) == 0
    assert "input closed" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", None)
    assert cli.main(["play", "--seed", "2", "--save", str(tmp_path / "h.json")]) == 0
