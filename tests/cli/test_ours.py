"""Outputs never overwrite what is not ours (`satellites_env.files.refuse_unless_ours`): every
output file or folder a command writes (`replay --html/--gif`, `demo --gif`, `play --save`,
`evaluate --out`, `ladder show --html`) replaces only what satellites wrote there, unless
`--force`; what it refuses is left as it was."""

from __future__ import annotations

import builtins

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satellites_env import cli


def no_input(prompt: str) -> str:
    raise EOFError


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    path = tmp_path_factory.mktemp("record") / "game.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builtins, "input", no_input)
        assert cli.main(["play", "--opponent", "random", "--save", str(path)]) == 0
    return path


def commands(record, target):
    """(argv writing `target`, name) of every output option."""
    return {
        "replay --html": ["replay", str(record), "--html", str(target)],
        "replay --gif": ["replay", str(record), "--gif", str(target), "--frame-size", "64"],
        "demo --gif": ["demo", "--gif", str(target), "--max-moves", "4", "--frame-size", "64"],
        "play --save": ["play", "--opponent", "random", "--save", str(target)],
        "evaluate --out": [
            "evaluate",
            *("--agents", "random", "greedy", "--games", "1", "--max-moves", "4"),
            *("--out", str(target)),
        ],
    }


NAMES = list(commands("r", "t"))


@pytest.mark.parametrize("name", NAMES)
def test_a_file_of_the_users_is_replaced_only_with_force(
    name, record, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(builtins, "input", no_input)
    target = tmp_path / "mine"
    target.write_text("<html>my own page</html>")
    argv = commands(record, target)[name]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "was not written by satellites" in err and "--force" in err, err
    assert target.read_text() == "<html>my own page</html>"
    assert cli.main([*argv, "--force"]) == 0
    written = target.read_bytes()
    assert written != b"<html>my own page</html>"
    assert cli.main(argv) == 0  # now ours: replaced without --force
    capsys.readouterr()


def test_ladder_show_html_writes_only_into_its_own_folder(tmp_path, capsys):
    db = str(tmp_path / "ladder.db")
    assert cli.main(["ladder", "add", "random", "greedy", "--db", db, "--max-moves", "8"]) == 0
    assert cli.main(["ladder", "run", "--games-per-pair", "2", "--db", db]) == 0
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    assert cli.main(["ladder", "show", "--html", str(folder), "--db", db]) == 2
    assert "satellites did not write" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    (folder / "index.html").write_text("my index")
    assert cli.main(["ladder", "show", "--html", str(folder), "--db", db]) == 2
    assert (folder / "index.html").read_text() == "my index"
    assert cli.main(["ladder", "show", "--html", str(folder), "--db", db, "--force"]) == 0
    assert cli.main(["ladder", "show", "--html", str(folder), "--db", db]) == 0  # ours now
    assert (folder / "notes.txt").read_text() == "mine"


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(content=st.binary(max_size=300), name=st.sampled_from(["replay --html", "replay --gif"]))
def test_no_file_of_other_content_is_replaced_without_force(
    content, name, record, tmp_path, capsys
):
    target = tmp_path / "target"
    target.write_bytes(content)
    assert cli.main(commands(record, target)[name]) == 2
    assert target.read_bytes() == content
    capsys.readouterr()
