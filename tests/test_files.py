"""`satellites_env.files`: outputs are renamed into place and never replace a folder, a special
file or a symbolic link; inputs are regular files read up to a limit, never waited on."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from special_files import char_device, fifo, finishes, unix_socket

from satellites_env.files import FileKindError, check_output, read_input, write_output


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_write_output_creates_and_replaces_keeping_the_mode(tmp_path):
    path = tmp_path / "out.json"
    write_output(path, "one")
    assert path.read_text() == "one"
    os.chmod(path, 0o600)
    write_output(path, b"two")
    assert path.read_bytes() == b"two" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert listing(tmp_path) == ["out.json"]  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    from satellites_env.files import open_output

    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with open_output(path) as file:
            file.write(b"half")
            raise RuntimeError("the writer failed")
    assert path.read_text() == "old" and listing(tmp_path) == ["out.json"]


@pytest.mark.parametrize(
    "make, kind",
    [
        (lambda p: fifo(p), "FIFO"),
        (lambda p: p.mkdir(), "directory"),
        (lambda p: unix_socket(p), "socket"),
    ],
)
def test_special_files_are_never_replaced(tmp_path, make, kind):
    path = tmp_path / "out"
    make(path)
    before = os.lstat(path)
    outcome = finishes(lambda: write_output(path, "data"))
    assert isinstance(outcome.get("error"), FileKindError) and kind in str(outcome["error"])
    after = os.lstat(path)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode)
    assert after.st_ino == before.st_ino and listing(tmp_path) == ["out"]


def test_a_device_node_is_refused(tmp_path):
    with pytest.raises(FileKindError, match="character device"):
        check_output("/dev/null")
    device = char_device(tmp_path / "null")
    with pytest.raises(FileKindError, match="character device"):
        write_output(device, "x")
    assert stat.S_ISCHR(os.lstat(device).st_mode) and listing(tmp_path) == ["null"]


def test_a_symbolic_link_to_a_file_is_refused_and_both_stay(tmp_path):
    target = tmp_path / "target.json"
    target.write_text("precious")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(
        FileKindError,
        match=r"symbolic link .*target.json.*never written "
        "through a link",
    ):
        write_output(link, "new")
    assert target.read_text() == "precious" and link.is_symlink()
    assert os.readlink(link) == str(target)


def test_a_dangling_symbolic_link_is_refused_and_creates_nothing(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "elsewhere" / "new.json")
    with pytest.raises(FileKindError, match="dangling symbolic link"):
        write_output(link, "new")
    assert link.is_symlink() and not (tmp_path / "elsewhere").exists()
    assert listing(tmp_path) == ["link.json"]


def test_folders_above_the_file_may_be_links(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real)
    write_output(tmp_path / "via" / "out.txt", "ok")
    assert (real / "out.txt").read_text() == "ok"


def test_a_special_file_put_there_while_writing_is_not_replaced(tmp_path):
    from satellites_env.files import open_output

    path = tmp_path / "out"
    with pytest.raises(FileKindError, match="FIFO"):
        with open_output(path) as file:
            file.write(b"data")
            fifo(path)
    assert stat.S_ISFIFO(os.lstat(path).st_mode) and listing(tmp_path) == ["out"]


# --------------------------------------------------------------------------- inputs


def test_read_input_reads_a_file_and_follows_a_link(tmp_path):
    path = tmp_path / "in.json"
    path.write_bytes(b"12345")
    (tmp_path / "link").symlink_to(path)
    assert read_input(path, 5) == b"12345" == read_input(tmp_path / "link", 100)


@pytest.mark.parametrize("limit", [0, 1, 4])
def test_read_input_refuses_more_than_its_limit(tmp_path, limit):
    path = tmp_path / "in.json"
    path.write_bytes(b"12345")
    with pytest.raises(FileKindError, match=f"larger than {limit:,} bytes"):
        read_input(path, limit)


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_read_input_refuses_devices_without_reading(path):
    outcome = finishes(lambda: read_input(path, 1 << 20, "record"))
    assert isinstance(outcome.get("error"), FileKindError)
    assert "character device, not a regular file" in str(outcome["error"])


def test_read_input_refuses_a_fifo_without_waiting(tmp_path):
    path = fifo(tmp_path / "pipe")
    outcome = finishes(lambda: read_input(path, 1 << 20))
    assert isinstance(outcome.get("error"), FileKindError) and "FIFO" in str(outcome["error"])


def test_read_input_missing_and_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_input(tmp_path / "missing", 10)
    with pytest.raises(FileKindError, match="directory"):
        read_input(tmp_path, 10)
