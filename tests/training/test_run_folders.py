"""A run folder is recognised as a run's before anything in it is read or replaced: `train`
and `exploit --out` start only in a new or empty folder, or continue a folder marked as a
run's; a path of any depth or length is a clear error or works, never a RecursionError."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_training import TINY, tiny_config

from satellites_env import cli
from satellites_env.files import FileKindError, make_folders
from training.common.checkpoint import CheckpointError
from training.common.run_folder import (
    OUTPUT_FILES,
    RUN_MARKER,
    RunError,
    check_run_folder,
    claim_run_folder,
)
from training.ppo.trainer import PPOTrainer

FAST_EVAL = {
    "every": 2,
    "games": 2,
    "opponents": ["random"],
    "final": {"random": 2},
    "max_moves": 60,
}


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY, "eval": FAST_EVAL}))
    return path


def remove_tree(root: Path) -> None:
    """Remove a folder tree of any depth, one entry at a time: pytest's own clean-up of old
    temporary folders (shutil.rmtree) recurses, and a tree a thousand folders deep would stop
    it with a RecursionError in a later session."""
    stack = [(str(root), False)]
    while stack:
        path, emptied = stack.pop()
        if emptied:
            os.rmdir(path)
            continue
        stack.append((path, True))
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, False))
                else:
                    os.unlink(entry.path)


@pytest.fixture
def deep_cwd(tmp_path, monkeypatch):
    """A fresh current folder whose tree is removed at the end, however deep it grew."""
    folder = tmp_path / "deep"
    folder.mkdir()
    monkeypatch.chdir(folder)
    yield folder
    monkeypatch.chdir(tmp_path)
    remove_tree(folder)


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` with its bytes (None for a folder)."""
    return {
        str(p.relative_to(folder)): (None if p.is_dir() else p.read_bytes())
        for p in sorted(folder.rglob("*"))
    }


def users_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "config.json").write_text('{"my": "own settings"}')
    (folder / "summary.json").write_text('{"my": "own summary"}')
    return folder


def test_train_into_a_users_folder_is_refused_and_nothing_there_changes(tmp_path, capsys):
    folder = users_folder(tmp_path)
    before = snapshot(folder)
    assert cli.main(["train", "--config", str(config_file(tmp_path)), "--out", str(folder)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("error: run folder") and "not a satellites run" in error
    assert "config.json" in error and RUN_MARKER in error
    assert snapshot(folder) == before


def test_exploit_into_a_users_folder_is_refused_and_nothing_there_changes(tmp_path, capsys):
    folder = users_folder(tmp_path)
    before = snapshot(folder)
    assert (
        cli.main(["exploit", "--target", "greedy", "--minutes", "0.02", "--out", str(folder)]) == 2
    )
    assert "not a satellites run" in capsys.readouterr().err
    assert snapshot(folder) == before


def test_a_foreign_checkpoint_beside_user_files_is_refused_unchanged(tmp_path):
    folder = users_folder(tmp_path)
    torch.save({"not": "ours"}, folder / "checkpoint.pt")
    before = snapshot(folder)
    with pytest.raises(CheckpointError, match="not a satellites checkpoint"):
        claim_run_folder(folder)
    with pytest.raises(CheckpointError, match="not a satellites checkpoint"):
        PPOTrainer(tiny_config(), folder)
    assert snapshot(folder) == before


def test_a_new_or_empty_folder_becomes_a_marked_run_with_its_own_config(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "run.lock").write_text("")  # an earlier refused start's lock
    for folder in (empty, tmp_path / "new" / "deeper", tmp_path / "locked"):
        assert check_run_folder(folder) is False
        assert claim_run_folder(folder) == folder
        assert json.loads((folder / RUN_MARKER).read_text())["format"] == "satellites-run"
        assert check_run_folder(folder) is True


def test_a_marked_folder_left_before_the_first_checkpoint_gets_this_runs_config(tmp_path):
    run = claim_run_folder(tmp_path / "run")
    (run / "config.json").write_text('{"seed": 999}')  # an aborted start with other settings
    PPOTrainer(tiny_config(eval=FAST_EVAL), run).run()
    assert json.loads((run / "config.json").read_text())["seed"] == TINY["seed"]


def test_a_run_of_an_earlier_version_without_the_marker_is_still_ours(tmp_path):
    run = tmp_path / "run"
    PPOTrainer(tiny_config(), run).save()
    (run / RUN_MARKER).unlink()
    (run / "config.json").write_text(json.dumps(tiny_config().to_dict()))
    assert check_run_folder(run) is True
    with pytest.raises(RunError, match="unfinished run"):
        PPOTrainer(tiny_config(), run)
    PPOTrainer(tiny_config(), run, resume=True).save()
    assert (run / RUN_MARKER).is_file()


@pytest.mark.parametrize("content", ["", "{", '{"format": "something else"}', "[1]"])
def test_a_marker_that_is_not_ours_is_refused(tmp_path, content):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / RUN_MARKER).write_text(content)
    with pytest.raises(RunError, match="is not a satellites run marker"):
        claim_run_folder(folder)


def test_a_file_or_a_folder_under_a_file_is_a_clear_error(tmp_path, capsys):
    plain = tmp_path / "file"
    plain.write_text("x")
    with pytest.raises(RunError, match="is a regular file, not a folder"):
        claim_run_folder(plain)
    with pytest.raises(RunError, match="cannot be"):
        claim_run_folder(plain / "run")
    assert (
        cli.main(["train", "--config", str(config_file(tmp_path)), "--out", str(plain / "run")])
        == 2
    )
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: run folder")


@pytest.mark.parametrize("depth, width", [(1100, 1), (3000, 1), (30, 200), (1, 300)])
def test_any_depth_or_length_is_made_or_refused_in_one_line(
    tmp_path, deep_cwd, capsys, depth, width
):
    out = "/".join(["a" * width] * depth)
    try:
        claim_run_folder(out)
    except RunError as error:
        message = str(error)
        assert "cannot be" in message and "\n" not in message and len(message) < 1400
        assert cli.main(["train", "--config", str(config_file(tmp_path)), "--out", out]) == 2
        assert "error: run folder" in capsys.readouterr().err
    else:
        assert (Path(out) / RUN_MARKER).is_file()


def test_make_folders_does_not_recurse(deep_cwd):
    make_folders("/".join(["b"] * 1500))
    assert Path("/".join(["b"] * 1500)).is_dir()


NAMES = [
    "config.json",
    "summary.json",
    "checkpoint.pt",
    "final.pt",
    "run.lock",
    "notes.txt",
    "tensorboard",
    RUN_MARKER,
]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.dictionaries(
        st.sampled_from(NAMES), st.sampled_from(["file", "folder", "marker"]), max_size=4
    )
)
def test_fuzz_a_folder_is_claimed_only_when_it_is_a_runs(tmp_path_factory, contents):
    folder = tmp_path_factory.mktemp("run")
    for name, kind in contents.items():
        if kind == "folder":
            (folder / name).mkdir()
        else:
            (folder / name).write_text(
                json.dumps({"format": "satellites-run", "version": 1})
                if kind == "marker"
                else "user data"
            )
    before = snapshot(folder)
    marked = contents.get(RUN_MARKER) == "marker"
    new = set(contents) <= {"run.lock"}
    special = any(contents.get(name) == "folder" for name in OUTPUT_FILES)
    try:
        claim_run_folder(folder)
    except (RunError, CheckpointError, FileKindError):
        assert special or not (marked or new)
        assert snapshot(folder) == before  # refused: nothing read into a run, nothing written
        return
    assert (marked or new) and not special
    changed = {
        k
        for k in snapshot(folder).keys() | before.keys()
        if snapshot(folder).get(k) != before.get(k)
    }
    assert changed <= {RUN_MARKER}
